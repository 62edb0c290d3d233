"""The output limit around every tool: long results and errors are cut, the full text saved where `read` finds it."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel

from cowork.config import ToolsConfig
from cowork.policy import PathPolicy
from cowork.tools import Tool, ToolContext, ToolError, builtin_tools, run_tool

pytestmark = pytest.mark.anyio


def context(workspace: Path, out: Path, call_id: str = "call_7", limit: int = 30_000) -> ToolContext:
    return ToolContext(
        workspace=workspace,
        paths=PathPolicy.build(workspace),
        settings=ToolsConfig(output_limit_chars=limit),
        output_dir=out,
        tool_call_id=call_id,
    )


class _NoParams(BaseModel):
    pass


class _Loud(Tool[_NoParams]):
    name = "loud"
    description = "Fails with a very long message (a test tool)."
    params: ClassVar[type[BaseModel]] = _NoParams

    async def run(self, params: _NoParams, ctx: ToolContext) -> str:
        raise ToolError("x" * 50_000)


async def test_a_long_read_is_cut_and_the_whole_text_saved(tmp_path: Path) -> None:
    workspace, out = tmp_path / "ws", tmp_path / "out"
    workspace.mkdir()
    lines = [f"row {i:05d} of the report" for i in range(2000)]  # about 46,000 characters once numbered
    (workspace / "report.txt").write_text("\n".join(lines), encoding="utf-8")
    read = builtin_tools().get("read")
    assert read is not None
    result = await run_tool(read, {"filePath": "report.txt"}, context(workspace, out))
    saved = out / "read-call_7.txt"
    assert len(result) < 31_000 and "characters cut" in result
    assert f"The full output ({len(saved.read_text(encoding='utf-8')):,} characters) is in {saved}" in result
    assert "row 00000 of the report" in result and "row 01999 of the report" in result  # head and tail kept
    assert "row 01000 of the report" in saved.read_text(encoding="utf-8")


async def test_a_short_result_is_untouched_and_nothing_is_saved(tmp_path: Path) -> None:
    workspace, out = tmp_path / "ws", tmp_path / "out"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello", encoding="utf-8")
    glob = builtin_tools().get("glob")
    assert glob is not None
    assert await run_tool(glob, {"pattern": "*.txt"}, context(workspace, out)) == "a.txt"
    assert not out.exists()


async def test_a_long_error_is_cut_too(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await run_tool(_Loud(), {}, context(tmp_path, tmp_path / "out", limit=1000))
    assert len(str(caught.value)) < 1300 and str(tmp_path / "out" / "loud-call_7.txt") in str(caught.value)


async def test_a_model_chosen_call_id_cannot_leave_the_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "out"
    with pytest.raises(ToolError):
        await run_tool(_Loud(), {}, context(tmp_path, out, call_id="../../../escape", limit=1000))
    assert [p.name for p in out.iterdir()] == ["loud-_escape.txt"]
    assert not (tmp_path / "escape.txt").exists()
