"""One guarded GET of an untrusted URL: every hop checked and pinned (`_net`), redirects followed by hand, a size
limit and a time limit over the whole fetch.

Shared by `webFetch` (`_fetch`) and the document index's URL jobs (`cowork.retrieval`), so it takes the
`tools.web` settings rather than a ToolContext, and each caller says which content types it reads (`check`, run on
the response's headers before the body is read) and what happens at the size limit (webFetch keeps the start of a
page; the index refuses a page it cannot have whole). Failures are `ToolError`s whose message names the cause.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import httpx

from cowork.config import WebConfig
from cowork.tools._base import ToolError
from cowork.tools._fsutil import human_size
from cowork.tools._net import (
    Resolver,
    check_web_url,
    http_status_error,
    is_tls_error,
    make_client,
    network_error,
    pinned_request,
    resolve_checked,
    system_resolver,
)

from ._web_fetch import MAX_REDIRECTS  # stated in webFetch's description, which must not load httpx to say it

__all__ = ["Download", "TypeCheck", "download"]

_MAX_ADDRESSES = 4
"""Resolved addresses tried in turn when connecting fails (e.g. ::1 before 127.0.0.1)."""
_REDIRECTS = {301, 302, 303, 307, 308}

TypeCheck = Callable[[str, httpx.Headers, httpx.URL], None]
"""Called with the response's media type (lowercase, no parameters; "" when not stated), its headers and URL before
the body is read: raise `ToolError` to refuse the type."""


@dataclass
class Download:
    url: str
    """The final URL, after redirects."""
    status: int
    mime: str
    """The media type the server stated (lowercase, no parameters), "" when it stated none."""
    charset: str | None
    body: bytes
    truncated: bool
    """The body stopped at the size limit (only when the caller asked to keep a cut body)."""
    redirects: list[str] = field(default_factory=list)
    """The URLs that redirected, in order (the first is the one asked for)."""


async def download(
    address: str,
    web: WebConfig,
    *,
    tool: str,
    accept: str,
    check: TypeCheck,
    max_bytes: int,
    keep_truncated: bool,
    limit_hint: str = "",
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Download:
    """GET `address` under `web`'s rules (private addresses, `fetch_timeout_seconds` for the whole fetch).

    `tool` names the caller in the User-Agent and in refusals; `accept` is the Accept header. A body over
    `max_bytes` is cut there when `keep_truncated`, refused otherwise (`limit_hint` names the setting).

    Raises:
        ToolError: the URL is not allowed, the fetch failed, the type was refused or the body was too large.
    """
    url = check_web_url(address)
    try:
        with anyio.fail_after(web.fetch_timeout_seconds):
            return await _download(
                url, web, tool, accept, check, max_bytes, keep_truncated, limit_hint, resolver or system_resolver,
                transport,
            )  # fmt: skip
    except TimeoutError:
        raise ToolError(
            f"Timed out after {web.fetch_timeout_seconds:g} seconds fetching {url}: the server is slow or not "
            "answering. Try again later, or use another source."
        ) from None


async def _download(
    url: httpx.URL,
    web: WebConfig,
    tool: str,
    accept: str,
    check: TypeCheck,
    max_bytes: int,
    keep_truncated: bool,
    limit_hint: str,
    resolver: Resolver,
    transport: httpx.AsyncBaseTransport | None,
) -> Download:
    redirects: list[str] = []
    current = url
    async with make_client(web.fetch_timeout_seconds, tool=tool, transport=transport) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            response = await _send(client, current, accept, web.allow_private_addresses, resolver, tool)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    redirects.append(str(current))
                    current = check_web_url(str(current.join(location.strip())), what="redirect target")
                    continue
                page = await _read(response, current, check, max_bytes, keep_truncated, limit_hint)
            except httpx.HTTPError as exc:
                raise ToolError(network_error(exc, current)) from None
            except httpx.InvalidURL as exc:
                raise ToolError(f"{current} redirected to an invalid URL: {exc}.") from None
            finally:
                await response.aclose()
            page.redirects = redirects
            return page
    raise ToolError(
        f"Too many redirects: {url} redirected more than {MAX_REDIRECTS} times (the last hop was to {current}). "
        "The site may be looping; try the final URL directly or use another source."
    )


async def _send(
    client: httpx.AsyncClient, url: httpx.URL, accept: str, allow_private: bool, resolver: Resolver, tool: str
) -> httpx.Response:
    addresses = await resolve_checked(url, allow_private=allow_private, resolver=resolver, who=tool)
    failure: httpx.HTTPError | None = None
    for address in addresses[:_MAX_ADDRESSES]:
        request = pinned_request(client, url, address)
        request.headers["Accept"] = accept
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            if is_tls_error(exc):
                raise ToolError(network_error(exc, url)) from None
            failure = exc  # try the next address
        except httpx.HTTPError as exc:
            raise ToolError(network_error(exc, url)) from None
    assert failure is not None
    raise ToolError(network_error(failure, url))


async def _read(
    response: httpx.Response, url: httpx.URL, check: TypeCheck, max_bytes: int, keep_truncated: bool, limit_hint: str
) -> Download:
    status = response.status_code
    if status >= 400:
        raise ToolError(http_status_error(status, response.reason_phrase, url))
    if status >= 300:
        raise ToolError(f"HTTP {status} {response.reason_phrase} from {url} with no Location to follow.")
    mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    check(mime, response.headers, url)
    chunks: list[bytes] = []
    size = 0
    truncated = False
    async for chunk in response.aiter_bytes():
        if size + len(chunk) > max_bytes:
            if not keep_truncated:
                hint = f" ({limit_hint})" if limit_hint else ""
                raise ToolError(f"{url} is larger than {human_size(max_bytes)}, the most that is downloaded{hint}.")
            chunks.append(chunk[: max_bytes - size])
            truncated = True
            break
        chunks.append(chunk)
        size += len(chunk)
    return Download(str(url), status, mime, response.charset_encoding, b"".join(chunks), truncated)
