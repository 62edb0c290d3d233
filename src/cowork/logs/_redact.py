"""Taking secrets out of log text: API keys, tokens and credentials keep at most their non-secret prefix.

The log is private (0600) but gets pasted into bug reports and read over shoulders, so what it holds should be
safe to show. Each rule matches a credential's real shape rather than any long word, so ordinary text, ids and
counters (`max_tokens=1024`, `task-force`) pass unchanged; the tests list both the hits and the near misses.

Rules run in order: named values (`token=…`, `"api_key": "…"`, `Authorization: …`) first, so the whole value goes
whatever its shape; then the shapes that are secrets wherever they appear. Redacting is idempotent: the marker
`[redacted]` matches no rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["REDACTED", "redact", "redact_value"]

REDACTED = "[redacted]"

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
"""Characters of an HTTP token68 (RFC 7235), which is what bearer tokens and Basic credentials are made of."""

_SECRET_NAMES = r"[A-Za-z0-9_-]*(?:token|api[_-]?key|apikey|secret|password|passwd)"
"""Names whose value is a secret: `token`, `access_token`, `api_key`, `x-api-key`, `client_secret`, `password`…
Matched as a whole word, so `max_tokens`, `token_count` and `secretary` are not."""

_VALUE = r"(?!\[redacted\])[^\s&\"',;)}\]]+"
"""A value up to the next delimiter of a query string, a dict repr or JSON; never one that is already redacted."""

_SCHEMES = "(?:bearer|basic|digest|token|negotiate|apikey)"
"""HTTP authentication schemes, kept in front of a redacted `Authorization` value: they say what kind it was."""

_NOT_SECRETS = frozenset({"none", "null", "true", "false", "''", '""'})
"""Values kept because they say there is no secret (`token=None`): hiding them would only mislead."""


def _keep_unless_empty(match: re.Match[str]) -> str:
    if match.group("value").lower() in _NOT_SECRETS:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{REDACTED}"


def _keep_scheme(match: re.Match[str]) -> str:
    scheme = match.group("scheme") or ""
    return f"{match.group('name')}{match.group('sep')}{scheme}{REDACTED}"


_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # `token=…`, `api_key=…` (query strings, assignments, key=value logs).
    (
        re.compile(rf"(?i)(?<![A-Za-z0-9_-])(?P<name>{_SECRET_NAMES})(?P<sep>\s*=\s*['\"]?)(?P<value>{_VALUE})"),
        _keep_unless_empty,
    ),
    # `"api_key": "…"`, `'token': '…'` (JSON and dict reprs: the name is quoted, so prose `token: x` is left alone).
    (
        re.compile(rf"(?i)(?P<name>['\"]{_SECRET_NAMES}['\"])(?P<sep>\s*:\s*['\"]?)(?P<value>{_VALUE})"),
        _keep_unless_empty,
    ),
    # `Authorization: Bearer …`, `'authorization': 'Basic …'`, `Proxy-Authorization=…`: the scheme stays.
    (
        re.compile(
            rf"(?i)(?P<name>\b(?:proxy-)?authorization['\"]?)(?P<sep>\s*[:=]\s*['\"]?)"
            rf"(?P<scheme>{_SCHEMES}\s+)?(?!\[redacted\]|{_SCHEMES}\s)[^\s'\",;)}}\]]+"
        ),
        _keep_scheme,
    ),
    # `Bearer …` anywhere else. A token has a digit or is long: "Bearer authentication" is prose, not a token.
    (
        re.compile(rf"(?i)\b(bearer\s+)(?:(?=[A-Za-z._~+/=-]*[0-9]){_TOKEN_CHARS}{{8,}}|{_TOKEN_CHARS}{{20,}})"),
        rf"\1{REDACTED}",
    ),
    # Anthropic (`sk-ant-api03-…`) and OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`) keys.
    (re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{10,}"), f"sk-ant-…{REDACTED}"),
    (
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?P<kind>(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{16,}"),
        rf"sk-\g<kind>…{REDACTED}",
    ),
    # Google API keys: `AIza` and 35 more characters.
    (re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}"), f"AIza…{REDACTED}"),
    # GitHub: classic tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) and fine-grained ones (`github_pat_`).
    (re.compile(r"(?<![A-Za-z0-9_])(?P<kind>gh[pousr]_)[A-Za-z0-9]{30,}"), rf"\g<kind>…{REDACTED}"),
    (re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"), f"github_pat_…{REDACTED}"),
    # Cowork's own server token: "cw_" + secrets.token_urlsafe(32) (cowork.server._auth.load_or_create_token).
    (re.compile(r"(?<![A-Za-z0-9_])cw_[A-Za-z0-9_-]{20,}"), f"cw_…{REDACTED}"),
]


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by `[redacted]` (after at most a non-secret prefix like `sk-`)."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: object) -> object:
    """`value` with the strings in it redacted, through lists, tuples and dicts (for a log record's extra fields)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value
