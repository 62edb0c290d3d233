"""Links the server hands out and clients build: the same format on both sides."""

from __future__ import annotations

import re

__all__ = ["is_url", "web_url"]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(text: str) -> bool:
    """Whether `text` is a URL (`scheme://…`) rather than a path.

    Clients send such arguments as `ingest/add`'s `urls` (the server refuses all but http and https); a search hit's,
    passage's or citation's `path` that is one is a web page, never a file in the folder to open or preview.
    """
    return _SCHEME.match(text) is not None


def web_url(url: str, token: str | None) -> str:
    """The link that opens the web UI: the server's `http://host:port` plus `/?token=` when there is one.

    The server trades the token for an HttpOnly cookie and redirects to `/`, so the token leaves the address bar.
    """
    return f"{url}/?token={token}" if token else f"{url}/"
