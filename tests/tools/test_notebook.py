"""The notebookEdit tool on real nbformat notebooks: replace, insert, delete, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from cowork.policy import PathPolicy
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._notebook import NotebookEditTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def notebook(ws: Path) -> Path:
    code = v4.new_code_cell(
        "x = 1\nx", execution_count=3, outputs=[v4.new_output("execute_result", {"text/plain": "1"}, execution_count=3)]
    )
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# Title"), code, v4.new_code_cell("print('end')")])
    path = ws / "analysis.ipynb"
    nbformat.write(nb, str(path))
    return path


async def notebook_edit(ws: Path, **arguments: Any) -> str:
    tool = NotebookEditTool()
    ctx = ToolContext(workspace=ws, paths=PathPolicy.build(ws))
    return await tool.run(tool.parse(arguments), ctx)


def raw(path: Path) -> bytes:
    return path.read_bytes()


def cells(path: Path) -> list[Any]:
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    return list(nb.cells)


@pytest.mark.anyio
async def test_replacing_a_code_cell_clears_its_outputs_and_keeps_its_id(ws: Path, notebook: Path) -> None:
    before = cells(notebook)[1]

    out = await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=1, newSource="x = 2\nx * 10")

    assert out == (
        "Replaced the source of cell 1 (code) in analysis.ipynb and cleared its outputs. The notebook now has 3 cells."
    )
    after = cells(notebook)[1]
    assert (after.source, after.outputs, after.execution_count) == ("x = 2\nx * 10", [], None)
    assert after.id == before.id
    assert raw(notebook).endswith(b"}\n")


@pytest.mark.anyio
async def test_replace_keeps_a_markdown_cell_markdown_unless_told(ws: Path, notebook: Path) -> None:
    await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=0, newSource="# New title")
    assert (cells(notebook)[0].cell_type, cells(notebook)[0].source) == ("markdown", "# New title")

    out = await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=0, newSource="1 + 1", cellType="code")

    assert "(code (was markdown))" in out
    converted = cells(notebook)[0]
    assert (converted.cell_type, converted.outputs, converted.execution_count) == ("code", [], None)


@pytest.mark.anyio
async def test_insert_defaults_to_code_and_can_append(ws: Path, notebook: Path) -> None:
    out = await notebook_edit(
        ws, notebookPath="analysis.ipynb", cellIndex=0, newSource="import pandas", editMode="insert"
    )
    assert out == "Inserted a code cell at index 0 in analysis.ipynb. The notebook now has 4 cells."

    await notebook_edit(
        ws, notebookPath="analysis.ipynb", cellIndex=4, newSource="## Notes", cellType="markdown", editMode="insert"
    )

    got = cells(notebook)
    assert [(c.cell_type, c.source) for c in got] == [
        ("code", "import pandas"),
        ("markdown", "# Title"),
        ("code", "x = 1\nx"),
        ("code", "print('end')"),
        ("markdown", "## Notes"),
    ]
    assert len({c.id for c in got}) == 5


@pytest.mark.anyio
async def test_delete_removes_the_cell(ws: Path, notebook: Path) -> None:
    out = await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=1, editMode="delete")

    assert out == "Deleted cell 1 (code) from analysis.ipynb. The notebook now has 2 cells."
    assert [c.source for c in cells(notebook)] == ["# Title", "print('end')"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "index", "message"),
    [
        ("replace", 3, "cellIndex 3 is out of range: analysis.ipynb has 3 cells, so replace accepts 0-2"),
        ("delete", 7, "cellIndex 7 is out of range: analysis.ipynb has 3 cells, so delete accepts 0-2"),
        ("insert", 4, "cellIndex 4 is out of range: analysis.ipynb has 3 cells, so insert accepts 0-3"),
    ],
)
async def test_out_of_range_index(ws: Path, notebook: Path, mode: str, index: int, message: str) -> None:
    before = raw(notebook)

    with pytest.raises(ToolError, match=message):
        await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=index, newSource="x", editMode=mode)
    assert raw(notebook) == before


@pytest.mark.anyio
async def test_an_empty_notebook_accepts_only_insert(ws: Path) -> None:
    nbformat.write(v4.new_notebook(), str(ws / "empty.ipynb"))

    with pytest.raises(ToolError, match="has no cells; use editMode 'insert'"):
        await notebook_edit(ws, notebookPath="empty.ipynb", cellIndex=0, newSource="x")
    await notebook_edit(ws, notebookPath="empty.ipynb", cellIndex=0, newSource="x", editMode="insert")
    assert [c.source for c in cells(ws / "empty.ipynb")] == ["x"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["replace", "insert"])
async def test_new_source_is_required_for_replace_and_insert(ws: Path, notebook: Path, mode: str) -> None:
    with pytest.raises(ToolError, match=f"newSource is required for editMode '{mode}'"):
        await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=0, editMode=mode)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "no `nbformat` version"),
        ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": "oops"}', "is not a valid notebook"),
        ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "bogus"}]}', "not a valid"),
        ('{"nbformat": 99, "cells": []}', "not a valid notebook"),
    ],
)
async def test_files_that_are_not_notebooks_are_refused(ws: Path, content: str, message: str) -> None:
    (ws / "bad.ipynb").write_text(content, encoding="utf-8")

    with pytest.raises(ToolError, match=message):
        await notebook_edit(ws, notebookPath="bad.ipynb", cellIndex=0, newSource="x")
    assert (ws / "bad.ipynb").read_text(encoding="utf-8") == content


@pytest.mark.anyio
async def test_missing_notebook_directory_and_outside_paths_are_refused(ws: Path, tmp_path: Path) -> None:
    (ws / "folder.ipynb").mkdir()
    nbformat.write(v4.new_notebook(), str(tmp_path / "outside.ipynb"))

    with pytest.raises(ToolError, match="Notebook not found"):
        await notebook_edit(ws, notebookPath="nope.ipynb", cellIndex=0, newSource="x")
    with pytest.raises(ToolError, match="is not a file"):
        await notebook_edit(ws, notebookPath="folder.ipynb", cellIndex=0, newSource="x")
    with pytest.raises(ToolError, match="outside the workspace"):
        await notebook_edit(ws, notebookPath="../outside.ipynb", cellIndex=0, newSource="x", editMode="insert")


@pytest.mark.anyio
async def test_nbformat_4_4_notebooks_get_cells_without_ids(ws: Path) -> None:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 4,
        "metadata": {},
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "a"}],
    }
    (ws / "old.ipynb").write_text(json.dumps(nb), encoding="utf-8")

    await notebook_edit(ws, notebookPath="old.ipynb", cellIndex=1, newSource="b", editMode="insert")
    await notebook_edit(ws, notebookPath="old.ipynb", cellIndex=0, newSource="A")

    saved = json.loads((ws / "old.ipynb").read_text(encoding="utf-8"))
    assert saved["nbformat_minor"] == 4
    assert ["".join(c["source"]) for c in saved["cells"]] == ["A", "b"]
    assert all("id" not in c for c in saved["cells"])


@pytest.mark.anyio
async def test_nbformat_4_5_cells_missing_ids_are_repaired_without_warnings(ws: Path) -> None:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [{"cell_type": "code", "metadata": {}, "source": "1", "outputs": [], "execution_count": None}],
    }
    (ws / "noid.ipynb").write_text(json.dumps(nb), encoding="utf-8")

    await notebook_edit(ws, notebookPath="noid.ipynb", cellIndex=0, newSource="2")

    assert [c.source for c in cells(ws / "noid.ipynb")] == ["2"]


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors(ws: Path, notebook: Path) -> None:
    with pytest.raises(ToolError, match="cellIndex"):
        await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=-1, newSource="x")
    with pytest.raises(ToolError, match="cellType"):
        await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=0, newSource="x", cellType="raw")
    with pytest.raises(ToolError, match="editMode"):
        await notebook_edit(ws, notebookPath="analysis.ipynb", cellIndex=0, newSource="x", editMode="append")


def test_notebook_edit_has_side_effects() -> None:
    assert NotebookEditTool().side_effects is True
