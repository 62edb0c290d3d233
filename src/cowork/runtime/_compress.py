"""Context compression: summarise the oldest part of a thread with the model, keep the newest verbatim."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic_ai import direct
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from cowork.models import map_provider_error
from cowork.prompts import template_text
from cowork.protocol import ContextCompressed
from cowork.sessions import Mutation, new_id
from cowork.store import Connection, ContextSummaryRow, repos

from ._history import SUMMARY_PREFIX, summary_message
from ._runner import estimate_tokens, split_point
from ._state import Limits, OperationState

__all__ = ["SUMMARY_PREFIX", "compress", "split_point"]

_PART_CHARS = 2000


def transcript_text(messages: list[ModelMessage]) -> str:
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                content = part.content if isinstance(part.content, str) else repr(part.content)
                lines.append(f"USER: {content}")
            elif isinstance(part, TextPart):
                lines.append(f"ASSISTANT: {part.content}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"TOOL CALL {part.tool_name}({part.args_as_json_str()[:_PART_CHARS]})")
            elif isinstance(part, ToolReturnPart):
                content = part.model_response_str()
                cut = "…" if len(content) > _PART_CHARS else ""
                lines.append(f"TOOL RESULT {part.tool_name}: {content[:_PART_CHARS]}{cut}")
    return "\n\n".join(lines)


async def compress(
    state: OperationState,
    limits: Limits,
    model: Model,
    *,
    settings: ModelSettings,
    keep_tokens: int | None = None,
    focus: str | None = None,
) -> tuple[ContextCompressed, Mutation, RequestUsage] | None:
    """Summarise the oldest messages of the operation's thread; None when there is nothing safe to summarise.

    `keep_tokens` (default: the limits' `keep_recent` share of the window) is how much stays verbatim; `focus` is
    what the user wants the summary to keep in particular (`/compact …`).

    Returns the event, the store change, and what the summarising request used (the caller accounts for it).

    Raises:
        ProtocolError: the model failed while summarising.
    """
    keep = int(limits.keep_recent * limits.context_window) if keep_tokens is None else keep_tokens
    cut = split_point(state.messages, keep)
    if cut is None:
        return None
    old, kept = state.messages[:cut], state.messages[cut:]
    tokens_before = estimate_tokens(state)
    instructions = template_text("summarize")
    if focus:
        instructions += f"\n\nThe user asks the summary to keep in particular: {focus}"
    request = ModelRequest(parts=[UserPromptPart(transcript_text(old))], instructions=instructions)
    try:
        response = await direct.model_request(model, [request], model_settings=settings, instrument=False)
    except (ModelAPIError, UnexpectedModelBehavior) as exc:
        raise map_provider_error(exc) from exc
    summary = "".join(p.content for p in response.parts if isinstance(p, TextPart)).strip()
    if not summary:
        return None
    covered = max((p for p in state.positions[:cut] if p >= 0), default=-1)
    row = ContextSummaryRow(
        id=new_id("sum"),
        thread_id=state.thread_id,
        operation_id=state.id,
        up_to_position=covered,
        summary=summary,
        created_at=datetime.now(UTC),
    )
    state.messages = [summary_message(summary), *kept]
    state.positions = [-1, *state.positions[cut:]]
    state.last_input_tokens = 0
    state.chars_since_usage = 0
    payload = ContextCompressed(
        operation_id=state.id,
        summarized_messages=len(old),
        kept_messages=len(kept),
        tokens_before=tokens_before,
        tokens_after=estimate_tokens(state),
    )

    def mutate(conn: Connection) -> None:
        repos.summaries.insert(conn, row)

    return payload, mutate, response.usage
