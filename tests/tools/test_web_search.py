"""The webSearch tool: each backend against a local fake of its API, backend selection, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cowork.config import ToolsConfig, WebConfig
from cowork.testing.http import LocalServer, Reply, Seen
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._search_backends import SEARCH_BACKENDS, BraveBackend, DuckDuckGoBackend, ExaBackend, TavilyBackend
from cowork.tools._web_search import WebSearchTool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def context(tmp_path: Path, server: LocalServer, backend: str | None = None, **web: Any) -> ToolContext:
    endpoints = {name: server.url(f"/{name}") for name in SEARCH_BACKENDS}
    config = WebConfig(search_backend=backend, search_endpoints=endpoints, **web)
    return ToolContext(workspace=tmp_path, settings=ToolsConfig(web=config))


async def search(tool: WebSearchTool, ctx: ToolContext, **arguments: Any) -> str:
    return await tool.run(tool.parse(arguments), ctx)


def api_json(data: Any, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data), "application/json")


def unauthorized(seen: Seen) -> Reply:
    return api_json({"error": "invalid api key"}, 401)


# --- canned responses in each API's shape ---------------------------------------------------------------------------

BRAVE = {
    "type": "search",
    "query": {"original": "python json", "more_results_available": True},
    "web": {
        "type": "search",
        "results": [
            {
                "type": "search_result",
                "title": "json — JSON encoder and decoder — <strong>Python</strong> 3 documentation",
                "url": "https://docs.python.org/3/library/json.html",
                "description": "Source code: Lib/json/__init__.py. <strong>JSON</strong> (JavaScript Object Notation) &amp; more",
                "page_age": "2025-01-02T00:00:00",
                "meta_url": {"scheme": "https", "netloc": "docs.python.org", "hostname": "docs.python.org"},
            },
            {
                "type": "search_result",
                "title": "Working With JSON Data in Python",
                "url": "https://realpython.com/python-json/",
                "description": "In this tutorial you'll learn how to read and write JSON-encoded data.",
            },
        ],
    },
}

TAVILY = {
    "query": "python json",
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "json — JSON encoder and decoder",
            "url": "https://docs.python.org/3/library/json.html",
            "content": "json exposes an API familiar to users of the standard library marshal and pickle modules.",
            "score": 0.91,
            "raw_content": None,
        }
    ],
    "response_time": "1.02",
}

EXA = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://docs.python.org/3/library/json.html",
            "title": "json — JSON encoder and decoder",
            "url": "https://docs.python.org/3/library/json.html",
            "publishedDate": "2024-01-01T00:00:00.000Z",
            "author": None,
            "highlights": ["Encoding basic Python object hierarchies.", "Decoding JSON."],
            "highlightScores": [0.5, 0.4],
        },
        {"id": "x", "title": None, "url": "https://example.org/no-title", "text": "Only text here."},
    ],
    "costDollars": {"total": 0.005},
}

DUCKDUCKGO = """<!DOCTYPE html>
<html><head><title>python json at DuckDuckGo</title></head><body>
<div class="serp__results"><div id="links" class="results">
<div class="result results_links results_links_deep result--ad ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a"
      href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bing&amp;u3=x">Buy JSON tools now</a></h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?u3=x">Sponsored result</a>
  </div>
</div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a"
        href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.python.org%2F3%2Flibrary%2Fjson.html%3Fhighlight%3Dload%26x%3D1&amp;rut=abc123">json &mdash; JSON encoder and decoder &mdash; <b>Python</b> 3.13 documentation</a>
    </h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.python.org">docs.python.org/3/library/json.html</a>
    </div></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.python.org"><b>JSON</b> (JavaScript Object Notation), specified by <b>RFC</b> 7159, is a lightweight data interchange format.</a>
    <div class="clear"></div>
  </div>
</div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://realpython.com/python-json/">Working With JSON Data in Python &ndash; Real Python</a></h2>
    <div class="result__snippet">Learn how to <b>read</b> and <b>write</b> JSON.</div>
  </div>
</div>
</div></div>
</body></html>"""

NO_RESULTS_HTML = '<html><body><div class="no-results">No results.</div></body></html>'
CHALLENGE_HTML = '<html><body><form id="challenge-form"><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></form></body></html>'


# --- backends -------------------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_brave(tmp_path: Path) -> None:
    def brave(seen: Seen) -> Reply:
        if seen.headers.get("x-subscription-token") != "brave-key":
            return unauthorized(seen)
        assert seen.method == "GET" and seen.headers["accept"] == "application/json"
        return api_json(BRAVE)

    with LocalServer({"/brave": brave}) as server:
        tool = WebSearchTool(env={"BRAVE_API_KEY": "brave-key"})
        out = await search(tool, context(tmp_path, server), query="python json", maxResults=5)
        (seen,) = server.requests
    assert seen.query == {"q": ["python json"], "count": ["5"]}
    assert seen.headers["user-agent"].startswith("Cowork/")
    assert out.startswith('Web search results for "python json" from brave (2 results; untrusted')
    assert '<untrusted_content source="brave search">' in out
    assert (
        "1. json — JSON encoder and decoder — Python 3 documentation\n"
        "   https://docs.python.org/3/library/json.html\n"
        "   Source code: Lib/json/__init__.py. JSON (JavaScript Object Notation) & more"
    ) in out
    assert "2. Working With JSON Data in Python\n   https://realpython.com/python-json/" in out
    assert "webFetch" in out.splitlines()[-1]


@pytest.mark.anyio
async def test_tavily(tmp_path: Path) -> None:
    def tavily(seen: Seen) -> Reply:
        if seen.headers.get("authorization") != "Bearer tvly-key":
            return unauthorized(seen)
        assert seen.method == "POST"
        assert seen.json() == {
            "query": "python json",
            "max_results": 3,
            "search_depth": "basic",
            "include_domains": ["docs.python.org"],
        }
        return api_json(TAVILY)

    with LocalServer({"/tavily": tavily}) as server:
        tool = WebSearchTool(env={"TAVILY_API_KEY": "tvly-key"})
        ctx = context(tmp_path, server)
        out = await search(tool, ctx, query="python json", maxResults=3, site="https://docs.python.org/3/")
    assert out.startswith('Web search results for "python json" on docs.python.org from tavily (1 result;')
    assert "json exposes an API familiar to users" in out


@pytest.mark.anyio
async def test_exa(tmp_path: Path) -> None:
    def exa(seen: Seen) -> Reply:
        if seen.headers.get("x-api-key") != "exa-key":
            return unauthorized(seen)
        body = seen.json()
        assert body["query"] == "python json" and body["numResults"] == 8
        assert body["includeDomains"] == ["docs.python.org"] and body["contents"] == {"highlights": True}
        return api_json(EXA)

    with LocalServer({"/exa": exa}) as server:
        tool = WebSearchTool(env={"EXA_API_KEY": "exa-key"})
        out = await search(tool, context(tmp_path, server), query="python json", site="docs.python.org")
    assert "Encoding basic Python object hierarchies. … Decoding JSON." in out
    assert "2. https://example.org/no-title\n   https://example.org/no-title\n   Only text here." in out


@pytest.mark.anyio
async def test_duckduckgo_parses_the_html_results_page(tmp_path: Path) -> None:
    def ddg(seen: Seen) -> Reply:
        assert seen.method == "POST" and seen.headers["content-type"] == "application/x-www-form-urlencoded"
        return Reply(body=DUCKDUCKGO)

    with LocalServer({"/duckduckgo": ddg}) as server:
        out = await search(WebSearchTool(env={}), context(tmp_path, server), query="python json", site="python.org")
        (seen,) = server.requests
    assert seen.form() == {"q": ["python json site:python.org"]}
    assert "Buy JSON tools" not in out and "y.js" not in out  # the ad is dropped
    assert (
        "1. json — JSON encoder and decoder — Python 3.13 documentation\n"
        "   https://docs.python.org/3/library/json.html?highlight=load&x=1\n"
        "   JSON (JavaScript Object Notation), specified by RFC 7159, is a lightweight data interchange format."
    ) in out
    assert "2. Working With JSON Data in Python – Real Python\n   https://realpython.com/python-json/\n" in out
    assert "Learn how to read and write JSON." in out
    assert "from duckduckgo (2 results" in out


@pytest.mark.anyio
async def test_max_results_and_duplicates(tmp_path: Path) -> None:
    results = [{"title": f"T{i}", "url": f"https://e.com/{i % 3}", "description": ""} for i in range(10)]
    with LocalServer({"/brave": api_json({"web": {"results": results}})}) as server:
        out = await search(
            WebSearchTool(env={"BRAVE_API_KEY": "k"}), context(tmp_path, server), query="q", maxResults=2
        )
    assert "1. T0\n   https://e.com/0" in out and "2. T1\n   https://e.com/1" in out and "3." not in out


# --- no results and errors ------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_no_results_is_a_plain_message(tmp_path: Path) -> None:
    routes = {
        "/brave": api_json({"type": "search", "query": {"original": "zzz"}}),
        "/duckduckgo": Reply(body=NO_RESULTS_HTML),
    }
    with LocalServer(routes) as server:
        brave = await search(WebSearchTool(env={"BRAVE_API_KEY": "k"}), context(tmp_path, server), query="zzz")
        ddg = await search(WebSearchTool(env={}), context(tmp_path, server), query="zzz", site="example.com")
    assert brave == 'No results for "zzz" from brave. Try fewer or different words.'
    assert (
        ddg
        == 'No results for "zzz" on example.com from duckduckgo. Try fewer or different words, or drop the site restriction.'
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("backend", "variable"), [("brave", "BRAVE_API_KEY"), ("tavily", "TAVILY_API_KEY"), ("exa", "EXA_API_KEY")]
)
async def test_rejected_key(tmp_path: Path, backend: str, variable: str) -> None:
    with LocalServer({f"/{backend}": unauthorized}) as server:
        tool = WebSearchTool(env={variable: "wrong"})
        with pytest.raises(
            ToolError, match=rf"The {backend} search API rejected the API key \(HTTP 401\): check {variable}"
        ):
            await search(tool, context(tmp_path, server), query="q")


@pytest.mark.anyio
async def test_http_and_parse_errors(tmp_path: Path) -> None:
    routes = {
        "/brave": Reply(body="<html>gateway</html>"),
        "/tavily": api_json({"detail": {"error": "Query is too long."}}, 400),
        "/exa": api_json({"error": "busy"}, 429),
        "/duckduckgo": Reply(202, CHALLENGE_HTML),
    }
    with LocalServer(routes) as server:
        with pytest.raises(ToolError, match="brave search API sent a response that could not be parsed"):
            await search(WebSearchTool(env={"BRAVE_API_KEY": "k"}), context(tmp_path, server), query="q")
        with pytest.raises(ToolError, match=r"tavily search API answered HTTP 400 Bad Request: .*Query is too long"):
            await search(WebSearchTool(env={"TAVILY_API_KEY": "k"}), context(tmp_path, server), query="q")
        with pytest.raises(ToolError, match="rate limiting"):
            await search(WebSearchTool(env={"EXA_API_KEY": "k"}), context(tmp_path, server), query="q")
        with pytest.raises(ToolError, match="bot check"):
            await search(WebSearchTool(env={}), context(tmp_path, server), query="q")


@pytest.mark.anyio
async def test_timeout(tmp_path: Path) -> None:
    with LocalServer({"/duckduckgo": Reply(body=DUCKDUCKGO, delay=10)}) as server:
        ctx = context(tmp_path, server, fetch_timeout_seconds=0.2)
        with pytest.raises(ToolError, match=r"duckduckgo search timed out after 0\.2 seconds"):
            await search(WebSearchTool(env={}), ctx, query="q")


# --- backend selection ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, DuckDuckGoBackend),
        ({"EXA_API_KEY": "e"}, ExaBackend),
        ({"EXA_API_KEY": "e", "TAVILY_API_KEY": "t"}, TavilyBackend),
        ({"EXA_API_KEY": "e", "TAVILY_API_KEY": "t", "BRAVE_API_KEY": "b"}, BraveBackend),
        ({"BRAVE_API_KEY": "  ", "EXA_API_KEY": "e"}, ExaBackend),  # a blank key is no key
    ],
)
def test_backend_from_environment(env: dict[str, str], expected: type) -> None:
    backend = WebSearchTool(env=env).backend(WebConfig())
    assert type(backend) is expected
    assert backend.endpoint == expected.default_endpoint
    assert backend.api_key == (env[expected.key_env].strip() if expected.key_env else None)


def test_configured_backend_wins_and_endpoints_override() -> None:
    web = WebConfig(search_backend="DuckDuckGo", search_endpoints={"duckduckgo": "http://127.0.0.1:9/html/"})
    backend = WebSearchTool(env={"BRAVE_API_KEY": "b"}).backend(web)
    assert type(backend) is DuckDuckGoBackend and backend.endpoint == "http://127.0.0.1:9/html/"


def test_configured_backend_errors() -> None:
    with pytest.raises(ToolError, match=r"exa search backend is configured .* but EXA_API_KEY is not set"):
        WebSearchTool(env={"BRAVE_API_KEY": "b"}).backend(WebConfig(search_backend="exa"))
    with pytest.raises(ToolError, match=r"Unknown search backend 'bing'.*brave, tavily, exa, duckduckgo"):
        WebSearchTool(env={}).backend(WebConfig(search_backend="bing"))
    with pytest.raises(ToolError, match=r"search endpoint \(tools.web.search_endpoints.duckduckgo\)"):
        WebSearchTool(env={}).backend(WebConfig(search_endpoints={"duckduckgo": "file:///etc/passwd"}))


def test_process_environment_is_read_when_no_env_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setenv("EXA_API_KEY", "from-env")
    backend = WebSearchTool().backend(WebConfig())
    assert type(backend) is ExaBackend and backend.api_key == "from-env"


def test_parameters() -> None:
    tool = WebSearchTool(env={})
    assert tool.parse({"query": "  q  ", "site": "site:Docs.Python.org"}).model_dump() == {
        "query": "q",
        "maxResults": 8,
        "site": "docs.python.org",
    }
    for bad in ({"query": ""}, {"query": "   "}, {"query": "x" * 401}, {"query": "q", "maxResults": 21}):
        with pytest.raises(ToolError):
            tool.parse(bad)
    with pytest.raises(ToolError, match="site must be a domain"):
        tool.parse({"query": "q", "site": "two words"})
    assert tool.spec().name == "webSearch" and tool.side_effects is False
