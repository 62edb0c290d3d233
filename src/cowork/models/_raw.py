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

A burst of streamed text (a fast model, a proxy that buffers, a stream read after a pause) arrives as hundreds of
Chat Completions chunks in one read from the socket, and each went through the SDK's decoding, validation and
pydantic-ai's per-chunk mapping on its own: about 0.06 ms each, so a 5,000-chunk burst took 0.3 s of CPU after its
last byte. `MergingSSEDecoder` joins the consecutive plain text chunks of one read into one (`merge_text_chunks`):
nothing waits for more bytes (a stream that trickles in is passed on chunk by chunk, as before), and a chunk that is
anything but plain text (a tool call, reasoning, usage, a finish reason, a role change, an unknown field, text that
could hold a thinking tag, whitespace alone) is passed on as it came, so the response pydantic-ai makes is the same.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import cache, cached_property
from typing import Any

import httpx2
import pydantic
import pydantic_core
from openai import AsyncOpenAI, AsyncStream, NotGiven, Omit
from openai._base_client import make_request_options
from openai._streaming import ServerSentEvent, SSEDecoder, _SSELineDecoder
from openai.resources.chat import AsyncChat, AsyncCompletions
from openai.resources.responses import AsyncResponses
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

__all__ = ["MergingSSEDecoder", "RawAsyncOpenAI", "fast_adapter", "merge_text_chunks", "request_body"]

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
    """What the SDK's `create` does for `path`, minus the transform of the body, which is serialised by
    pydantic-core (about 4 times faster than the SDK's `json.dumps` on a long history; the same JSON, compact and
    UTF-8 like the SDK's). With `extra_body` the SDK merges it into the body, so the body goes as a dict."""
    body, options = _split(params)
    payload: dict[str, Any] = {"body": body}
    if options.get("extra_body") is None:
        try:
            payload = {"content": pydantic_core.to_json(body)}
        except (pydantic_core.PydanticSerializationError, ValueError):
            pass  # something only the SDK's encoder knows (a datetime, a model): it serialises the body
    return await resource._post(
        path,
        **payload,
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


class _Parsed(ServerSentEvent):
    """An event whose data was parsed already: `json()` hands out the value, the text is made only if read."""

    def __init__(self, value: dict[str, Any], text: str | None) -> None:
        super().__init__(data=text)
        self._value = value
        self._text = text

    @property
    def data(self) -> str:
        if self._text is None:
            self._text = json.dumps(self._value)
        return self._text

    def json(self) -> Any:
        return self._value


_CHUNK_FIELDS = frozenset(
    ("id", "object", "created", "model", "system_fingerprint", "service_tier", "choices", "usage")
)
_CHOICE_FIELDS = frozenset(("index", "delta", "finish_reason", "logprobs"))
_DELTA_FIELDS = frozenset(("content", "role"))


def _text_chunk(sse: ServerSentEvent) -> dict[str, Any] | None:
    """The parsed chunk if `sse` is a Chat Completions chunk of plain text and nothing else, else None."""
    if sse.event is not None or sse.id is not None or sse.retry is not None:
        return None
    data = sse.data
    if '"content"' not in data or "<" in data or ">" in data:  # `<`/`>`: a thinking tag or special token may start
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if type(value) is not dict or value.keys() - _CHUNK_FIELDS or value.get("usage") is not None:
        return None
    choices = value.get("choices")
    if type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
        return None
    choice = choices[0]
    if choice.keys() - _CHOICE_FIELDS or choice.get("index", 0) != 0:
        return None
    if choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or delta.keys() - _DELTA_FIELDS:
        return None
    content = delta.get("content")
    if type(content) is not str or not content.strip():  # whitespace alone may be dropped or held by the mapping
        return None
    return value


def _joins(first: dict[str, Any], chunk: dict[str, Any]) -> bool:
    """Whether `chunk` may be appended to the text of `first`: the same stream fields, and no role of its own."""
    if chunk["choices"][0]["delta"].get("role") is not None or chunk.keys() != first.keys():
        return False
    return all(chunk[key] == first[key] for key in first if key != "choices")


def merge_text_chunks(events: list[ServerSentEvent]) -> list[ServerSentEvent]:
    """`events` with each run of consecutive plain text chunks of one stream joined into one chunk (the first's
    fields, the run's text); every other event kept as it is, in its place."""
    out: list[ServerSentEvent] = []
    first: dict[str, Any] | None = None
    first_text: str | None = None
    texts: list[str] = []

    def flush() -> None:
        if first is None:
            return
        if len(texts) > 1:
            first["choices"][0]["delta"]["content"] = "".join(texts)
            out.append(_Parsed(first, None))
        else:
            out.append(_Parsed(first, first_text))

    for sse in events:
        chunk = _text_chunk(sse)
        if chunk is not None and first is not None and _joins(first, chunk):
            texts.append(chunk["choices"][0]["delta"]["content"])
            continue
        flush()
        if chunk is None:
            first, first_text, texts = None, None, []
            out.append(sse)
        else:
            first, first_text, texts = chunk, sse.data, [chunk["choices"][0]["delta"]["content"]]
    flush()
    return out


class MergingSSEDecoder(SSEDecoder):
    """The SDK's SSE decoder, joining the plain text chunks that arrived in one read (see `merge_text_chunks`)."""

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        lines = _SSELineDecoder()
        try:
            async for chunk in iterator:
                events = list(self._decode_lines(lines.feed(chunk)))
                for sse in merge_text_chunks(events) if len(events) > 1 else events:
                    yield sse
            for sse in self._decode_lines(lines.finish()):
                yield sse
        finally:
            self._reset()


class RawAsyncOpenAI(AsyncOpenAI):
    """`AsyncOpenAI` whose `chat.completions.create` and `responses.create` skip the request transform, whose
    streamed chunks are validated rather than constructed, and whose plain text chunks that arrive together are
    joined."""

    def _make_sse_decoder(self) -> SSEDecoder:
        return MergingSSEDecoder()

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
