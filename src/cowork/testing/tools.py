"""Tools for tests, loaded into a real server as a plugin (`tools.plugins = ["cowork.testing.tools:register"]`).

Each writes what it does to the file named by `COWORK_TEST_MARKS` (one line per event), so a test can count
executions across server restarts and kills.
"""

from __future__ import annotations

import asyncio
import os
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from cowork.processes import stop_tree
from cowork.tools import Tool, ToolContext, ToolError, ToolRegistry

__all__ = ["register"]


def _mark(line: str) -> None:
    path = os.environ.get("COWORK_TEST_MARKS")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())


class _Labelled(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = ""


class _SleepParams(_Labelled):
    seconds: float = 1.0


class SleepTool(Tool[_SleepParams]):
    name = "sleep"
    description = "Wait for `seconds` (a test tool with side effects)."
    params: ClassVar[type[BaseModel]] = _SleepParams
    side_effects: ClassVar[bool] = True

    async def run(self, params: _SleepParams, ctx: ToolContext) -> str:
        _mark(f"start {params.label}")
        await asyncio.sleep(params.seconds)
        _mark(f"end {params.label}")
        return f"slept {params.seconds}s"


class MarkTool(Tool[_Labelled]):
    name = "mark"
    description = "Record a mark (a test tool with side effects)."
    params: ClassVar[type[BaseModel]] = _Labelled
    side_effects: ClassVar[bool] = True

    async def run(self, params: _Labelled, ctx: ToolContext) -> str:
        _mark(f"mark {params.label}")
        return f"marked {params.label}"


class PeekTool(Tool[_Labelled]):
    name = "peek"
    description = "Look at something (a read-only test tool)."
    params: ClassVar[type[BaseModel]] = _Labelled

    async def run(self, params: _Labelled, ctx: ToolContext) -> str:
        _mark(f"peek {params.label}")
        return f"peeked {params.label}"


class _FailParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = "it failed"


class FailTool(Tool[_FailParams]):
    name = "fail"
    description = "Always fail (a read-only test tool)."
    params: ClassVar[type[BaseModel]] = _FailParams

    async def run(self, params: _FailParams, ctx: ToolContext) -> str:
        raise ToolError(params.message)


class ChildSleepTool(Tool[_SleepParams]):
    name = "child_sleep"
    description = "Run `sleep` as a child process (a test tool); cancelling kills it."
    params: ClassVar[type[BaseModel]] = _SleepParams

    async def run(self, params: _SleepParams, ctx: ToolContext) -> str:
        process = await asyncio.create_subprocess_exec("sleep", str(params.seconds), start_new_session=True)
        _mark(f"pid {process.pid}")
        await ctx.log(f"started pid {process.pid}")  # an event a test can await instead of polling the marks file
        try:
            await process.wait()
        except asyncio.CancelledError:
            await asyncio.to_thread(stop_tree, process.pid, grace=0, pgid=process.pid)
            await process.wait()
            raise
        return "child finished"


def register(registry: ToolRegistry) -> None:
    for tool in (SleepTool(), MarkTool(), PeekTool(), FailTool(), ChildSleepTool()):
        registry.register(tool)
