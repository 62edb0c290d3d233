"""Links the server hands out and clients build: the same format on both sides."""

from __future__ import annotations

__all__ = ["web_url"]


def web_url(url: str, token: str | None) -> str:
    """The link that opens the web UI: the server's `http://host:port` plus `/?token=` when there is one.

    The server trades the token for an HttpOnly cookie and redirects to `/`, so the token leaves the address bar.
    """
    return f"{url}/?token={token}" if token else f"{url}/"
