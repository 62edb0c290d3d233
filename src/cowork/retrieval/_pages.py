"""Web pages for the index: URLs checked, a page downloaded through webFetch's guarded path, and its type mapped to
the converter that reads it.

A page is untrusted, like anything webFetch reads: it is fetched by `cowork.tools._download` (public addresses only
unless `tools.web.allow_private_addresses`, every redirect hop checked and pinned, `tools.web.fetch_timeout_seconds`
for the whole fetch), whole or not at all up to `memory.max_file_mb`, and only in the types the index reads: HTML
(converted like an `.html` file), PDF, Word, Excel and PowerPoint (like those files), plain text and markdown. A page
is indexed under its final URL, after redirects: the address its text was read from.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from cowork.protocol import MAX_INGEST_URLS, MAX_URL_CHARS, is_url

if TYPE_CHECKING:
    import httpx

    from cowork.config import WebConfig
    from cowork.tools._net import Resolver

    from ._index import IndexOutcome, Kind, RetrievalIndex

__all__ = [
    "MAX_URLS",
    "MAX_URL_CHARS",
    "Page",
    "PageError",
    "check_url",
    "checked_urls",
    "fetch_page",
    "index_url",
    "is_url",
]

MAX_URLS = MAX_INGEST_URLS
"""URLs one `ingest/add` may name."""

SUFFIX_BY_TYPE = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "application/vnd.ms-excel.sheet.macroenabled.12": ".xlsm",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
}
"""The media types the index reads, and the file suffix whose converter reads them."""
_UNSTATED = {"", "application/octet-stream", "binary/octet-stream"}
"""Types that say nothing: the URL's own suffix decides, else the first bytes."""
_ACCEPT = (
    "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/pdf;q=0.9,"
    "application/vnd.openxmlformats-officedocument.*;q=0.8"
)
_SUFFIXES = frozenset(SUFFIX_BY_TYPE.values()) | {".htm", ".markdown"}


class PageError(Exception):
    """A URL that cannot be indexed (refused, unreachable, an HTTP error, a type the index does not read...)."""


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    """The final URL, after redirects: the source's `uri`."""
    suffix: str
    """Which converter reads the body (`.html`, `.pdf`, `.txt`...)."""
    name: str
    """A title for a page that states none: the last part of its path, else its host."""
    charset: str | None
    body: bytes


def check_url(text: str) -> str:
    """The URL as it will be fetched (trimmed, no fragment), or `PageError` saying why it is refused."""
    from cowork.tools import ToolError
    from cowork.tools._net import check_web_url

    if len(text) > MAX_URL_CHARS:
        raise PageError(f"URL too long ({len(text):,} characters; at most {MAX_URL_CHARS:,}).")
    try:
        return str(check_web_url(text))
    except ToolError as error:
        raise PageError(str(error)) from None


def checked_urls(urls: list[str]) -> list[str]:
    """The URLs as they will be fetched, each once (nothing is fetched yet).

    Raises:
        PageError: too many, or one is refused (the message names it and says why).
    """
    if len(urls) > MAX_URLS:
        raise PageError(f"Too many URLs ({len(urls)}); one job takes at most {MAX_URLS}.")
    checked: list[str] = []
    for raw in urls:
        url = check_url(raw)
        if url not in checked:
            checked.append(url)
    return checked


def _name(url: str) -> str:
    parts = urlsplit(url)
    return unquote(posixpath.basename(parts.path.rstrip("/"))) or parts.hostname or url


def _suffix(mime: str, url: str) -> str | None:
    if mime in SUFFIX_BY_TYPE:
        return SUFFIX_BY_TYPE[mime]
    if mime in _UNSTATED:
        suffix = posixpath.splitext(urlsplit(url).path)[1].lower()
        return suffix if suffix in _SUFFIXES else ""  # "": sniffed from the body
    return None


def _sniff(body: bytes) -> str | None:
    head = body[:4096]
    if head.startswith(b"%PDF-"):
        return ".pdf"
    if b"\x00" in head:
        return None
    lowered = head.lower()
    return ".html" if b"<html" in lowered or b"<!doctype html" in lowered else ".txt"


async def fetch_page(
    url: str,
    web: WebConfig,
    *,
    max_bytes: int,
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Page:
    """Download `url` for the index.

    Raises:
        PageError: what went wrong, for the job's record.
    """

    from cowork.tools import ToolError
    from cowork.tools._download import download
    from cowork.tools._fsutil import human_size

    def check(mime: str, headers: httpx.Headers, at: httpx.URL) -> None:
        if _suffix(mime, str(at)) is None:
            length = headers.get("content-length")
            size = human_size(int(length)) if length and length.isdigit() else "size not stated"
            raise ToolError(
                f"{at} is {mime} ({size}), a type the index does not read: only HTML, PDF, Word, Excel, PowerPoint, "
                "markdown and plain text pages are indexed."
            )

    try:
        got = await download(
            url,
            web,
            tool="document indexing",
            accept=_ACCEPT,
            check=check,
            max_bytes=max_bytes,
            keep_truncated=False,
            limit_hint="memory.max_file_mb",
            resolver=resolver,
            transport=transport,
        )
    except ToolError as error:
        raise PageError(str(error)) from None
    suffix = _suffix(got.mime, got.url) or _sniff(got.body)
    if not suffix:
        raise PageError(f"{got.url} sent binary data of no stated type: the index does not read it.")
    return Page(got.url, suffix, _name(got.url), got.charset, got.body)


async def index_url(
    index: RetrievalIndex, url: str, *, web: WebConfig, max_bytes: int, kind: Kind, scope: str
) -> IndexOutcome:
    """Fetch one page and index it under its final URL; a page that cannot be fetched is a failed item, and what
    was indexed from it before stays."""
    import asyncio

    from ._index import IndexOutcome

    try:
        page = await fetch_page(url, web, max_bytes=max_bytes)
    except PageError as error:
        return IndexOutcome(url, "failed", error=str(error))
    return await asyncio.to_thread(
        index.index_page,
        page.body,
        suffix=page.suffix,
        name=page.name,
        charset=page.charset,
        kind=kind,
        scope=scope,
        uri=page.url,
    )
