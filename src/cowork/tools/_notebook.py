"""The `notebookEdit` tool: replace, insert or delete one cell of a Jupyter notebook.

nbformat (about 0.1 s to import, with its schema validator) is imported by the functions that use it, so it loads
with the first notebook edit rather than with the tool registry at start-up.
"""

from __future__ import annotations

import json
import secrets
import stat
from collections.abc import Callable
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import human_size, run_blocking
from cowork.tools._write import shown_path, write_atomically

__all__ = ["NotebookEditParams", "NotebookEditTool"]

MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


class NotebookEditParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebookPath: str = Field(
        min_length=1, description="The .ipynb file to edit: absolute, or relative to the workspace root."
    )
    cellIndex: int = Field(
        ge=0,
        description=(
            "0-based index of the cell. replace/delete: the cell to change. insert: the position the new cell "
            "takes (the number of cells appends at the end)."
        ),
    )
    newSource: str | None = Field(
        default=None, description="The cell's new source text. Required for replace and insert; unused for delete."
    )
    cellType: Literal["code", "markdown"] | None = Field(
        default=None,
        description="The cell type. Default: replace keeps the cell's type, insert creates a code cell.",
    )
    editMode: Literal["replace", "insert", "delete"] = Field(
        default="replace", description="replace (default) a cell's source, insert a new cell, or delete a cell."
    )


class NotebookEditTool(Tool[NotebookEditParams]):
    """Edit one cell of a Jupyter notebook."""

    name = "notebookEdit"
    description = """Edit a Jupyter notebook (.ipynb): replace a cell's source, insert a new cell, or delete a cell.

Use it for every change to a notebook. A notebook is JSON with cells, outputs and metadata; editing it with
edit or write easily breaks that structure, so do not.
- Read the notebook first (read shows its JSON) to find the cell you mean. cellIndex is 0-based: the first
  cell is 0.
- editMode "replace" (default) sets the cell's whole source to newSource. Replacing a code cell clears its
  outputs and execution count, since they no longer match the code. cellType can change the cell's type.
- editMode "insert" adds a new cell at cellIndex, moving later cells down; cellIndex equal to the number of
  cells appends. The new cell is a code cell unless cellType is "markdown".
- editMode "delete" removes the cell at cellIndex; newSource is not needed.
- One cell per call: for several changes, make several calls, and mind that insert and delete shift the
  indexes of the cells after them.
- This tool does not run cells. To execute a notebook, use bash (e.g. `jupyter nbconvert --execute`) if the
  user wants that and it is available.
- The notebook is validated against the nbformat schema and written atomically.
- Errors: a file that is not a valid notebook, an index out of range (the message gives the number of
  cells), or a missing newSource. Fix the argument; do not fall back to editing the JSON by hand.
"""
    params = NotebookEditParams
    path_params = ("notebookPath",)
    side_effects = True
    changes_named_files = True

    async def run(self, params: NotebookEditParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _notebook_edit(params, ctx))


def _load(raw: bytes, shown: str) -> Any:
    import nbformat

    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ToolError(f"{shown} is not a Jupyter notebook: it is not valid JSON ({exc}).") from None
    if not isinstance(data, dict) or "nbformat" not in data:
        raise ToolError(f"{shown} is not a Jupyter notebook: the JSON has no `nbformat` version.")
    cells = data.get("cells")
    if data.get("nbformat") == 4 and isinstance(data.get("nbformat_minor"), int) and data["nbformat_minor"] >= 5:
        # Cell ids are required from nbformat 4.5; older writers left them out. Add them up front, since
        # nbformat would warn about each missing one (and will one day refuse).
        for cell in cells if isinstance(cells, list) else ():
            if isinstance(cell, dict) and "id" not in cell:
                cell["id"] = secrets.token_hex(4)
    try:
        # nbformat's readers, writers and cell factories carry no annotations.
        notebook = cast(Callable[..., Any], nbformat.reads)(json.dumps(data), as_version=4)
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        raise ToolError(f"{shown} is not a valid notebook: {_first_line(exc)}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolError(f"{shown} is not a valid notebook: {_first_line(exc)}") from None
    return notebook


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


def _new_cell(cell_type: str, source: str, notebook: Any, old: Any = None) -> Any:
    from nbformat import v4

    factories = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell, "raw": v4.new_raw_cell}
    metadata = old.get("metadata", {}) if old is not None else {}
    cell = cast(Callable[..., Any], factories.get(cell_type, v4.new_raw_cell))(source, metadata=metadata)
    if old is not None and "attachments" in old and cell_type != "code":
        cell["attachments"] = old["attachments"]
    if notebook.get("nbformat_minor", 0) < 5:
        cell.pop("id", None)  # ids are not allowed before nbformat 4.5
    elif old is not None and "id" in old:
        cell["id"] = old["id"]
    return cell


def _notebook_edit(params: NotebookEditParams, ctx: ToolContext) -> str:
    import nbformat

    path = ctx.write_path(params.notebookPath)
    shown = shown_path(path, ctx)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown} is not a file; give the path of a .ipynb notebook.")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise ToolError(f"{shown} is {human_size(info.st_size)}, too large to edit.")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(
            f"Notebook not found: {params.notebookPath}. Use glob (e.g. '**/*.ipynb') to find it; to create a "
            "new notebook, write a minimal one with write first."
        ) from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from None

    notebook = _load(raw, shown)
    cells = notebook.cells
    count = len(cells)
    mode = params.editMode
    if mode != "delete" and params.newSource is None:
        raise ToolError(f"newSource is required for editMode {mode!r}.")
    limit = count if mode == "insert" else count - 1
    if params.cellIndex > limit:
        if count == 0 and mode != "insert":
            raise ToolError(f"{shown} has no cells; use editMode 'insert' with cellIndex 0 to add one.")
        allowed = f"0-{limit}" if limit > 0 else "0"
        raise ToolError(
            f"cellIndex {params.cellIndex} is out of range: {shown} has {count} cell{'s' if count != 1 else ''}, "
            f"so {mode} accepts {allowed}."
        )

    source = params.newSource or ""
    index = params.cellIndex
    if mode == "delete":
        removed = cells.pop(index)
        result = f"Deleted cell {index} ({removed.get('cell_type', 'unknown')}) from {shown}."
    elif mode == "insert":
        cell_type = params.cellType or "code"
        cells.insert(index, _new_cell(cell_type, source, notebook))
        result = f"Inserted a {cell_type} cell at index {index} in {shown}."
    else:
        old = cells[index]
        cell_type = params.cellType or old.get("cell_type", "code")
        cells[index] = _new_cell(cell_type, source, notebook, old)
        cleared = " and cleared its outputs" if cell_type == "code" and old.get("outputs") else ""
        changed = f" (was {old.get('cell_type')})" if old.get("cell_type") != cell_type else ""
        result = f"Replaced the source of cell {index} ({cell_type}{changed}) in {shown}{cleared}."

    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        raise ToolError(f"The edit would make the notebook invalid: {_first_line(exc)}") from None
    text = cast(Callable[..., str], nbformat.writes)(notebook)
    if not text.endswith("\n"):
        text += "\n"  # as nbformat.write and Jupyter save it
    write_atomically(path, text.encode("utf-8"), shown)
    return f"{result} The notebook now has {len(cells)} cell{'s' if len(cells) != 1 else ''}."
