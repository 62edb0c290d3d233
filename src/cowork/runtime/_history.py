"""Model-facing history: stored as provider-neutral pydantic-ai messages, repaired so any provider accepts it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pydantic import TypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = ["display_text", "dump_message", "load_message", "repair", "repair_with_positions"]

_ADAPTER: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)

INTERRUPTED_RESULT = "This tool call was interrupted before it returned a result (cancelled or the server stopped)."


def dump_message(message: ModelMessage) -> str:
    return _ADAPTER.dump_json(message).decode()


def load_message(data: str) -> ModelMessage:
    return _ADAPTER.validate_json(data)


def display_text(message: ModelMessage) -> str:
    """The text a person reads: the user's words, or the assistant's answer text."""
    if isinstance(message, ModelRequest):
        return "\n".join(
            p.content for p in message.parts if isinstance(p, UserPromptPart) and isinstance(p.content, str)
        )
    return "".join(p.content for p in message.parts if isinstance(p, TextPart))


def repair(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Give every tool call a result, so the history is valid for every provider.

    A turn cancelled (or a server killed) between a model asking for tools and their results being stored leaves
    calls without results; OpenAI and Anthropic both reject such a history. Each missing result is filled with a
    note saying the call was interrupted, placed right after the response that made the call.
    """
    return repair_with_positions(messages, [-1] * len(messages))[0]


def repair_with_positions(
    messages: Sequence[ModelMessage], positions: Sequence[int]
) -> tuple[list[ModelMessage], list[int]]:
    """`repair`, keeping each message's store position alongside (-1 for an inserted filler)."""
    pending = list(messages)
    out: list[ModelMessage] = []
    out_positions: list[int] = []
    for i, message in enumerate(pending):
        out.append(message)
        out_positions.append(positions[i])
        if not isinstance(message, ModelResponse):
            continue
        calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
        following = pending[i + 1] if i + 1 < len(pending) else None
        answered = (
            {p.tool_call_id for p in following.parts if isinstance(p, ToolReturnPart)}
            if isinstance(following, ModelRequest)
            else set()
        )
        fillers = [
            ToolReturnPart(tool_name=c.tool_name, content=INTERRUPTED_RESULT, tool_call_id=c.tool_call_id)
            for c in calls
            if c.tool_call_id not in answered
        ]
        if not fillers:
            continue
        if isinstance(following, ModelRequest):
            # Results go first: providers expect tool results before any new user text in the same message.
            pending[i + 1] = dataclasses.replace(following, parts=[*fillers, *following.parts])
        else:
            out.append(ModelRequest(parts=fillers))
            out_positions.append(-1)
    return out, out_positions
