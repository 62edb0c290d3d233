"""Bearer tokens and Origin checks: what keeps a web page in the user's browser from driving the agent."""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "TOKEN_COOKIE",
    "cookie_name",
    "is_loopback",
    "load_or_create_token",
    "origin_allowed",
    "token_from",
    "token_matches",
]

TOKEN_COOKIE = "cowork_token"


def load_or_create_token(path: Path) -> str:
    """Read the token, creating it (mode 0600) on first start."""
    try:
        token = path.read_text(encoding="utf-8").strip()
        # A token starting with "-" reads as an option on a command line (`cowork run --token -x…`): replace it.
        if token and not token.startswith("-"):
            os.chmod(path, 0o600)
            return token
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # The prefix keeps the token from starting with "-" (which token_urlsafe may produce) and makes it recognisable.
    token = "cw_" + secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token


def cookie_name(port: int | None) -> str:
    """The web UI's cookie, named per port: browsers share cookies across the ports of one host."""
    return TOKEN_COOKIE if port is None else f"{TOKEN_COOKIE}_{port}"


def token_from(
    headers: Mapping[str, str], query: Mapping[str, str], cookies: Mapping[str, str], *, cookie: str = TOKEN_COOKIE
) -> str | None:
    """The token a request presents: `Authorization: Bearer`, then `?token=`, then the web UI's cookie."""
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get("token") or cookies.get(cookie) or None


def token_matches(presented: str | None, expected: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), expected.encode())


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, *, server_port: int | None, extra: Iterable[str] = ()) -> bool:
    """No Origin (a non-browser client) is fine; a browser origin must be this server on loopback, or configured."""
    if origin is None:
        return True
    if origin in set(extra):
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    try:
        port = parts.port
    except ValueError:
        return False
    return is_loopback(parts.hostname) and server_port is not None and port == server_port
