"""Search backends for `webSearch`: Brave, Tavily and Exa with a key, DuckDuckGo without; one registry."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, ClassVar
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from cowork.tools._base import ToolError
from cowork.tools._untrusted import plain_text

__all__ = ["SEARCH_BACKENDS", "Client", "Results", "SearchBackend", "SearchResult"]

Client = httpx.AsyncClient


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


Results = list[SearchResult]


class SearchBackend(ABC):
    """One search service. `search` raises ToolError for failures the model should see."""

    name: ClassVar[str]
    key_env: ClassVar[str | None] = None
    default_endpoint: ClassVar[str]

    def __init__(self, endpoint: str, api_key: str | None = None) -> None:
        self.endpoint = endpoint
        self.api_key = api_key

    @abstractmethod
    async def search(self, query: str, max_results: int, client: Client, *, site: str | None = None) -> Results: ...

    async def _request(self, client: httpx.AsyncClient, method: str, **kwargs: Any) -> httpx.Response:
        response = await client.request(method, self.endpoint, **kwargs)
        code = response.status_code
        if code < 400:
            return response
        where = f"The {self.name} search API"
        if code in (401, 403) and self.key_env:
            raise ToolError(f"{where} rejected the API key (HTTP {code}): check {self.key_env}. Tell the user.")
        if code == 429:
            raise ToolError(f"{where} is rate limiting requests or the quota is used up (HTTP 429). Retry later.")
        detail = plain_text(response.text, 300)
        raise ToolError(f"{where} answered HTTP {code} {response.reason_phrase}" + (f": {detail}" if detail else "."))

    def _results(self, response: httpx.Response, *path: str) -> list[dict[str, Any]]:
        """The list of result objects at `path` in a JSON response (empty when the path is absent)."""
        try:
            node: Any = response.json()
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
                if node is None:
                    return []
        except ValueError:
            node = None
        if not isinstance(node, list):
            raise ToolError(f"The {self.name} search API sent a response that could not be parsed.")
        return [item for item in node if isinstance(item, dict)]


class BraveBackend(SearchBackend):
    name = "brave"
    key_env = "BRAVE_API_KEY"
    default_endpoint = "https://api.search.brave.com/res/v1/web/search"

    async def search(self, query: str, max_results: int, client: Client, *, site: str | None = None) -> Results:
        q = f"{query} site:{site}" if site else query
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key or ""}
        response = await self._request(client, "GET", params={"q": q, "count": max_results}, headers=headers)
        items = self._results(response, "web", "results")
        return [SearchResult(i.get("title", ""), i.get("url", ""), i.get("description", "")) for i in items]


class TavilyBackend(SearchBackend):
    name = "tavily"
    key_env = "TAVILY_API_KEY"
    default_endpoint = "https://api.tavily.com/search"

    async def search(self, query: str, max_results: int, client: Client, *, site: str | None = None) -> Results:
        body = {"query": query, "max_results": max_results, "search_depth": "basic"}
        body |= {"include_domains": [site]} if site else {}
        headers = {"Authorization": f"Bearer {self.api_key}"}
        items = self._results(await self._request(client, "POST", json=body, headers=headers), "results")
        return [SearchResult(i.get("title", ""), i.get("url", ""), i.get("content", "")) for i in items]


class ExaBackend(SearchBackend):
    name = "exa"
    key_env = "EXA_API_KEY"
    default_endpoint = "https://api.exa.ai/search"

    async def search(self, query: str, max_results: int, client: Client, *, site: str | None = None) -> Results:
        body = {"query": query, "numResults": max_results, "type": "auto", "contents": {"highlights": True}}
        body |= {"includeDomains": [site]} if site else {}
        headers = {"x-api-key": self.api_key or ""}
        items = self._results(await self._request(client, "POST", json=body, headers=headers), "results")
        results = []
        for item in items:
            highlights = item.get("highlights")
            snippet = " … ".join(h for h in highlights if isinstance(h, str)) if isinstance(highlights, list) else ""
            snippet = snippet or item.get("summary") or item.get("text") or ""
            results.append(SearchResult(item.get("title") or "", item.get("url", ""), snippet))
        return results


class _DuckDuckGoParser(HTMLParser):
    """Collects [href, title, snippet] from DuckDuckGo's HTML results (`a.result__a`, `.result__snippet`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[list[str]] = []
        self._field: int | None = None
        self._tag = ""
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._field is not None:
            self._depth += tag == self._tag
            return
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self.results.append([found.get("href") or "", "", ""])
            self._field, self._tag, self._depth = 1, tag, 1
        elif "result__snippet" in classes and self.results and not self.results[-1][2]:
            self._field, self._tag, self._depth = 2, tag, 1

    def handle_endtag(self, tag: str) -> None:
        if self._field is not None and tag == self._tag:
            self._depth -= 1
            if not self._depth:
                self._field = None

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.results[-1][self._field] += data


def _duckduckgo_target(href: str) -> str:
    """The real URL behind a result link (`//duckduckgo.com/l/?uddg=<url>` redirects are decoded)."""
    parts = urlsplit(urljoin("https://duckduckgo.com/", href))
    if parts.hostname and parts.hostname.endswith("duckduckgo.com"):
        target = parse_qs(parts.query).get("uddg") if parts.path.startswith("/l/") else None
        return target[0] if target else ""  # anything else on duckduckgo.com is an ad (y.js) or navigation
    return parts.geturl()


class DuckDuckGoBackend(SearchBackend):
    name = "duckduckgo"
    default_endpoint = "https://html.duckduckgo.com/html/"

    async def search(self, query: str, max_results: int, client: Client, *, site: str | None = None) -> Results:
        q = f"{query} site:{site}" if site else query
        response = await self._request(client, "POST", data={"q": q}, headers={"Referer": self.endpoint})
        parser = _DuckDuckGoParser()
        parser.feed(response.text)
        parser.close()
        results = [SearchResult(title, _duckduckgo_target(href), snippet) for href, title, snippet in parser.results]
        if not results and (response.status_code == 202 or re.search(r"anomaly-modal|challenge-form", response.text)):
            raise ToolError(
                "DuckDuckGo refused the search with a bot check (too many requests). Wait a minute and retry "
                "once; the user can set BRAVE_API_KEY, TAVILY_API_KEY or EXA_API_KEY for a keyed backend."
            )
        return results


SEARCH_BACKENDS: dict[str, type[SearchBackend]] = {
    cls.name: cls for cls in (BraveBackend, TavilyBackend, ExaBackend, DuckDuckGoBackend)
}
"""Backends by name; keyed ones are tried in this order when none is configured."""
