"""The script model: what the mock answers (`MockResponse`) and what it was asked (`MockRequest`)."""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator


class _Strict(BaseModel):
    # Scripts are hand-written JSON too: a misspelt field must fail loudly rather than be ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


class MockToolCall(_Strict):
    """One scripted tool call; `id` is generated (`call_N` / `toolu_N`) when left out."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class MockUsage(_Strict):
    """Scripted token counts; `input_tokens` includes `cached_tokens`, `output_tokens` includes reasoning."""

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _parts_fit_totals(self) -> MockUsage:
        if self.cached_tokens > self.input_tokens or self.reasoning_tokens > self.output_tokens:
            raise ValueError("cached_tokens must be <= input_tokens and reasoning_tokens <= output_tokens")
        return self


class MockError(_Strict):
    """An HTTP error answered in the provider's error shape, optionally with a `retry-after` header."""

    status: int = Field(ge=400, le=599)
    message: str = "mock error"
    retry_after: float | None = None
    type: str | None = None
    code: str | None = None


class MockResponse(_Strict):
    """One scripted model turn, plus knobs for delays, errors and broken streams.

    A stream stops after `drop_after_chunks` events without finishing the HTTP body (a dropped connection), or after
    `malformed_after_chunks` events with one event whose data is not JSON and then a clean end of the body.
    """

    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[MockToolCall] = Field(default_factory=list)
    usage: MockUsage | None = None
    chunk_size: int | None = Field(default=None, ge=1)
    chunk_delay_s: float = Field(default=0, ge=0)
    delay_s: float = Field(default=0, ge=0)
    error: MockError | None = None
    drop_after_chunks: int | None = Field(default=None, ge=0)
    malformed_after_chunks: int | None = Field(default=None, ge=0)
    hang: bool = False


RequestFormat: TypeAlias = Literal["openai", "anthropic", "gemini", "responses"]


@dataclass(frozen=True, slots=True)
class MockRequest:
    """One request the mock received, with the messages normalised across the wire formats.

    `messages` holds `{role, content}` dicts with role `user`, `assistant` or `tool` (system prompts are in
    `system`); assistant turns may carry `tool_calls` (`[{id, name, arguments}]`), tool turns a `tool_call_id`.
    `format` names the wire format: `openai` (Chat Completions), `anthropic` (Messages), `gemini`
    (generateContent) or `responses` (OpenAI Responses).
    """

    format: RequestFormat
    model: str
    stream: bool
    body: dict[str, Any]
    headers: dict[str, str]
    messages: list[dict[str, Any]]
    tools: list[str]
    system: str | None
    # Only Gemini clients may put the key in the URL (`?key=`); the other formats leave this empty.
    query: dict[str, str] = field(default_factory=dict)

    @property
    def api_key(self) -> str | None:
        """The key the client sent: `Authorization: Bearer`, `x-api-key`, `x-goog-api-key` or `?key=`."""
        auth = self.headers.get("authorization")
        if auth is not None:
            return auth.removeprefix("Bearer ").strip()
        for header in ("x-api-key", "x-goog-api-key"):
            if header in self.headers:
                return self.headers[header]
        return self.query.get("key")

    @property
    def last_tool_results(self) -> list[dict[str, Any]]:
        """The tool results sent since the last assistant turn, as `{tool_call_id, content}` dicts."""
        results: list[dict[str, Any]] = []
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                break
            if message["role"] == "tool":
                results.append({"tool_call_id": message.get("tool_call_id"), "content": message["content"]})
        results.reverse()
        return results

    @property
    def last_user_text(self) -> str | None:
        """The text of the last user message, if any."""
        for message in reversed(self.messages):
            if message["role"] == "user":
                return str(message["content"])
        return None


Script: TypeAlias = Sequence[MockResponse] | Callable[[MockRequest], MockResponse | Awaitable[MockResponse]]
"""Responses handed out one per request, or a callback (sync or async) that answers each request."""


def tool_step(name: str, **arguments: object) -> MockResponse:
    """A response calling one tool: `tool_step("write", filePath="a.txt", content="x")`."""
    return MockResponse(tool_calls=[MockToolCall(name=name, arguments=arguments)])


def bash_step(command: str) -> MockResponse:
    """A response running one shell command through the `bash` tool."""
    return tool_step("bash", command=command, description="test")


def echo_script(request: MockRequest) -> MockResponse:
    """Answer every request with `echo: <last user message>`."""
    return MockResponse(text=f"echo: {request.last_user_text or ''}")


class _Cycle:
    """A callback script that hands out the same responses round and round."""

    def __init__(self, responses: Sequence[MockResponse]) -> None:
        self._responses = list(responses)
        self._next = itertools.cycle(self._responses)
        # The server calls scripts from its own loop, but a script may be shared by several servers.
        self._lock = threading.Lock()

    def __call__(self, request: MockRequest) -> MockResponse:
        with self._lock:
            return next(self._next)

    def __repr__(self) -> str:
        return f"<looping script of {len(self._responses)} responses>"


class _ScriptFile(_Strict):
    responses: list[MockResponse]
    loop: bool = False


_RESPONSES = TypeAdapter(list[MockResponse])


def load_script(path: str | Path) -> Script:
    """Read a JSON script: a list of responses, or `{"responses": [...], "loop": true}` to cycle them forever."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"bad script file {path}: {e}") from e
    try:
        if isinstance(data, list):
            return _RESPONSES.validate_python(data)
        if isinstance(data, dict):
            parsed = _ScriptFile.model_validate(data)
            if parsed.loop:
                if not parsed.responses:
                    raise ValueError("a looping script needs at least one response")
                return _Cycle(parsed.responses)
            return parsed.responses
    except (ValidationError, ValueError) as e:
        raise ValueError(f"bad script file {path}: {e}") from e
    raise ValueError(f'bad script file {path}: expected a JSON list of responses or {{"responses": [...]}}')


_WORDS = re.compile(r"\s*\S+\s*")
_WORDS_PER_CHUNK = 3
_ARGUMENT_CHUNK = 16


def split_text(text: str, chunk_size: int | None) -> list[str]:
    """Cut streamed text into deltas: `chunk_size` characters each, or a few words each by default."""
    if not text:
        return []
    if chunk_size is not None:
        return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)]
    words = _WORDS.findall(text)
    if not words:  # whitespace only
        return [text]
    return ["".join(words[i : i + _WORDS_PER_CHUNK]) for i in range(0, len(words), _WORDS_PER_CHUNK)]


def split_arguments(arguments: str, chunk_size: int | None) -> list[str]:
    """Cut a tool call's JSON arguments into several pieces, as providers stream them."""
    size = chunk_size or _ARGUMENT_CHUNK
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def _tokens(chars: int) -> int:
    return (chars + 3) // 4


def resolve_usage(request: MockRequest, response: MockResponse) -> MockUsage:
    """The scripted usage, or a deterministic estimate of about four characters per token."""
    if response.usage is not None:
        return response.usage
    prompt_chars = len(request.system or "") + sum(len(str(m["content"])) for m in request.messages)
    reasoning_tokens = _tokens(len(response.reasoning or ""))
    answer_chars = len(response.text or "") + sum(
        len(call.name) + len(json.dumps(call.arguments)) for call in response.tool_calls
    )
    return MockUsage(
        input_tokens=max(1, _tokens(prompt_chars)),
        output_tokens=max(1, reasoning_tokens + _tokens(answer_chars)),
        reasoning_tokens=reasoning_tokens,
    )
