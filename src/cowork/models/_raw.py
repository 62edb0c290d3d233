"""SDK clients that send pydantic-ai's request bodies as they are, past the SDK's per-request walk of the body.

The OpenAI SDK passes every request body through `async_maybe_transform`, which walks the whole body against its
TypedDicts to apply key aliases and formats. For a chat request that means every message of the history and
every tool schema, again on every step: about 1.3 ms per earlier turn per request, 80 % of the event loop in a
long session, so a turn's cost grew with the session's length. The request types of the two endpoints Cowork
uses (Chat Completions and Responses) declare no aliases and no formats, so the transform returns what it is
given, minus the omitted arguments; `RawAsyncOpenAI` does exactly that and then takes the SDK's own request path
(`_post`: auth, headers, timeouts, errors, streaming and chunk types are the SDK's). `tests/models/test_wire_equivalence.py`
checks the equivalence against the SDK's transform, so an SDK upgrade that adds an alias fails the suite.

Everything else (the mapping of pydantic-ai messages, retries, error mapping) is unchanged; pydantic-ai calls
`client.chat.completions.create(...)` / `client.responses.create(...)` as before and gets these instead.

Streamed chunks take the other direction's slow path: the SDK builds each one with its own `construct_type`, a
Python walk of the chunk's type annotations, about half of the client's CPU for every streamed delta. The SDK's
strict mode validates instead (pydantic-core, many times faster); `RawAsyncOpenAI` validates chunks and stream
events the same way and falls back to the SDK's construction for any chunk that does not validate (a provider's
quirk), so nothing a provider sends is refused that the SDK would have accepted.
"""

from __future__ import annotations

from functools import cache, cached_property
from typing import Any

import httpx2
import pydantic
from openai import AsyncOpenAI, AsyncStream, NotGiven, Omit
from openai._base_client import make_request_options
from openai.resources.chat import AsyncChat, AsyncCompletions
from openai.resources.responses import AsyncResponses
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

__all__ = ["RawAsyncOpenAI", "fast_adapter", "request_body"]

_OPTION_KEYS = ("extra_headers", "extra_query", "extra_body", "timeout")


def request_body(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON body the SDK's transform would make of these `create` arguments: the given ones, as they are."""
    return {key: value for key, value in params.items() if not isinstance(value, NotGiven | Omit)}


def _split(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    options = {key: params.pop(key) for key in _OPTION_KEYS if key in params}
    return request_body(params), options


async def _post_raw(
    resource: AsyncCompletions | AsyncResponses, path: str, cast_to: type, chunk_type: Any, params: dict[str, Any]
) -> Any:
    """What the SDK's `create` does for `path`, minus the transform of the body."""
    body, options = _split(params)
    return await resource._post(
        path,
        body=body,
        options=make_request_options(**options, security={"bearer_auth": True}),
        cast_to=cast_to,
        stream=bool(body.get("stream")),
        stream_cls=AsyncStream[chunk_type],
    )


class _RawCompletions(AsyncCompletions):
    async def create(self, **params: Any) -> Any:
        return await _post_raw(self, "/chat/completions", ChatCompletion, ChatCompletionChunk, params)


class _RawChat(AsyncChat):
    @cached_property
    def completions(self) -> AsyncCompletions:
        return _RawCompletions(self._client)


class _RawResponses(AsyncResponses):
    async def create(self, **params: Any) -> Any:
        return await _post_raw(self, "/responses", Response, ResponseStreamEvent, params)


_FAST_TYPES = (ChatCompletionChunk, ResponseStreamEvent)


def fast_adapter(cast_to: Any) -> pydantic.TypeAdapter[Any] | None:
    """The validator for a streamed chunk type (None for any other type)."""
    return _build_adapter(cast_to) if cast_to in _FAST_TYPES else None


@cache
def _build_adapter(cast_to: Any) -> pydantic.TypeAdapter[Any]:
    # Built on first use: the Responses union takes a while, which a server that speaks only Chat Completions never
    # pays. The Chat one is built with the module (below).
    return pydantic.TypeAdapter(cast_to)


class RawAsyncOpenAI(AsyncOpenAI):
    """`AsyncOpenAI` whose `chat.completions.create` and `responses.create` skip the request transform, and whose
    streamed chunks are validated rather than constructed."""

    def _process_response_data(self, *, data: object, cast_to: Any, response: httpx2.Response) -> Any:
        adapter = fast_adapter(cast_to) if type(data) is dict else None
        if adapter is not None:
            try:
                return adapter.validate_python(data)
            except pydantic.ValidationError:
                pass  # the SDK's lenient construction below
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)

    @cached_property
    def chat(self) -> AsyncChat:
        return _RawChat(self)

    @cached_property
    def responses(self) -> AsyncResponses:
        return _RawResponses(self)


fast_adapter(ChatCompletionChunk)  # built with the module (imported by the warm-up): every OpenAI stream uses it
