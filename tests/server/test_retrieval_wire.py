"""Indexing and search through a real server with the real local embedder: `ingest/*`, `ingest/progress`,
`memory/search`, the errors each refusal gets, and a job that survives a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.http import LocalServer, Reply
from cowork.testing.server import ServerProcess
from tests.documents.files import pdf_bytes

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("retrieval")
    ws = root / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "leave.md").write_text(
        "# Holiday policy\n\nEmployees get twenty-five days of paid vacation per year. Unused days expire in March.\n"
    )
    (ws / "docs" / "kitchen.md").write_text("# Kitchen\n\nThe coffee machine is descaled every Friday.\n")
    (ws / "report.pdf").write_bytes(pdf_bytes([["Quarterly revenue grew by twelve percent in Europe."]]))
    (root / "outside.md").write_text("# Outside\n\nNot in the folder.\n")
    with ServerProcess(root / "home", ws) as proc:
        yield proc


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[EventClient]:
    c = await EventClient.connect(server.address)
    yield c
    await c.close()


async def _finished(client: EventClient, job_id: str, within: float = 60) -> dict:
    async def wait() -> dict:
        while True:
            job = (await client.call("ingest/status", {"jobId": job_id}))["jobs"][0]
            if job["status"] not in ("pending", "processing"):
                return job
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(wait(), within)


async def test_a_folder_indexed_over_the_wire_is_searched_by_meaning(client: EventClient) -> None:
    job = await client.call("ingest/add", {"paths": ["."]})
    assert job["status"] == "pending" and job["paths"] == ["."]
    done = await _finished(client, job["jobId"])
    assert (done["status"], done["total"], done["done"], done["failed"]) == ("done", 3, 3, 0)
    for _ in range(200):  # the notification follows the committed status
        progress = [p for m, p in client.notifications if m == "ingest/progress" and p["jobId"] == job["jobId"]]
        if progress and progress[-1]["status"] == "done":
            break
        await asyncio.sleep(0.01)
    assert progress[0]["status"] == "pending" and progress[-1]["status"] == "done"

    # No word of the question is in the answer's file ("vacation", not "holiday allowance"…): the vector half.
    found = await client.call("memory/search", {"query": "how much time off do staff get each year?", "limit": 3})
    assert found["sources"] == 3 and found.get("indexing") is None
    top = found["hits"][0]
    assert top["path"] == "docs/leave.md" and top["heading"] == "Holiday policy"
    assert "twenty-five days" in top["text"] and top["similarity"] > 0.3
    pdf = await client.call("memory/search", {"query": "sales growth in european markets", "limit": 1})
    assert pdf["hits"][0]["path"] == "report.pdf"
    keyword = await client.call("memory/search", {"query": "descaled", "mode": "keyword"})
    assert [h["path"] for h in keyword["hits"]] == ["docs/kitchen.md"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"paths": ["../outside.md"]}, "path_denied"),
        ({"paths": ["/etc/passwd"]}, "path_denied"),
        ({"paths": ["nope.md"]}, "path_denied"),
        ({"paths": []}, "invalid_params"),
        ({"paths": ["docs"], "sessionId": "missing"}, "session_not_found"),
    ],
)
async def test_ingest_add_refusals(client: EventClient, params: dict, code: str) -> None:
    before = (await client.call("ingest/status", {}))["jobs"]
    with pytest.raises(RpcError) as refused:
        await client.call("ingest/add", params)
    assert refused.value.code == code
    assert (await client.call("ingest/status", {}))["jobs"] == before  # nothing was started


@pytest.mark.parametrize("method", ["ingest/pause", "ingest/resume", "ingest/cancel", "ingest/status"])
async def test_an_unknown_job_is_job_not_found(client: EventClient, method: str) -> None:
    with pytest.raises(RpcError) as refused:
        await client.call(method, {"jobId": "0" * 32})
    assert refused.value.code == "job_not_found"


async def test_a_finished_job_cannot_be_paused(client: EventClient) -> None:
    job = await client.call("ingest/add", {"paths": ["docs"]})
    await _finished(client, job["jobId"])
    with pytest.raises(RpcError) as refused:
        await client.call("ingest/pause", {"jobId": job["jobId"]})
    assert refused.value.code == "invalid_params" and "done" in str(refused.value)


async def test_search_params_are_checked(client: EventClient) -> None:
    for params in ({"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "mode": "fuzzy"}):
        with pytest.raises(RpcError) as refused:
            await client.call("memory/search", params)
        assert refused.value.code == "invalid_params"


async def test_a_session_searches_its_own_folder(client: EventClient, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "plan.md").write_text("# Plan\n\nThe launch happens on the moon.\n")
    session = await client.call("session/create", {"workspace": str(other)})
    job = await client.call("ingest/add", {"paths": ["."], "sessionId": session["id"]})
    assert job["folder"] == str(other.resolve())
    await _finished(client, job["jobId"])
    mine = await client.call("memory/search", {"query": "launch", "sessionId": session["id"], "mode": "keyword"})
    assert [h["path"] for h in mine["hits"]] == ["plan.md"]
    theirs = await client.call("memory/search", {"query": "launch", "mode": "keyword"})
    assert all(h["path"] != "plan.md" for h in theirs["hits"])


async def test_a_passage_is_shown_by_id_in_its_own_folder_only(client: EventClient, tmp_path: Path) -> None:
    job = await client.call("ingest/add", {"paths": ["docs"]})
    await _finished(client, job["jobId"])
    hit = (await client.call("memory/search", {"query": "descaled", "mode": "keyword"}))["hits"][0]
    passage = await client.call("memory/passage", {"chunkId": hit["chunkId"]})
    assert (passage["path"], passage["heading"], passage["kind"]) == ("docs/kitchen.md", "Kitchen", "documents")
    assert passage["text"] == hit["text"]

    other = tmp_path / "elsewhere"
    other.mkdir()
    session = await client.call("session/create", {"workspace": str(other)})
    for params in ({"chunkId": hit["chunkId"], "sessionId": session["id"]}, {"chunkId": 10**9}):
        with pytest.raises(RpcError) as refused:
            await client.call("memory/passage", params)
        assert refused.value.code == "passage_not_found"
    with pytest.raises(RpcError) as refused:
        await client.call("memory/passage", {"chunkId": 0})
    assert refused.value.code == "invalid_params"


async def test_pins_over_the_wire(client: EventClient) -> None:
    assert (await client.call("memory/pins", {}))["pins"] == []
    pinned = await client.call("memory/pin", {"path": "docs/leave.md"})
    assert [p["path"] for p in pinned["pins"]] == ["docs/leave.md"]
    if pinned.get("indexing"):
        await _finished(client, pinned["indexing"]["jobId"])
    (pin,) = (await client.call("memory/pins", {}))["pins"]
    assert pin["chunks"] == 1 and pin["title"] and 10 < pin["tokens"] < 100
    for method, params, code in [
        ("memory/pin", {"path": "../outside.md"}, "path_denied"),
        ("memory/pin", {"path": "docs"}, "invalid_params"),
        ("memory/pin", {"path": ""}, "invalid_params"),
        ("memory/unpin", {"path": "docs/kitchen.md"}, "memory_not_found"),
    ]:
        with pytest.raises(RpcError) as refused:
            await client.call(method, params)
        assert refused.value.code == code, params
    assert (await client.call("memory/unpin", {"path": "docs/leave.md"}))["pins"] == []


# ---- web pages by URL ----------------------------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>Caring for sourdough starter</title></head><body>
<nav><a href="/">Home</a></nav><main><article><h1>Caring for sourdough starter</h1>
<p>Feed the starter every day with equal weights of flour and water and keep it somewhere warm.</p>
<p>Going on holiday? Keep the jar in the fridge: the culture slows down and survives two weeks unfed.</p>
</article></main></body></html>"""


@pytest.fixture(scope="module")
def site() -> Iterator[LocalServer]:
    routes = {
        "/bread.html": Reply(body=PAGE),
        "/old": Reply(status=302, body="", headers={"Location": "/bread.html"}),
        "/report.pdf": Reply(body=pdf_bytes([["Revenue grew by twelve percent."]]), content_type="application/pdf"),
    }
    with LocalServer(routes) as server:
        yield server


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with the test allowance for loopback pages (the local site listens on 127.0.0.1)."""
    root = tmp_path_factory.mktemp("pages")
    (root / "ws").mkdir()
    env = {"COWORK_TOOLS__WEB__ALLOW_PRIVATE_ADDRESSES": "true"}
    with ServerProcess(root / "home", root / "ws", env=env) as proc:
        yield proc


async def test_pages_indexed_over_the_wire_are_searched_and_cited_by_their_url(
    web_server: ServerProcess, site: LocalServer
) -> None:
    client = await EventClient.connect(web_server.address)
    try:
        urls = [site.url("/old"), site.url("/report.pdf"), site.url("/missing.html")]
        job = await client.call("ingest/add", {"urls": urls})
        assert (job["paths"], job["urls"], job["status"]) == ([], urls, "pending")
        done = await _finished(client, job["jobId"])
        assert (done["status"], done["total"], done["done"], done["failed"]) == ("done", 3, 3, 1)
        assert done["error"].startswith(f"{site.url('/missing.html')}: HTTP 404")
        found = await client.call("memory/search", {"query": "how do I keep my bread culture alive on vacation?"})
        best = found["hits"][0]
        assert (best["path"], best["title"]) == (site.url("/bread.html"), "Caring for sourdough starter")  # final URL
        passage = await client.call("memory/passage", {"chunkId": best["chunkId"]})
        assert passage["path"] == site.url("/bread.html") and "fridge" in passage["text"]

        again = await _finished(client, (await client.call("ingest/add", {"urls": urls[:2]}))["jobId"])
        assert (again["done"], again["failed"], again["chunks"]) == (2, 0, 0)  # the same text: nothing embedded
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("urls", "says"),
    [
        (["ftp://example.com/notes.txt"], "only http and https"),
        (["file:///etc/passwd"], "only http and https"),
        (["http://"], "no host"),
        ([f"https://example.com/{i}" for i in range(51)], "at most 50"),
        ([], "at least one path or URL"),
    ],
)
async def test_bad_urls_are_invalid_params_and_start_nothing(client: EventClient, urls: list[str], says: str) -> None:
    before = (await client.call("ingest/status", {}))["jobs"]
    with pytest.raises(RpcError) as refused:
        await client.call("ingest/add", {"urls": urls, "paths": ["docs"] if urls == ["file:///etc/passwd"] else []})
    assert refused.value.code == "invalid_params" and says in str(refused.value)
    assert (await client.call("ingest/status", {}))["jobs"] == before


async def test_a_loopback_url_is_refused_by_default_and_the_reason_recorded(
    client: EventClient, site: LocalServer
) -> None:
    requests = len(site.requests)
    job = await client.call("ingest/add", {"urls": [site.url("/bread.html")]})
    done = await _finished(client, job["jobId"])
    assert (done["status"], done["done"], done["failed"], done["chunks"]) == ("done", 1, 1, 0)
    assert len(site.requests) == requests  # refused before connecting
    assert done["error"].startswith(f"{site.url('/bread.html')}: Refused to fetch")
    assert "loopback address" in done["error"] and "tools.web.allow_private_addresses" in done["error"]
