"""`recall`: the folder's past conversations searched by meaning (see `cowork.memory`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ._base import Tool, ToolContext, ToolError
from ._untrusted import untrusted_block

__all__ = ["RecallParams", "RecallTool"]


class RecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=2000,
        description='What was discussed, in plain words ("the decision about the Berlin office lease").',
    )
    limit: int = Field(default=5, ge=1, le=20, description="How many past turns to return.")


class RecallTool(Tool[RecallParams]):
    name = "recall"
    description = """Search the earlier conversations held in this folder by meaning: each result is one
past turn (the user's message and the answer), with its conversation's title and date, best first.

Use it when the user refers to something discussed before ("what did we decide about the lease?", "the
script you wrote for me last week") or when earlier work would help. The current conversation is not
searched (you have it already). What was said then may be out of date: check files before relying on it."""
    params: ClassVar[type[BaseModel]] = RecallParams

    async def run(self, params: RecallParams, ctx: ToolContext) -> str:
        if ctx.recall is None:
            raise ToolError('Recall of past conversations is off here (memory.recall = "off").')
        hits = await ctx.recall(params.query, params.limit)
        if not hits:
            return "No earlier conversation in this folder matches. Ask the user, or try other words."
        lines = [f"{len(hits)} earlier turn(s), best first:", ""]
        for number, hit in enumerate(hits, 1):
            lines.append(f"[{number}] {hit.title}")
            lines.append(untrusted_block(f"conversation {hit.uri}", hit.text))
            lines.append("")
        return "\n".join(lines).rstrip()
