"""Normalised model streaming: one event sequence whatever the provider."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from cowork.backoff import backoff_delay
from cowork.protocol import ProtocolError
from cowork.tools import ToolSpec

from ._direct import request_stream
from ._errors import RETRYABLE, map_provider_error

__all__ = [
    "Finished",
    "ReasoningDelta",
    "RetryNotice",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "stream_model",
    "stream_with_retries",
    "with_instructions",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The complete response: text, tool calls (`ToolCallPart`s) and usage."""

    response: ModelResponse


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | Finished


def with_instructions(messages: Sequence[ModelMessage], instructions: str) -> list[ModelMessage]:
    """Put the system prompt on the newest request, where every adapter reads it.

    The prompt is not stored in history: it carries the date and the model name, which change between turns.
    """
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        message = out[i]
        if isinstance(message, ModelRequest):
            out[i] = dataclasses.replace(message, instructions=instructions)
            break
    return out


def _tool_definitions(tools: Sequence[ToolSpec]) -> list[ToolDefinition]:
    return [
        ToolDefinition(name=t.name, description=t.description, parameters_json_schema=t.parameters_json_schema)
        for t in tools
    ]


async def stream_model(
    model: Model,
    messages: Sequence[ModelMessage],
    tools: Sequence[ToolSpec],
    *,
    settings: ModelSettings | None = None,
) -> AsyncIterator[StreamEvent]:
    """Stream one model request as `TextDelta` / `ReasoningDelta` events, ending with `Finished`.

    Raises:
        ProtocolError: the provider failed; `code` says how (see `map_provider_error`).
    """
    params = ModelRequestParameters(function_tools=_tool_definitions(tools), allow_text_output=True)
    try:
        async with request_stream(model, messages, settings, params) as stream:
            async for event in stream:
                delta = _delta_of(event)
                if delta is not None:
                    yield delta
            response = stream.get()
    except (ModelAPIError, UnexpectedModelBehavior) as exc:
        raise map_provider_error(exc, base_url=getattr(model, "base_url", None)) from exc
    yield Finished(response)


def _delta_of(event: Any) -> TextDelta | ReasoningDelta | None:
    if isinstance(event, PartStartEvent):
        part = event.part
        if isinstance(part, TextPart) and part.content:
            return TextDelta(part.content)
        if isinstance(part, ThinkingPart) and part.content:
            return ReasoningDelta(part.content)
    elif isinstance(event, PartDeltaEvent):
        delta = event.delta
        if isinstance(delta, TextPartDelta) and delta.content_delta:
            return TextDelta(delta.content_delta)
        if isinstance(delta, ThinkingPartDelta) and delta.content_delta:
            return ReasoningDelta(delta.content_delta)
    return None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failed model request is sent again."""

    max_retries: int = 3
    base_seconds: float = 1.0
    max_seconds: float = 30.0
    max_retry_after_seconds: float = 120.0

    def delay(self, failed_attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait after the `failed_attempt`-th attempt failed; None to give up at once.

        The provider's `retry-after` is honoured as given (giving up when it asks for more than
        `max_retry_after_seconds`); otherwise the delay doubles each attempt with jitter, so clients that failed
        together do not retry together.
        """
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after_seconds else None
        return backoff_delay(failed_attempt - 1, base=self.base_seconds, maximum=self.max_seconds, jitter=True)


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A request failed before streaming anything and is about to be tried again."""

    attempt: int
    """The attempt about to be made (2 for the first retry)."""
    max_attempts: int
    delay: float
    error: ProtocolError


async def stream_with_retries(
    model: Model,
    messages: Sequence[ModelMessage],
    tools: Sequence[ToolSpec],
    *,
    settings: ModelSettings | None = None,
    policy: RetryPolicy = RetryPolicy(),
    on_retry: Callable[[RetryNotice], Awaitable[None]] | None = None,
) -> AsyncIterator[StreamEvent]:
    """`stream_model`, sending the request again after a rate limit, a 5xx, a timeout or a connection failure.

    Only a request that has not streamed anything yet is retried: once output reached the user, a failure ends
    the step (the operation stays consistent: nothing of the broken response is recorded).

    Raises:
        ProtocolError: the last failure, when it is not retryable, something was streamed, or retries ran out.
    """
    # Retrying is ours alone (announced, and bounded by `policy`), whatever the caller's settings say: left to
    # itself, Anthropic's SDK would retry a 429 or 5xx twice more inside every attempt, silently.
    one_attempt: ModelSettings = {**(settings or {}), "max_retries": 0}
    attempt = 1
    while True:
        streamed = False
        try:
            async for event in stream_model(model, messages, tools, settings=one_attempt):
                streamed = streamed or not isinstance(event, Finished)
                yield event
            return
        except ProtocolError as exc:
            if streamed or exc.code not in RETRYABLE or attempt > policy.max_retries:
                raise
            value = (exc.details or {}).get("retryAfter")
            retry_after = float(value) if isinstance(value, int | float) else None
            delay = policy.delay(attempt, retry_after)
            if delay is None:
                raise ProtocolError(
                    exc.code,
                    f"{exc.message} The provider asked to wait {retry_after:g} s before retrying, longer than "
                    f"agent.max_retry_after_seconds ({policy.max_retry_after_seconds:g} s).",
                    source=exc.source,
                    details=exc.details,
                ) from exc
            attempt += 1
            if on_retry is not None:
                await on_retry(RetryNotice(attempt, policy.max_retries + 1, delay, exc))
            await asyncio.sleep(delay)
