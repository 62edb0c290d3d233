"""Network plumbing shared by the web tools: URL checks, SSRF-safe resolution, pinned requests, an httpx client.

SSRF. webFetch takes URLs from the model, and the model may have read them in untrusted content, so a URL
must not be a way into the user's machine or network (a local admin page, a router, a cloud metadata
service). Every hop of a fetch, redirects included, is checked before anything connects: the scheme must be
http or https, the URL must carry no credentials, and every address the host resolves to must be public
(not loopback, private, carrier-grade NAT, link-local, site-local, multicast, unspecified or reserved; an
IPv6 address embedding an IPv4 one, as IPv4-mapped, 6to4, Teredo and NAT64 do, is judged by the IPv4
address too). `tools.web.allow_private_addresses` lifts the address rule, never the others.

DNS rebinding. Checking a name and then letting the HTTP client resolve it again would leave a gap: a
hostile DNS server can answer the check with a public address and the connection with 127.0.0.1. The gap is
closed by resolving once and connecting to the checked address itself: the request URL carries the IP
literal, the `Host` header carries the original host (and port), and for https the `sni_hostname` request
extension makes TLS send the original name and verify the certificate against it. Because the connection
must go straight to the checked address, the fetch client ignores proxy environment variables
(`HTTP_PROXY`...): through a proxy, the proxy would resolve the name again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable

import httpx

from cowork import __version__
from cowork.tools._base import ToolError

__all__ = [
    "Resolver",
    "address_problem",
    "check_web_url",
    "http_status_error",
    "is_tls_error",
    "make_client",
    "network_error",
    "pinned_request",
    "resolve_checked",
    "system_resolver",
    "user_agent",
]

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolve (host, port) to IP address strings, in the order to try them."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


def user_agent(tool: str) -> str:
    return f"Cowork/{__version__} (+{tool})"


def make_client(
    timeout: float, *, tool: str, trust_env: bool = False, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """An AsyncClient for the web tools: Cowork's User-Agent, no automatic redirects, `timeout` per operation."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        trust_env=trust_env,
        headers={"User-Agent": user_agent(tool)},
        transport=transport,
    )


def check_web_url(url: str, *, what: str = "URL") -> httpx.URL:
    """Parse `url` and refuse anything but a plain http(s) URL with a host and no credentials.

    Raises:
        ToolError: the URL is malformed or not allowed; the message says why.
    """
    text = url.strip()
    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ToolError(f"Invalid {what} {text!r}: {exc}.") from None
    if not parsed.scheme:
        raise ToolError(f"Invalid {what} {text!r}: it has no scheme. Give a full URL such as https://{text}.")
    if parsed.scheme not in ("http", "https"):
        raise ToolError(f"Refused {what} {text!r}: only http and https URLs can be fetched, not {parsed.scheme}.")
    if parsed.userinfo:
        raise ToolError(f"Refused {what} {text!r}: URLs with credentials (user:password@) are not allowed.")
    if not parsed.host:
        raise ToolError(f"Invalid {what} {text!r}: it has no host name.")
    return parsed.copy_with(fragment=None)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Why `ip` is not a public internet address ("a loopback address"...), or None when it is one."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None and (problem := address_problem(embedded)):
            return f"an IPv6 address wrapping {embedded}, {problem}"
        if ip.is_site_local:
            return "a site-local (private) address"
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT):
        return "a private network address"
    if ip.is_reserved or not ip.is_global:
        return "a reserved, non-public address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The system's answer for (host, port), via the event loop's getaddrinfo, without duplicates."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


async def resolve_checked(
    url: httpx.URL, *, allow_private: bool, resolver: Resolver, who: str = "webFetch"
) -> list[str]:
    """The addresses to connect to for `url`'s host, every one checked (`who` fetches, for the refusal).

    Raises:
        ToolError: the name does not resolve, or (unless `allow_private`) an address is not public.
    """
    host = url.raw_host.decode("ascii")
    literal = _parse_ip(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = await resolver(host, url.port or (443 if url.scheme == "https" else 80))
        except socket.gaierror as exc:
            raise ToolError(f"DNS lookup failed for {url.host}: {exc.strerror or exc}. Check the host name.") from None
        except OSError as exc:
            raise ToolError(f"Could not resolve {url.host}: {exc.strerror or exc}.") from None
        except UnicodeError:  # the idna codec refuses the name (a label longer than 63 characters...)
            raise ToolError(f"Invalid host name {url.host!r}.") from None
        if not addresses:
            raise ToolError(f"DNS lookup for {url.host} returned no addresses.")
    if allow_private:
        return addresses
    for address in addresses:
        ip = _parse_ip(address)
        problem = "not an IP address" if ip is None else address_problem(ip)
        if problem:
            shown = url.host if literal is not None else f"{url.host} (it resolves to {address})"
            raise ToolError(
                f"Refused to fetch {url}: {shown} is {problem}, and {who} only reaches public internet "
                "addresses (loopback, private and link-local ones are blocked to protect the user's machine and "
                "network). Do not retry it; if the user wants such addresses reachable, they can set "
                "tools.web.allow_private_addresses to true."
            )
    return addresses


def pinned_request(client: httpx.AsyncClient, url: httpx.URL, address: str) -> httpx.Request:
    """A GET for `url` that connects to `address` while the server, TLS and the certificate check see the name."""
    host = url.raw_host.decode("ascii")
    if _parse_ip(host) is not None:
        return client.build_request("GET", url)
    extensions = {"sni_hostname": host} if url.scheme == "https" else None
    return client.build_request(
        "GET",
        url.copy_with(host=address.split("%", 1)[0]),
        headers={"Host": url.netloc.decode("ascii")},
        extensions=extensions,
    )


def http_status_error(status: int, reason: str, url: httpx.URL) -> str:
    """What an HTTP error status from a fetched page means for the model, and what to do."""
    head = f"HTTP {status} {reason} from {url}"
    if status in (404, 410):
        return f"{head}: the page does not exist. Check the URL, or find the right one with webSearch."
    if status in (401, 403, 407):
        return f"{head}: the site requires a login or refuses automated access. Use another source."
    if status == 429:
        return f"{head}: the site is rate limiting requests. Wait before retrying, or use another source."
    if status >= 500:
        return f"{head}: the server failed. It may work if retried once later; otherwise use another source."
    return f"{head}: the server refused the request. Check the URL; do not retry it unchanged."


def is_tls_error(exc: BaseException) -> bool:
    """Whether an httpx error comes from TLS (handshake, certificate)."""
    cause: BaseException | None = exc
    for _ in range(8):  # httpx error <- httpcore error <- ssl.SSLError
        if cause is None:
            return False
        if isinstance(cause, ssl.SSLError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def network_error(exc: httpx.HTTPError, url: httpx.URL) -> str:
    """A transport failure while fetching `url`, for the model."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"Timed out fetching {url} ({detail}): the server is slow or not answering. Try again later."
    if isinstance(exc, httpx.ConnectError):
        if is_tls_error(exc):
            return (
                f"TLS error connecting to {url.host}: {detail}. The site's certificate is invalid or untrusted, or "
                "the secure connection failed; do not work around it, use another source."
            )
        return f"Could not connect to {url.host}: {detail}. The site may be down or the URL wrong."
    if isinstance(exc, httpx.DecodingError):
        return f"The response from {url} was corrupt ({detail})."
    return f"Fetching {url} failed: {detail}. The connection broke; try again once, or use another source."
