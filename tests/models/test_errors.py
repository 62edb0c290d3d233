"""Provider failures as stable codes (`map_provider_error`), retry delays (`RetryPolicy`), and `stream_with_retries`
against the mock: what is retried, what is not, and who announces it."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Sequence

import pytest
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import ModelRequest, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel

from cowork.models import (
    RETRYABLE,
    Finished,
    ModelCache,
    ModelTarget,
    RetryNotice,
    RetryPolicy,
    StreamEvent,
    TextDelta,
    map_provider_error,
    stream_with_retries,
)
from cowork.protocol import ErrorCode, ErrorSource, ProtocolError
from cowork.testing.mockllm import MockError, MockLLMServer, MockResponse

pytestmark = pytest.mark.anyio

C = ErrorCode


def _undecodable_stream_event() -> ModelAPIError:
    """What the adapters raise for a stream event that is not JSON: a plain `ModelAPIError` from the decoder's error."""
    try:
        try:
            json.loads('{"choices": [')
        except json.JSONDecodeError as e:
            raise ModelAPIError("mock-model", f"Failed to decode response as JSON: {e}") from e
    except ModelAPIError as exc:
        return exc
    raise AssertionError("unreachable")


def _http(category: type[ModelAPIError] | None, status: int, **kwargs: object) -> ModelHTTPError:
    return ModelHTTPError.for_category(
        category,  # type: ignore[arg-type]
        status_code=status,
        model_name="mock-model",
        body={"error": {"message": "nope"}},
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("exc", "code", "details"),
    [
        # The category pydantic-ai gives decides; the HTTP status is the fallback for uncategorised errors.
        (
            _http(ModelRateLimitError, 429, headers={"retry-after": "7"}),
            C.RATE_LIMITED,
            {"status": 429, "retryAfter": 7},
        ),
        (ModelRateLimitError("mock-model", "slow down", retry_after=2.5), C.RATE_LIMITED, {"retryAfter": 2.5}),
        (ModelRateLimitError("mock-model", "slow down"), C.RATE_LIMITED, None),
        # A quota that ran out is not a rate limit, even on a 429 (Gemini's daily quota): waiting will not help.
        (_http(ModelQuotaExceededError, 429), C.QUOTA_EXCEEDED, {"status": 429}),
        (ModelQuotaExceededError("mock-model", "insufficient_quota"), C.QUOTA_EXCEEDED, None),
        (_http(ModelAuthenticationError, 401), C.AUTH_FAILED, {"status": 401}),
        (ModelAuthenticationError("mock-model", "invalid x-api-key"), C.AUTH_FAILED, None),
        (_http(ModelContextWindowExceededError, 400), C.CONTEXT_TOO_LONG, {"status": 400}),
        (ModelContextWindowExceededError("mock-model", "prompt is too long"), C.CONTEXT_TOO_LONG, None),
        (_http(ModelNotFoundError, 404), C.MODEL_NOT_FOUND, {"status": 404}),
        (ModelNotFoundError("mock-model", "model_not_found"), C.MODEL_NOT_FOUND, None),
        (ModelConnectionError("mock-model", "Connection error.", phase="connect"), C.PROVIDER_UNAVAILABLE, None),
        (ModelTimeoutError("mock-model", "Request timed out.", phase="read"), C.PROVIDER_UNAVAILABLE, None),
        (_http(ModelServerError, 500), C.PROVIDER_UNAVAILABLE, {"status": 500}),
        (ModelServerError("mock-model", "INTERNAL"), C.PROVIDER_UNAVAILABLE, None),
        (
            _http(ModelUnavailableError, 503, headers={"retry-after-ms": "1500"}),
            C.PROVIDER_UNAVAILABLE,
            {"status": 503, "retryAfter": 1.5},
        ),
        (_http(ModelOverloadedError, 529), C.PROVIDER_UNAVAILABLE, {"status": 529}),
        (ModelRequestTimeout("mock-model", 600), C.PROVIDER_UNAVAILABLE, None),
        (ModelRequestTimeout("mock-model", 30, setting="first_event_timeout"), C.PROVIDER_UNAVAILABLE, None),
        (UnexpectedModelBehavior("Received empty model response"), C.BAD_RESPONSE, None),
        (_undecodable_stream_event(), C.BAD_RESPONSE, None),
        # Plain HTTP errors without a category, by status.
        (ModelHTTPError(401, "mock-model"), C.AUTH_FAILED, {"status": 401}),
        (ModelHTTPError(403, "mock-model"), C.AUTH_FAILED, {"status": 403}),
        (ModelHTTPError(402, "mock-model"), C.QUOTA_EXCEEDED, {"status": 402}),
        (
            ModelHTTPError(429, "mock-model", headers={"Retry-After": "12"}),
            C.RATE_LIMITED,
            {"status": 429, "retryAfter": 12},
        ),
        (ModelHTTPError(413, "mock-model"), C.CONTEXT_TOO_LONG, {"status": 413}),
        (ModelHTTPError(404, "mock-model"), C.MODEL_NOT_FOUND, {"status": 404}),
        (ModelHTTPError(408, "mock-model"), C.PROVIDER_UNAVAILABLE, {"status": 408}),
        (ModelHTTPError(502, "mock-model"), C.PROVIDER_UNAVAILABLE, {"status": 502}),
        # What none of that explains stays a generic provider error (and is not retried).
        (_http(ModelRequestRejectedError, 400), C.PROVIDER_ERROR, {"status": 400}),
        (ModelHTTPError(422, "mock-model"), C.PROVIDER_ERROR, {"status": 422}),
        (ModelAPIError("mock-model", "something odd"), C.PROVIDER_ERROR, None),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else None,
)
def test_provider_errors_map_to_stable_codes(
    exc: BaseException, code: ErrorCode, details: dict[str, object] | None
) -> None:
    error = map_provider_error(exc)
    assert (error.code, error.source, error.details) == (code, ErrorSource.PROVIDER, details)
    assert error.message.startswith("The model provider failed: ")


def test_messages_say_what_to_do() -> None:
    hints = {
        C.AUTH_FAILED: (ModelAuthenticationError("m", "bad key"), "/connect"),
        C.RATE_LIMITED: (ModelRateLimitError("m", "slow"), "rate limiting"),
        C.QUOTA_EXCEEDED: (ModelQuotaExceededError("m", "broke"), "top them up"),
        C.CONTEXT_TOO_LONG: (ModelContextWindowExceededError("m", "long"), "new session"),
        C.MODEL_NOT_FOUND: (ModelNotFoundError("m", "gone"), "/model"),
        C.PROVIDER_UNAVAILABLE: (ModelServerError("m", "down"), "Try again shortly"),
        C.BAD_RESPONSE: (UnexpectedModelBehavior("garbled"), "could not be understood"),
    }
    for code, (exc, hint) in hints.items():
        error = map_provider_error(exc)
        assert error.code == code
        assert str(exc).rstrip(".") in error.message and hint in error.message, error.message


def test_only_transient_failures_are_retryable() -> None:
    assert {C.RATE_LIMITED, C.PROVIDER_UNAVAILABLE} == RETRYABLE


# -- RetryPolicy ------------------------------------------------------------------------------------------------------


def test_retry_after_is_honoured_up_to_the_limit() -> None:
    policy = RetryPolicy(base_seconds=1, max_seconds=30, max_retry_after_seconds=120)
    assert policy.delay(1, 7.0) == 7.0
    # As given, even beyond the backoff cap, and whatever the attempt.
    assert policy.delay(5, 90.0) == 90.0
    assert policy.delay(1, 120.0) == 120.0
    assert policy.delay(1, 0.0) == 0.0
    assert policy.delay(1, 120.5) is None
    assert RetryPolicy(max_retry_after_seconds=0).delay(1, 1.0) is None


@pytest.mark.parametrize(("draw", "share"), [(0.0, 0.5), (0.999999, 1.0)])
def test_backoff_doubles_up_to_the_cap_with_jitter(monkeypatch: pytest.MonkeyPatch, draw: float, share: float) -> None:
    monkeypatch.setattr(random, "random", lambda: draw)
    policy = RetryPolicy(base_seconds=1, max_seconds=10)
    delays = [policy.delay(attempt, None) for attempt in range(1, 7)]
    assert delays == pytest.approx([share * b for b in (1, 2, 4, 8, 10, 10)], rel=1e-5)


def test_jitter_stays_within_half_and_all_of_the_backoff() -> None:
    policy = RetryPolicy(base_seconds=0.5, max_seconds=3)
    for attempt, backoff in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (9, 3.0)]:
        delays = [policy.delay(attempt, None) for _ in range(200)]
        assert all(d is not None and backoff / 2 <= d <= backoff for d in delays)
        assert len(set(delays)) > 1  # jittered, so clients that failed together do not retry together


# -- stream_with_retries against the mock -----------------------------------------------------------------------------

HELLO = [ModelRequest.user_text_prompt("hello")]
FAST = RetryPolicy(max_retries=3, base_seconds=0.001, max_seconds=0.01)


async def _model(cache: ModelCache, family: str, base_url: str) -> Model:
    return await cache.get(ModelTarget("mock", "mock-model", family, base_url, "test-key"))  # type: ignore[arg-type]


@pytest.fixture
async def chat_model(mock_llm: MockLLMServer) -> AsyncIterator[Model]:
    cache = ModelCache()
    model = await _model(cache, "openai-chat", mock_llm.openai_base_url)
    assert isinstance(model, OpenAIChatModel)
    yield model
    await cache.aclose()


class Run:
    """One `stream_with_retries` call: the events it yielded, the retries it announced and how it ended."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []
        self.notices: list[RetryNotice] = []
        self.error: ProtocolError | None = None

    async def __call__(self, model: Model, policy: RetryPolicy, messages: Sequence[ModelRequest] = HELLO) -> Run:
        async def on_retry(notice: RetryNotice) -> None:
            self.notices.append(notice)

        try:
            async for event in stream_with_retries(model, messages, [], policy=policy, on_retry=on_retry):
                self.events.append(event)
        except ProtocolError as e:
            self.error = e
        return self

    @property
    def text(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, TextDelta)]


async def test_transient_failures_are_retried_and_announced(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script(
        [
            MockResponse(error=MockError(status=500)),
            MockResponse(error=MockError(status=429)),
            MockResponse(error=MockError(status=503)),
            MockResponse(text="third time lucky"),
        ]
    )
    run = await Run()(chat_model, FAST)
    assert run.error is None
    assert [(n.attempt, n.max_attempts, n.error.code) for n in run.notices] == [
        (2, 4, C.PROVIDER_UNAVAILABLE),
        (3, 4, C.RATE_LIMITED),
        (4, 4, C.PROVIDER_UNAVAILABLE),
    ]
    assert all(0 < n.delay <= 0.01 for n in run.notices)
    assert run.text == ["third time lucky"]
    finished = run.events[-1]
    assert isinstance(finished, Finished)
    assert [p.content for p in finished.response.parts if isinstance(p, TextPart)] == ["third time lucky"]
    assert len(mock_llm.requests) == 4


async def test_retries_run_out(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=502, message="bad gateway"))] * 3)
    run = await Run()(chat_model, RetryPolicy(max_retries=1, base_seconds=0.001))
    assert run.error is not None and run.error.code == C.PROVIDER_UNAVAILABLE
    assert [n.attempt for n in run.notices] == [2]
    assert run.events == []
    assert len(mock_llm.requests) == 2


async def test_no_retries_when_the_policy_says_none(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=500)), MockResponse(text="never")])
    run = await Run()(chat_model, RetryPolicy(max_retries=0))
    assert run.error is not None and run.error.code == C.PROVIDER_UNAVAILABLE
    assert run.notices == [] and len(mock_llm.requests) == 1


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (MockError(status=401), C.AUTH_FAILED),
        (MockError(status=400), C.PROVIDER_ERROR),
        (MockError(status=404), C.MODEL_NOT_FOUND),
    ],
)
async def test_permanent_failures_are_not_retried(
    chat_model: Model, mock_llm: MockLLMServer, error: MockError, code: ErrorCode
) -> None:
    mock_llm.set_script([MockResponse(error=error), MockResponse(text="never")])
    run = await Run()(chat_model, FAST)
    assert run.error is not None and run.error.code == code
    assert run.notices == [] and len(mock_llm.requests) == 1


async def test_nothing_is_retried_once_output_streamed(chat_model: Model, mock_llm: MockLLMServer) -> None:
    # A role chunk, then two text chunks, then the connection drops.
    text = "one two three four five six seven eight nine"
    mock_llm.set_script([MockResponse(text=text, drop_after_chunks=3), MockResponse(text="never")])
    run = await Run()(chat_model, FAST)
    assert run.error is not None and run.error.code == C.PROVIDER_UNAVAILABLE
    assert "".join(run.text) == "one two three four five six "  # (chunks that arrive together may be joined)
    assert not any(isinstance(e, Finished) for e in run.events)
    assert run.notices == [] and len(mock_llm.requests) == 1


async def test_a_drop_before_any_output_is_retried(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(text="lost", drop_after_chunks=1), MockResponse(text="found")])
    run = await Run()(chat_model, FAST)
    assert run.error is None and run.text == ["found"]
    assert [(n.attempt, n.error.code) for n in run.notices] == [(2, C.PROVIDER_UNAVAILABLE)]


async def test_a_zero_retry_after_means_no_wait(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=429, retry_after=0)), MockResponse(text="ok")])
    # The backoff would be 5 s or more: the provider's word wins.
    run = await Run()(chat_model, RetryPolicy(max_retries=1, base_seconds=10))
    assert run.error is None
    assert [(n.delay, n.error.details) for n in run.notices] == [(0.0, {"status": 429, "retryAfter": 0.0})]


async def test_a_long_retry_after_fails_at_once(chat_model: Model, mock_llm: MockLLMServer) -> None:
    mock_llm.set_script([MockResponse(error=MockError(status=429, retry_after=3600)), MockResponse(text="never")])
    run = await Run()(chat_model, RetryPolicy(max_retries=3, max_retry_after_seconds=60))
    assert run.error is not None and run.error.code == C.RATE_LIMITED
    assert run.error.details == {"status": 429, "retryAfter": 3600.0}
    assert "asked to wait 3600 s" in run.error.message and "(60 s)" in run.error.message
    assert run.notices == [] and len(mock_llm.requests) == 1


@pytest.mark.parametrize("family", ["openai-chat", "openai", "anthropic", "google"])
async def test_the_sdk_makes_one_attempt(mock_llm: MockLLMServer, family: str) -> None:
    """Retrying is Cowork's alone (announced, and bounded by its policy): the SDK never retries on its own."""
    base_url = {
        "openai-chat": mock_llm.openai_base_url,
        "openai": mock_llm.openai_base_url,
        "anthropic": mock_llm.anthropic_base_url,
        "google": mock_llm.google_base_url,
    }[family]
    mock_llm.set_script([MockResponse(error=MockError(status=500)), MockResponse(text="a hidden retry")])
    cache = ModelCache()
    try:
        run = await Run()(await _model(cache, family, base_url), RetryPolicy(max_retries=0))
    finally:
        await cache.aclose()
    assert run.error is not None and run.error.code == C.PROVIDER_UNAVAILABLE
    assert len(mock_llm.requests) == 1


def test_an_unreachable_provider_is_named_by_its_url() -> None:
    error = map_provider_error(
        ModelConnectionError("mock-model", "Connection error.", phase="connect"), base_url="http://127.0.0.1:9/v1"
    )
    assert error.code == ErrorCode.PROVIDER_UNAVAILABLE
    assert "Could not reach the model provider at http://127.0.0.1:9/v1" in error.message
    assert error.details == {"baseUrl": "http://127.0.0.1:9/v1"}
    # A server that answered (with a status) is not "unreachable": the generic message stays.
    answered = map_provider_error(ModelHTTPError(502, "mock-model"), base_url="http://127.0.0.1:9/v1")
    assert "Could not reach" not in answered.message
