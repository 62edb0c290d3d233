"""Web pages in indexing jobs: fetched from a real local HTTP server through webFetch's guarded path, converted by
type, indexed under their final URL, failures recorded, nothing embedded twice, and loopback refused by default."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cowork.config import MemoryConfig, WebConfig
from cowork.embeddings import LocalEmbedder
from cowork.retrieval import IngestError, Retrieval, scope_of
from cowork.store import Database, IngestJobRow
from cowork.store.repos import retrieval as repo
from cowork.testing.embedders import HashEmbedder
from cowork.testing.http import LocalServer, Reply
from tests.documents.files import pdf_bytes

pytestmark = pytest.mark.anyio

LOOPBACK = WebConfig(allow_private_addresses=True)
"""The test allowance: the local server listens on 127.0.0.1, which the default refuses."""

ARTICLE = """<!doctype html>
<html><head><title>Caring for sourdough starter</title></head>
<body><nav><a href="/">Home</a> · <a href="/shop">Shop</a></nav>
<main><article><h1>Caring for sourdough starter</h1>
<p>Feed the starter every day with equal weights of flour and water, and keep it in a warm spot of the kitchen.
A healthy culture doubles in size within six hours and smells pleasantly sour.</p>
<p>If you go on holiday, keep the jar in the fridge: the yeast slows down and survives a fortnight unfed.</p>
</article></main><footer>Copyright Bakery Blog</footer></body></html>"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "folder"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\n\nThe zebra budget is 40,000 euros.\n")
    return root


@pytest.fixture
def site():
    routes = {
        "/bread.html": Reply(body=ARTICLE),
        "/old-bread": Reply(status=301, body="", headers={"Location": "/bread.html"}),
        "/report.pdf": Reply(
            body=pdf_bytes([["Quarterly revenue grew by twelve percent in Europe."]]), content_type="application/pdf"
        ),
        "/readme.txt": Reply(body="Plain words about a lighthouse keeper.\n", content_type="text/plain"),
        "/photo.png": Reply(body=b"\x89PNG\r\n\x1a\nnot really", content_type="image/png"),
    }
    with LocalServer(routes) as server:
        yield server


async def _until(retrieval: Retrieval, job_id: str, *statuses: str) -> IngestJobRow:
    for _ in range(3000):
        job = await retrieval.job(job_id)
        if job.status in statuses:
            return job
        await asyncio.sleep(0.01)
    raise AssertionError(f"job {job_id} stayed {job.status}")


def _sources(db: Database, folder: Path) -> dict[str, str]:
    return {s.uri: s.title for s in db.read_sync(lambda c: repo.sources(c, "documents", scope_of(folder)))}


async def test_an_html_page_and_a_pdf_are_indexed_and_a_404_fails_the_one_url(db, folder: Path, site) -> None:
    embedder = LocalEmbedder()
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder, web=LOOPBACK)
    html, pdf, missing = site.url("/bread.html"), site.url("/report.pdf"), site.url("/gone.html")
    job = await retrieval.add(folder, [], urls=[html, pdf, missing])
    assert json.loads(job.spec)["urls"] == [html, pdf, missing]
    done = await _until(retrieval, job.id, "done", "failed")
    assert (done.status, done.total, done.done, done.failed) == ("done", 3, 3, 1)
    assert done.error is not None and done.error.startswith(f"{missing}: HTTP 404")
    assert _sources(db, folder) == {html: "Caring for sourdough starter", pdf: "report.pdf"}

    answer = await retrieval.search(folder, "how do I look after my bread yeast while I am away?", mode="vector")
    assert answer.hits[0].uri == html and "fridge" in answer.hits[0].text
    assert "Shop" not in "".join(h.text for h in answer.hits if h.uri == html)  # main content only
    pdf_hits = await retrieval.search(folder, "sales growth in Europe", mode="vector")
    assert pdf_hits.hits[0].uri == pdf

    chunks = done.chunks
    again = await _until(retrieval, (await retrieval.add(folder, [], urls=[html, pdf])).id, "done")
    assert (again.done, again.failed, again.chunks) == (2, 0, 0) and chunks > 0  # fetched again, embedded nothing
    await retrieval.stop()


async def test_a_redirected_url_is_indexed_under_its_final_url(db, folder: Path, site) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(), web=LOOPBACK)
    job = await retrieval.add(folder, [], urls=[site.url("/old-bread")])
    assert (await _until(retrieval, job.id, "done")).failed == 0
    assert list(_sources(db, folder)) == [site.url("/bread.html")]
    info_urls = json.loads((await retrieval.job(job.id)).spec)["urls"]
    assert info_urls == [site.url("/old-bread")]  # the job names what was asked for


async def test_text_and_files_in_one_job_and_other_types_fail_with_a_clear_error(db, folder: Path, site) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(), web=LOOPBACK)
    job = await retrieval.add(folder, ["notes.md"], urls=[site.url("/readme.txt"), site.url("/photo.png")])
    done = await _until(retrieval, job.id, "done")
    assert (done.total, done.done, done.failed) == (3, 3, 1)
    assert done.error is not None
    assert done.error.startswith(f"{site.url('/photo.png')}: {site.url('/photo.png')} is image/png")
    assert "a type the index does not read" in done.error
    assert set(_sources(db, folder)) == {"notes.md", site.url("/readme.txt")}
    hits = (await retrieval.search(folder, "lighthouse keeper", mode="keyword")).hits
    assert [h.uri for h in hits] == [site.url("/readme.txt")]


async def test_a_folder_refresh_keeps_the_pages(db, folder: Path, site) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder(), web=LOOPBACK)
    await _until(retrieval, (await retrieval.add(folder, [], urls=[site.url("/readme.txt")])).id, "done")
    await _until(retrieval, (await retrieval.add(folder, ["."])).id, "done")
    assert set(_sources(db, folder)) == {"notes.md", site.url("/readme.txt")}
    assert len(site.requests) == 1  # the folder job fetched nothing


async def test_loopback_is_refused_by_default_and_recorded(db, folder: Path, site) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())  # default tools.web: no allowance
    job = await retrieval.add(folder, [], urls=[site.url("/bread.html"), site.url("/readme.txt", host="localhost")])
    done = await _until(retrieval, job.id, "done")
    assert (done.done, done.failed) == (2, 2)
    assert done.error is not None
    first, second = done.error.splitlines()
    assert first.startswith(f"{site.url('/bread.html')}: Refused to fetch")
    assert "loopback address" in first and "tools.web.allow_private_addresses" in first
    assert "document indexing only reaches public internet addresses" in first
    assert second.startswith(f"{site.url('/readme.txt', host='localhost')}: Refused") and "loopback" in second
    assert site.requests == []  # nothing connected
    assert _sources(db, folder) == {}


async def test_a_page_over_the_size_limit_fails_whole(db, folder: Path) -> None:
    big = "<html><body><p>" + "word " * 300_000 + "</p></body></html>"
    with LocalServer({"/big.html": Reply(body=big)}) as server:
        retrieval = Retrieval(db, MemoryConfig(max_file_mb=1), embedder=HashEmbedder(), web=LOOPBACK)
        done = await _until(retrieval, (await retrieval.add(folder, [], urls=[server.url("/big.html")])).id, "done")
    assert done.failed == 1 and done.error is not None
    assert "is larger than 1.0 MiB" in done.error and "memory.max_file_mb" in done.error
    assert _sources(db, folder) == {}


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        (["ftp://example.com/file.txt"], "only http and https"),
        (["file:///etc/passwd"], "only http and https"),
        (["http://"], "no host"),
        (["https://user:secret@example.com/"], "credentials"),
        (["example.com/page"], "no scheme"),
        ([f"https://example.com/{i}" for i in range(51)], "Too many URLs"),
        (["https://example.com/" + "a" * 2100], "too long"),
    ],
)
async def test_bad_urls_are_refused_and_no_job_is_made(db, folder: Path, urls: list[str], message: str) -> None:
    retrieval = Retrieval(db, MemoryConfig(), embedder=HashEmbedder())
    with pytest.raises(IngestError) as refused:
        await retrieval.add(folder, ["notes.md"], urls=urls)
    assert refused.value.code == "invalid_params" and message in str(refused.value)
    assert await retrieval.jobs() == []


async def test_a_stopped_job_resumes_after_the_last_page_it_finished(db, folder: Path, site) -> None:
    embedder = HashEmbedder()
    urls = [site.url("/readme.txt"), site.url("/bread.html")]
    retrieval = Retrieval(db, MemoryConfig(), embedder=embedder, web=LOOPBACK)
    spec = json.dumps({"workspace": scope_of(folder), "paths": ["notes.md"], "urls": urls})
    # As a killed process leaves it: `processing`, the first page committed and counted.
    await db.write(
        lambda c: repo.create_job(c, job_id="j1", kind="documents", scope=scope_of(folder), spec=spec, total=3)
    )
    await db.write(lambda c: repo.update_job(c, "j1", status="processing", done=1))
    await retrieval.start()
    done = await _until(retrieval, "j1", "done")
    assert (done.done, done.total, done.failed) == (3, 3, 0)
    assert [s.path for s in site.requests] == ["/bread.html"]  # the finished page was not fetched again
    assert set(_sources(db, folder)) == {"notes.md", site.url("/bread.html")}
