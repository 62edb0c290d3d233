"""The Documents view: index the folder with a progress bar, see the job, search by meaning, open a PDF passage in
the preview, and file text shown as text (never markup); index a web page by its URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from cowork.testing.client import EventClient
from cowork.testing.http import LocalServer, Reply
from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess, provider_env
from tests.documents.files import pdf_bytes

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_index_search_and_open_a_passage(
    context: BrowserContext, server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    (workspace / "docs" / "leave.md").write_text(
        "# Holiday policy\n\nStaff get twenty-five days of paid vacation. <img src=x onerror=alert(1)>\n"
    )
    (workspace / "report.pdf").write_bytes(pdf_bytes([["Quarterly revenue grew by twelve percent in Europe."]]))
    mock_llm.set_script([MockResponse(text="hello")])
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("hi")  # a session, so passages of documents can open in the preview
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("assistant-message")).to_have_text("hello")

    await page.get_by_test_id("tab-documents").click()
    await expect(page.get_by_test_id("ingest-jobs")).to_contain_text("Nothing indexed yet.")
    await page.get_by_test_id("ingest-start").click()
    job = page.get_by_test_id("ingest-job").first
    await expect(job).to_have_attribute("data-status", "done", timeout=60_000)
    await expect(job).to_contain_text("5/5")  # the fixture's three files, the policy and the report

    await page.get_by_test_id("doc-search").fill("how much time off do employees have?")
    await page.get_by_test_id("doc-search-go").click()
    first = page.get_by_test_id("doc-hit").first
    await expect(first.get_by_test_id("doc-hit-path")).to_have_text("docs/leave.md")
    await expect(first).to_contain_text("<img src=x onerror=alert(1)>")  # shown as the text it is
    assert await page.locator(".doc-results img").count() == 0
    await page.screenshot(path=str(artifacts / "documents-search.png"), full_page=True)

    await page.get_by_test_id("doc-search").fill("sales growth in european markets")
    await page.get_by_test_id("doc-search-go").click()
    pdf = page.get_by_test_id("doc-hit").filter(has_text="report.pdf").first
    await pdf.get_by_test_id("doc-hit-open").click()
    await expect(page.get_by_test_id("doc-dialog")).to_be_visible()
    await expect(page.get_by_test_id("doc-dialog")).to_contain_text("report.pdf")
    assert page.errors == []  # type: ignore[attr-defined]


PAGE = """<html><head><title>Glacier walks</title></head><body><main><h1>Glacier walks</h1>
<p>Guided walks on the glacier leave at nine; crampons and helmets are lent at the hut.</p></main></body></html>"""


@pytest.fixture
def page_server(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Iterator[ServerProcess]:
    """A server with the test allowance for loopback pages (the site below listens on 127.0.0.1)."""
    env = provider_env("openai", mock_llm.openai_base_url) | {"COWORK_TOOLS__WEB__ALLOW_PRIVATE_ADDRESSES": "true"}
    with ServerProcess(tmp_path / "home", workspace, env=env) as process:
        yield process


async def test_index_a_web_page_by_its_url(
    context: BrowserContext, page_server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text="hello")])
    with LocalServer({"/glacier.pdf": Reply(body=PAGE)}) as site:  # HTML, although its name ends in .pdf
        url = site.url("/glacier.pdf")
        page = await open_ui(context, page_server)
        await page.get_by_test_id("composer").fill("hi")  # a session: hits of its folder's PDFs get an Open button
        await page.get_by_test_id("send").click()
        await expect(page.get_by_test_id("assistant-message")).to_have_text("hello")
        await page.get_by_test_id("tab-documents").click()
        await expect(page.get_by_test_id("ingest-jobs")).to_contain_text("Nothing indexed yet.")

        await page.get_by_test_id("ingest-url").fill("ftp://example.com/notes.txt")
        await page.get_by_test_id("ingest-url-go").click()
        await expect(page.get_by_test_id("toast").filter(has_text="only http and https")).to_be_visible()
        await expect(page.get_by_test_id("ingest-jobs")).to_contain_text("Nothing indexed yet.")  # nothing started

        await page.get_by_test_id("ingest-url").fill(url)
        await page.get_by_test_id("ingest-url").press("Enter")
        job = page.get_by_test_id("ingest-job").first
        await expect(job).to_have_attribute("data-status", "done", timeout=60_000)
        await expect(job).to_contain_text("1/1")
        await expect(job.locator("td[data-label=What]")).to_have_text(url)
        await expect(page.get_by_test_id("ingest-url")).to_have_value("")

    await page.get_by_test_id("doc-search").fill("when do the guided ice hikes start?")
    await page.get_by_test_id("doc-search-go").click()
    hit = page.get_by_test_id("doc-hit").first
    await expect(hit.get_by_test_id("doc-hit-path")).to_have_text(url)
    await expect(hit.get_by_test_id("doc-hit-link")).to_have_attribute("href", url)
    assert await hit.get_by_test_id("doc-hit-open").count() == 0  # a URL is never previewed as a folder's file
    await page.screenshot(path=str(artifacts / "documents-url.png"), full_page=True)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_memory_view_reads_corrects_and_forgets(
    context: BrowserContext, server: ServerProcess, workspace: Path, artifacts: Path
) -> None:
    (workspace / "AGENT.md").write_text("Sarah is the CFO.\n<script>alert(1)</script>\n")
    page = await open_ui(context, server)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.get_by_test_id("tab-memory").click()
    row = page.get_by_test_id("memory-row").filter(has_text="AGENT.md")
    await expect(row).to_contain_text("every conversation")
    await row.get_by_test_id("memory-open").click()
    text = page.get_by_test_id("memory-text")
    await expect(text).to_have_value("Sarah is the CFO.\n<script>alert(1)</script>\n")
    await text.fill("Sarah is the CEO.\n")
    await page.get_by_test_id("memory-save").click()
    lines = page.get_by_test_id("memory-row").filter(has_text="AGENT.md").locator("td[data-label=Lines]")
    await expect(lines).to_have_text("1")
    assert (workspace / "AGENT.md").read_text() == "Sarah is the CEO.\n"

    await page.get_by_test_id("memory-new-key").fill("people/tom")
    await page.get_by_test_id("memory-new").click()
    await page.get_by_test_id("memory-text").fill("Tom works on design.\n")
    await page.get_by_test_id("memory-save").click()
    tom = page.get_by_test_id("memory-row").filter(has_text="people/tom")
    await expect(tom).to_be_visible()
    assert (workspace / ".cowork" / "memory" / "people" / "tom.md").read_text() == "Tom works on design.\n"
    await page.screenshot(path=str(artifacts / "memory.png"), full_page=True)

    await tom.get_by_test_id("memory-open").click()
    await page.get_by_test_id("memory-forget").click()
    await expect(page.get_by_test_id("memory-row").filter(has_text="people/tom")).to_have_count(0)
    assert not (workspace / ".cowork" / "memory" / "people" / "tom.md").exists()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_profile_is_corrected_added_to_and_forgotten(
    context: BrowserContext, server: ServerProcess, artifacts: Path
) -> None:
    page = await open_ui(context, server)
    await page.get_by_test_id("tab-memory").click()
    await expect(page.get_by_test_id("profile-empty")).to_be_visible()
    await page.get_by_test_id("profile-new-key").fill("Communication style")
    await page.get_by_test_id("profile-new-value").fill("short answers <b>no emoji</b>")
    await page.get_by_test_id("profile-add").click()
    row = page.get_by_test_id("profile-row").filter(has_text="communication_style")
    await expect(row.get_by_test_id("profile-value")).to_have_value("short answers <b>no emoji</b>")
    await expect(row).to_contain_text("you")
    assert await page.locator("[data-testid=profile] b").count() == 0  # a value is text, never markup

    await row.get_by_test_id("profile-value").fill("long answers")
    await row.get_by_test_id("profile-save").click()
    await expect(page.locator(".toast").last).to_contain_text("Saved communication_style")
    await page.get_by_test_id("profile-new-key").fill("bad key!")
    await page.get_by_test_id("profile-new-value").fill("x")
    await page.get_by_test_id("profile-add").click()
    await expect(page.locator(".toast").last).to_contain_text("Invalid profile key")
    await expect(page.get_by_test_id("profile-row")).to_have_count(1)
    await page.set_viewport_size({"width": 420, "height": 900})
    await page.screenshot(path=str(artifacts / "profile-narrow.png"), full_page=True)
    await page.set_viewport_size({"width": 1400, "height": 900})
    await page.screenshot(path=str(artifacts / "profile.png"), full_page=True)

    row = page.get_by_test_id("profile-row").filter(has_text="communication_style")
    await expect(row.get_by_test_id("profile-value")).to_have_value("long answers")
    await row.get_by_test_id("profile-forget").click()
    await expect(page.get_by_test_id("profile-empty")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_observations_are_shown_and_forgotten(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text="Noted."), MockResponse(text="- Ada prefers <b>tea</b> to coffee.")])
    page = await open_ui(context, server)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.get_by_test_id("composer").fill("I'm Ada; tea, never coffee.")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("assistant-message")).to_have_text("Noted.")
    client = await EventClient.connect(server.address)
    try:
        (session,) = (await client.call("session/list", {}))["sessions"]
        sid = session["id"]
        await client.call("session/subscribe", {"sessionId": sid})
        observing = await client.call("memory/observe", {"sessionId": sid})
        await client.wait_turn_end(observing["operationId"])
    finally:
        await client.close()

    await page.get_by_test_id("tab-memory").click()
    noted = page.get_by_test_id("observation")
    await expect(noted).to_have_count(1)
    await expect(noted).to_contain_text("Ada prefers <b>tea</b> to coffee.")  # text, never markup
    assert await page.locator("[data-testid=observations] b").count() == 0
    await page.screenshot(path=str(artifacts / "observations.png"), full_page=True)
    await noted.get_by_test_id("observation-forget").click()
    await expect(page.get_by_test_id("observations-empty")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_pin_a_file_from_a_search_and_unpin_it(
    context: BrowserContext, server: ServerProcess, workspace: Path, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    (workspace / "docs" / "kitchen.md").write_text("# Kitchen\n\nThe coffee machine is descaled every Friday.\n")
    mock_llm.set_script([MockResponse(text="hello"), MockResponse(text="Fridays.")])
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("hi")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("assistant-message")).to_have_text("hello")
    await page.get_by_test_id("tab-documents").click()
    await expect(page.get_by_test_id("pins-empty")).to_be_visible()
    await page.get_by_test_id("ingest-start").click()
    await expect(page.get_by_test_id("ingest-job").first).to_have_attribute("data-status", "done", timeout=60_000)
    await page.get_by_test_id("doc-search").fill("descaled")
    await page.get_by_test_id("doc-search-go").click()
    hit = page.get_by_test_id("doc-hit").filter(has_text="docs/kitchen.md").first
    await hit.get_by_test_id("doc-hit-pin").click()
    pin = page.get_by_test_id("pin")
    await expect(pin).to_contain_text("docs/kitchen.md")
    await expect(pin).to_contain_text("1 passage")
    await expect(hit.get_by_test_id("doc-hit-pin")).to_have_count(0)  # pinned: no second Pin button
    await page.screenshot(path=str(artifacts / "pins.png"), full_page=True)

    await page.get_by_test_id("tab-chat").click()
    await page.get_by_test_id("composer").fill("when is the machine cleaned?")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Fridays.")
    assert "descaled every Friday" in (mock_llm.requests[-1].system or "")

    await page.get_by_test_id("tab-documents").click()
    await page.get_by_test_id("pin").get_by_test_id("unpin").click()
    await expect(page.get_by_test_id("pins-empty")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]
