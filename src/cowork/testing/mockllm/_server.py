"""The mock's ASGI app and `MockLLMServer`, which runs it with uvicorn on a background thread.

Over 500 lines because the routes of all five wire formats share one app and its recorded-request state; each
format's encoding already lives in its own module (`_openai`, `_responses`, `_anthropic`, `_gemini`, `_ollama`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.config import LOGGING_CONFIG

from . import _anthropic, _gemini, _ollama, _openai, _responses
from ._ollama import MockOllamaModel
from ._script import MockError, MockRequest, MockResponse, MockUsage, RequestFormat, Script, resolve_usage

DEFAULT_MODELS = ("mock-model", "mock-reasoning-model")
_CREATED_AT = "2025-01-01T00:00:00Z"
_START_TIMEOUT_S = 10.0


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    return auth.removeprefix("Bearer ").strip() if auth is not None else None


def _anthropic_key(request: Request) -> str | None:
    # `AnthropicProvider(auth_token=...)` sends a bearer token instead of `x-api-key`.
    return request.headers.get("x-api-key") or _bearer(request)


def _google_key(request: Request) -> str | None:
    return request.headers.get("x-goog-api-key") or request.query_params.get("key")


@dataclass(frozen=True, slots=True)
class _Wire:
    name: RequestFormat
    parse: Callable[[dict[str, Any], dict[str, str]], MockRequest]
    render_json: Callable[[MockResponse, MockRequest, MockUsage, Iterator[int]], dict[str, Any]]
    render_stream: Callable[[MockResponse, MockRequest, MockUsage, Iterator[int]], list[bytes]]
    error_body: Callable[[MockError], dict[str, Any]]
    api_key: Callable[[Request], str | None]
    malformed: bytes
    """An event whose data is cut off mid-JSON, sent for `MockResponse.malformed_after_chunks`."""


_OPENAI = _Wire(
    "openai",
    _openai.parse_request,
    _openai.render_json,
    _openai.render_stream,
    _openai.error_body,
    _bearer,
    b'data: {"choices": [\n\n',
)
_ANTHROPIC = _Wire(
    "anthropic",
    _anthropic.parse_request,
    _anthropic.render_json,
    _anthropic.render_stream,
    _anthropic.error_body,
    _anthropic_key,
    b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n',
)
_RESPONSES = _Wire(
    "responses",
    _responses.parse_request,
    _responses.render_json,
    _responses.render_stream,
    _openai.error_body,
    _bearer,
    b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": \n\n',
)
_GEMINI = _Wire(
    "gemini",
    # Replaced per request: the model and the mode come from the URL (see `MockLLMServer._generate_content`).
    functools.partial(_gemini.parse_request, model="", stream=False, query={}),
    _gemini.render_json,
    _gemini.render_stream,
    _gemini.error_body,
    _google_key,
    b'data: {"candidates": [\r\n\r\n',
)
_WIRES = (_OPENAI, _ANTHROPIC, _RESPONSES, _GEMINI)
_GEMINI_METHODS = {"generateContent": False, "streamGenerateContent": True}


class _StreamDropped(Exception):
    """Raised mid-stream so uvicorn closes the connection without finishing the chunked body."""


class _QuietDrops(logging.Filter):
    # uvicorn logs every exception that ends a response; a drop the script asked for is not an error.
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return not isinstance(exc, _StreamDropped)


_QUIET_DROPS = _QuietDrops()


def _anthropic_models(names: Sequence[str]) -> dict[str, Any]:
    """Anthropic's `GET /v1/models` body: one page holding every model."""
    data = [{"type": "model", "id": name, "display_name": name, "created_at": _CREATED_AT} for name in names]
    first, last = (names[0], names[-1]) if names else (None, None)
    return {"data": data, "has_more": False, "first_id": first, "last_id": last}


def _error_response(wire: _Wire, error: MockError) -> Response:
    headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else None
    return JSONResponse(wire.error_body(error), status_code=error.status, headers=headers)


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that reports its loop and bound port once it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[asyncio.AbstractEventLoop, int], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            port = self.servers[0].sockets[0].getsockname()[1]
            self._on_started(asyncio.get_running_loop(), port)


_HISTORY_KEYS = ("messages", "input", "contents")
"""Where each wire format keeps a request's history: Chat Completions and Anthropic, Responses, Gemini."""


def _tail(body: dict[str, Any], keep: int) -> dict[str, Any]:
    """`body` with only the last `keep` items of its history (see `MockLLMServer.history_tail`)."""
    for key in _HISTORY_KEYS:
        history = body.get(key)
        if isinstance(history, list) and len(history) > keep:
            body = {**body, key: history[-keep:]}
    return body


class MockLLMServer:
    """A scripted model server speaking five providers' wire formats, run with `with MockLLMServer(script) as m:`.

    Args:
        script: The responses to hand out, one per model request, or a callback answering each request.
        models: The names `GET /v1/models` lists (unless `ollama_models` are given).
        ollama_models: The models Ollama's native API (`/api/tags`, `/api/show`) and `GET /v1/models` report.
        api_keys: When set, model requests and the model listings must carry one of these keys or get a 401.
        record: Keep every request for `requests`. Benchmarks that send thousands of large requests turn it off, so
            the mock's memory (and its garbage collector's pauses) stay flat over a long run.
        host: The interface to bind.
        port: The port to bind; 0 picks a free one, found in `port` once started.
        on_stream_sent: Called on the server's loop once a streamed response's last byte went to the socket
            (benchmarks time how long the client takes from there).
        keep_alive_s: How long an idle keep-alive connection stays open. uvicorn's default of 5 s is far shorter than
            real providers'; a client that reuses a connection just as it closes gets a connection error.
        history_tail: When set, a request's history is read only from its last this many messages (the system
            prompt and earlier turns are dropped before parsing). For benchmarks whose script looks only at the
            current turn: the mock's own time per request then stays flat as a session grows, instead of being
            part of what the benchmark sees grow. `requests` hold the shortened history.
    """

    def __init__(
        self,
        script: Script = (),
        *,
        models: Sequence[str] = DEFAULT_MODELS,
        ollama_models: Sequence[MockOllamaModel] = (),
        api_keys: Collection[str] | None = None,
        record: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        on_stream_sent: Callable[[], None] | None = None,
        keep_alive_s: int = 5,
        history_tail: int | None = None,
    ) -> None:
        if history_tail is not None and history_tail < 1:
            raise ValueError("history_tail must be at least 1")
        self.host = host
        self.history_tail = history_tail
        self.on_stream_sent = on_stream_sent
        self.keep_alive_s = keep_alive_s
        self.port = port
        self._bind_port = port
        self.models = list(models)
        self.record = record
        self._lock = threading.Lock()
        self._requests: list[MockRequest] = []
        self._script: Script = ()
        self._cursor = 0
        self._ids: dict[str, Iterator[int]] = {}
        # Both are replaced whole, never mutated, so the server's loop reads them without the lock.
        self._ollama_models: tuple[MockOllamaModel, ...] = ()
        self._api_keys: frozenset[str] | None = None
        self.set_script(script)
        self.set_ollama_models(ollama_models)
        self.set_api_keys(api_keys)
        self.reset()
        self._uvicorn: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1beta/models", self._gemini_models, methods=["GET"]),
                Route("/v1beta/models/{target}", self._generate_content, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/api/tags", self._ollama_tags, methods=["GET"]),
                Route("/api/show", self._ollama_show, methods=["POST"]),
                Route("/api/version", self._ollama_version, methods=["GET"]),
                Route("/healthz", self._healthz, methods=["GET"]),
            ]
        )

    # --- script and records -------------------------------------------------------------------------------------

    def set_script(self, script: Script) -> None:
        """Replace the script; a list starts again from its first response."""
        if isinstance(script, MockResponse):
            raise TypeError("a script is a list of MockResponse (or a callback), not a single MockResponse")
        with self._lock:
            self._script = script if callable(script) else list(script)
            self._cursor = 0

    def set_ollama_models(self, models: Sequence[MockOllamaModel]) -> None:
        """Replace the models Ollama's native API reports; `GET /v1/models` lists them instead of `models` if any."""
        self._ollama_models = tuple(models)

    def set_api_keys(self, keys: Collection[str] | None) -> None:
        """Accept only these API keys from now on, or any key (and none) with `None`."""
        if isinstance(keys, str):
            raise TypeError("api_keys is a collection of keys, not a single key")
        self._api_keys = None if keys is None else frozenset(keys)

    @property
    def ollama_models(self) -> tuple[MockOllamaModel, ...]:
        """The models Ollama's native API reports."""
        return self._ollama_models

    @property
    def api_keys(self) -> frozenset[str] | None:
        """The accepted API keys, or `None` when any key will do."""
        return self._api_keys

    def reset(self) -> None:
        """Forget recorded requests, rewind a list script and restart generated tool call ids."""
        with self._lock:
            self._requests.clear()
            self._cursor = 0
            self._ids = {wire.name: itertools.count(1) for wire in _WIRES}

    @property
    def requests(self) -> list[MockRequest]:
        """A snapshot of every request received so far, oldest first (none when `record` is off)."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int | None:
        """How many scripted responses are left, or `None` for a callback script."""
        with self._lock:
            return None if callable(self._script) else len(self._script) - self._cursor

    def _key_error(self, key: str | None) -> MockError | None:
        """The 401 for a request carrying `key`, or `None` when the key is accepted."""
        accepted = self._api_keys
        if accepted is None or (key is not None and key in accepted):
            return None
        return MockError(status=401, message="mock: missing API key" if not key else "mock: incorrect API key provided")

    async def _next_response(self, request: MockRequest) -> MockResponse:
        with self._lock:
            if self.record:
                self._requests.append(request)
            script = self._script
            if not callable(script):
                if self._cursor >= len(script):
                    message = f"mock script exhausted: all {len(script)} scripted responses were used"
                    return MockResponse(error=MockError(status=500, message=message))
                self._cursor += 1
                return script[self._cursor - 1]
        try:
            result = script(request)
            response = await result if inspect.isawaitable(result) else result
            if not isinstance(response, MockResponse):
                raise TypeError(f"expected a MockResponse, got {type(response).__name__}")
        except Exception as e:
            return MockResponse(error=MockError(status=500, message=f"mock script callback failed: {e!r}"))
        return response

    # --- endpoints ----------------------------------------------------------------------------------------------

    async def _chat_completions(self, request: Request) -> Response:
        return await self._answer(request, _OPENAI)

    async def _messages(self, request: Request) -> Response:
        return await self._answer(request, _ANTHROPIC)

    async def _responses(self, request: Request) -> Response:
        return await self._answer(request, _RESPONSES)

    async def _generate_content(self, request: Request) -> Response:
        model, _, method = request.path_params["target"].rpartition(":")
        stream = _GEMINI_METHODS.get(method)
        if not model or stream is None:
            message = f"mock: no such method: {request.url.path}"
            return _error_response(_GEMINI, MockError(status=404, message=message))
        query = dict(request.query_params)
        parse = functools.partial(_gemini.parse_request, model=model, stream=stream, query=query)
        return await self._answer(request, replace(_GEMINI, parse=parse))

    async def _models(self, request: Request) -> Response:
        # One path, two providers: Anthropic's SDK always sends `anthropic-version`, OpenAI's never does.
        anthropic = "anthropic-version" in request.headers
        wire = _ANTHROPIC if anthropic else _OPENAI
        if (error := self._key_error(wire.api_key(request))) is not None:
            return _error_response(wire, error)
        ollama = self._ollama_models
        if anthropic:
            return JSONResponse(_anthropic_models([model.tagged_name for model in ollama] or self.models))
        created = int(time.time())
        data = [{"id": name, "object": "model", "created": created, "owned_by": "mockllm"} for name in self.models]
        if ollama:
            # Ollama's OpenAI-compatible list first; the mock answers any model name, so its own are served too.
            body = _ollama.openai_models_body(ollama)
            return JSONResponse({**body, "data": [*body["data"], *data]})
        return JSONResponse({"object": "list", "data": data})

    async def _gemini_models(self, request: Request) -> Response:
        if (error := self._key_error(_GEMINI.api_key(request))) is not None:
            return _error_response(_GEMINI, error)
        return JSONResponse(_gemini.models_body([model.tagged_name for model in self._ollama_models] or self.models))

    async def _ollama_tags(self, request: Request) -> Response:
        return JSONResponse(_ollama.tags_body(self._ollama_models))

    async def _ollama_show(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError) as e:
            return JSONResponse({"error": f"invalid request body: {e}"}, status_code=400)
        # `name` is the field's old spelling, which Ollama still reads.
        name = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
        if not isinstance(name, str) or not name:
            return JSONResponse({"error": "model is required"}, status_code=400)
        model = _ollama.find(self._ollama_models, name)
        if model is None:
            return JSONResponse({"error": f"model '{name}' not found"}, status_code=404)
        return JSONResponse(_ollama.show_body(model))

    async def _ollama_version(self, request: Request) -> Response:
        return JSONResponse({"version": _ollama.OLLAMA_VERSION})

    async def _healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok")

    async def _answer(self, http_request: Request, wire: _Wire) -> Response:
        key_error = self._key_error(wire.api_key(http_request))
        try:
            body = json.loads(await http_request.body())
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
            if self.history_tail is not None:
                body = _tail(body, self.history_tail)
            request = wire.parse(body, dict(http_request.headers))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            # A real server checks the key before it reads the body.
            error = key_error or MockError(status=400, message=f"mock could not read the request: {e}")
            return _error_response(wire, error)
        if key_error is not None:
            # Recorded so a test can see the request arrived, but it uses up no scripted response.
            with self._lock:
                if self.record:
                    self._requests.append(request)
            return _error_response(wire, key_error)
        response = await self._next_response(request)
        if response.delay_s:
            await self._pause(response.delay_s)
        if response.hang:
            await self._hang(http_request)
            return _error_response(wire, MockError(status=503, message="mock server is shutting down"))
        if response.error is not None:
            return _error_response(wire, response.error)
        usage = resolve_usage(request, response)
        ids = self._ids[wire.name]
        if not request.stream:
            return JSONResponse(wire.render_json(response, request, usage, ids))
        events = wire.render_stream(response, request, usage, ids)
        if response.malformed_after_chunks is not None:
            events = [*events[: response.malformed_after_chunks], wire.malformed]
        return StreamingResponse(
            self._stream(events, response),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def _stream(self, events: list[bytes], response: MockResponse) -> AsyncIterator[bytes]:
        drop = response.drop_after_chunks
        sent = events if drop is None else events[:drop]
        if response.chunk_delay_s:
            for index, event in enumerate(sent):
                if index:
                    await self._pause(response.chunk_delay_s)
                yield event
        elif sent:
            # Without delays one write is as good as many to the client's SSE parser, and much cheaper.
            yield b"".join(sent)
        if drop is not None and drop < len(events):
            raise _StreamDropped
        if self.on_stream_sent is not None:
            self.on_stream_sent()

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake early when the server is stopping so shutdown never waits on a script."""
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)

    async def _hang(self, http_request: Request) -> None:
        """Wait until the client disconnects or the server stops."""
        assert self._closing is not None

        async def disconnected() -> None:
            while (await http_request.receive())["type"] != "http.disconnect":
                pass

        waiters = {asyncio.ensure_future(disconnected()), asyncio.ensure_future(self._closing.wait())}
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    # --- running ------------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's root URL, such as `http://127.0.0.1:PORT`."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The `base_url` for OpenAI clients (the URL plus `/v1`)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The `base_url` for Anthropic clients, which add `/v1/messages` themselves."""
        return self.url

    @property
    def google_base_url(self) -> str:
        """The `base_url` for `GoogleProvider` / google-genai, which add `/v1beta/models/...` themselves."""
        return self.url

    @property
    def ollama_base_url(self) -> str:
        """The root URL of Ollama's native API (`/api/...`); its OpenAI-compatible API is at `openai_base_url`."""
        return self.url

    def _config(self, *, log_config: dict[str, Any] | None) -> uvicorn.Config:
        return uvicorn.Config(
            self.app,
            host=self.host,
            port=self._bind_port,
            log_level="warning",
            log_config=log_config,
            access_log=False,
            timeout_keep_alive=self.keep_alive_s,
            lifespan="off",
            ws="none",
            timeout_graceful_shutdown=2,
        )

    def _started(self, loop: asyncio.AbstractEventLoop, port: int) -> None:
        self._loop = loop
        self._closing = asyncio.Event()
        self.port = port

    def run(self, on_started: Callable[[str], None] | None = None) -> None:
        """Serve in the current thread until SIGINT/SIGTERM, calling `on_started(url)` once it accepts connections."""

        def started(loop: asyncio.AbstractEventLoop, port: int) -> None:
            self._started(loop, port)
            if on_started is not None:
                on_started(self.url)

        _install_log_filter()
        _Uvicorn(self._config(log_config=LOGGING_CONFIG), started).run()

    def start(self) -> Self:
        """Start serving on a background thread; returns once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("MockLLMServer is already running")
        _install_log_filter()
        ready = threading.Event()

        def started(loop: asyncio.AbstractEventLoop, port: int) -> None:
            self._started(loop, port)
            ready.set()

        self._uvicorn = _Uvicorn(self._config(log_config=None), started)
        self._thread = threading.Thread(target=self._uvicorn.run, name=f"mockllm-{id(self):x}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not ready.wait(0.01):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mockllm failed to start on {self.host}:{self._bind_port}")
        return self

    def stop(self) -> None:
        """Stop the server and wait for its thread; hanging and delayed responses are cut short."""
        thread, server, loop, closing = self._thread, self._uvicorn, self._loop, self._closing
        if thread is None or server is None:
            return
        server.should_exit = True
        if loop is not None and closing is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(closing.set)
        thread.join()
        self._thread = self._uvicorn = self._loop = self._closing = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if _QUIET_DROPS not in logger.filters:
        logger.addFilter(_QUIET_DROPS)
