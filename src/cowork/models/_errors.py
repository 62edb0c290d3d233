"""Provider failures as stable error codes, and which of them are worth retrying."""

from __future__ import annotations

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)

from cowork.protocol import ErrorCode, ErrorSource, ProtocolError

__all__ = ["RETRYABLE", "map_provider_error", "retry_after_of"]

RETRYABLE: frozenset[ErrorCode] = frozenset({ErrorCode.RATE_LIMITED, ErrorCode.PROVIDER_UNAVAILABLE})
"""Failures that may pass if the same request is sent again a little later."""

_HINTS: dict[ErrorCode, str] = {
    ErrorCode.AUTH_FAILED: "Check the API key: connect the provider again (/connect in the REPL, Models → Connect in the web UI), or fix "
    "the environment variable.",
    ErrorCode.RATE_LIMITED: "The provider is rate limiting; wait a moment and try again.",
    ErrorCode.QUOTA_EXCEEDED: "The account's quota or credits are used up; top them up or switch provider.",
    ErrorCode.CONTEXT_TOO_LONG: "The conversation is too long for this model; start a new session or switch to a "
    "model with a larger context window.",
    ErrorCode.MODEL_NOT_FOUND: "The provider does not know this model; pick another with /model.",
    ErrorCode.PROVIDER_UNAVAILABLE: "Is the server reachable? Try again shortly.",
    ErrorCode.BAD_RESPONSE: "The provider sent something that could not be understood; try again.",
}


def _code_of(exc: BaseException) -> ErrorCode:
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    if isinstance(exc, ModelAuthenticationError) or status in (401, 403):
        return ErrorCode.AUTH_FAILED
    if isinstance(exc, ModelQuotaExceededError) or status == 402:
        return ErrorCode.QUOTA_EXCEEDED
    if isinstance(exc, ModelRateLimitError) or status == 429:
        return ErrorCode.RATE_LIMITED
    if isinstance(exc, ModelContextWindowExceededError) or status == 413:
        return ErrorCode.CONTEXT_TOO_LONG
    if isinstance(exc, ModelNotFoundError) or status == 404:
        return ErrorCode.MODEL_NOT_FOUND
    if (
        isinstance(exc, ModelConnectionError | ModelUnavailableError | ModelServerError | ModelRequestTimeout)
        or (status is not None and status >= 500)
        or status == 408
    ):
        return ErrorCode.PROVIDER_UNAVAILABLE
    if isinstance(exc, UnexpectedModelBehavior) or _undecodable(exc):
        return ErrorCode.BAD_RESPONSE
    return ErrorCode.PROVIDER_ERROR


def _undecodable(exc: BaseException) -> bool:
    """A response (or stream event) that could not be parsed: the adapters raise a plain `ModelAPIError` from the
    JSON decoder's error (or google-genai's `UnknownApiResponseError`)."""
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, ValueError) or type(cause).__name__ == "UnknownApiResponseError":
            return True
        cause = cause.__cause__
    return False


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait (`retry-after`), if it said."""
    value = exc.retry_after if isinstance(exc, ModelAPIError) else None
    return float(value) if value is not None and value >= 0 else None


def map_provider_error(exc: BaseException, *, base_url: str | None = None) -> ProtocolError:
    """Turn a provider failure into a stable error code with a message a person can act on.

    `base_url`: where the request went; named when the provider could not be reached, so the person can tell a
    wrong URL from a server that is down (and the model provider from the Cowork server).
    """
    code = _code_of(exc)
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    detail = str(exc).rstrip(".")
    hint = _HINTS.get(code, "")
    details: dict[str, object] = {}
    if status is not None:
        details["status"] = status
    retry_after = retry_after_of(exc)
    if retry_after is not None:
        details["retryAfter"] = retry_after
    if code == ErrorCode.PROVIDER_UNAVAILABLE and base_url and status is None:
        details["baseUrl"] = base_url
        return ProtocolError(
            code,
            f"Could not reach the model provider at {base_url} ({detail}). Is that server running, and is the URL "
            "right? Try again shortly.",
            source=ErrorSource.PROVIDER,
            details=details,
        )
    return ProtocolError(
        code,
        f"The model provider failed: {detail}. {hint}".strip(),
        source=ErrorSource.PROVIDER,
        details=details or None,
    )
