"""A turn in the browser: streamed markdown, tool cards, approvals, questions, todos, sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, expect

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ANSWER = "Here is **the plan**:\n\n- read\n- write\n\n```python\ndef main():\n    return 42  # answer\n```\n\n<b>not bold</b>"


async def test_turn_with_approval_question_todos_and_sessions(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script(
        [
            tool_step(
                "todoWrite",
                todos=[
                    {"content": "Mark it", "status": "in_progress", "activeForm": "Marking it"},
                    {"content": "Ask", "status": "pending", "activeForm": "Asking"},
                ],
            ),
            tool_step("mark", label="web"),
            tool_step("ask", question="Which colour?", options=["red", "blue"]),
            MockResponse(text=ANSWER, chunk_size=4, chunk_delay_s=0.005),
        ]
    )
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("Make a plan")
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("user-message").locator(".text")).to_have_text("Make a plan")

    approval = page.get_by_test_id("approval")
    await expect(approval).to_contain_text("mark")
    await expect(approval).to_contain_text('"label": "web"')
    await expect(page.get_by_test_id("todo")).to_have_text(["▶ Marking it", "○ Ask"])
    await page.screenshot(path=str(artifacts / "approval.png"))
    await approval.get_by_test_id("approve").click()
    await expect(approval).to_have_count(0)

    question = page.get_by_test_id("question")
    await expect(question).to_contain_text("Which colour?")
    await page.screenshot(path=str(artifacts / "question.png"))
    await question.get_by_test_id("option").filter(has_text="blue").click()
    await expect(question).to_have_count(0)

    answer = page.get_by_test_id("assistant-message").last
    await expect(answer.locator("strong")).to_have_text("the plan")
    await expect(answer.locator("li")).to_have_text(["read", "write"])
    await expect(answer.locator("pre.code .hljs-keyword").first).to_have_text("def")
    await expect(answer.locator("pre.code .hljs-comment")).to_have_text("# answer")
    await expect(answer).to_contain_text("<b>not bold</b>")  # escaped, never markup
    await expect(answer).not_to_have_class("streaming")
    assert mock_llm.requests[-1].last_tool_results[0]["content"] == "blue"
    # The code block's copy button puts exactly its code on the clipboard.
    await context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy = answer.get_by_test_id("copy-code")
    await copy.click()
    await expect(copy).to_have_text("Copied")
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == "def main():\n    return 42  # answer"

    # Tool calls expand to their arguments and result.
    mark = page.locator("[data-testid=tool-call][data-tool=mark]")
    await expect(mark.get_by_test_id("tool-status")).to_have_text("done")
    await mark.locator("summary").click()
    await expect(mark.locator(".tool-result")).to_have_text("marked web")
    await page.screenshot(path=str(artifacts / "chat.png"), full_page=True)

    # A second session, then back: the first one's transcript is rebuilt from its log.
    first = page.url.split("#session=")[1]
    await page.get_by_test_id("new-session").click()
    await expect(page.get_by_test_id("user-message")).to_have_count(0)
    await expect(page.get_by_test_id("session-item")).to_have_count(2)
    await page.get_by_test_id("session-item").filter(has_text="Make a plan").click()
    assert page.url.endswith(first)
    await expect(page.get_by_test_id("user-message").locator(".text")).to_have_text("Make a plan")
    await expect(page.get_by_test_id("assistant-message").last.locator("strong")).to_have_text("the plan")
    await page.get_by_test_id("session-search").fill("nothing like this")
    await expect(page.get_by_test_id("session-item")).to_have_count(0)
    await page.get_by_test_id("session-search").fill("plan")
    await expect(page.get_by_test_id("session-item")).to_have_count(1)
    await page.screenshot(path=str(artifacts / "sessions.png"))
    assert page.errors == []  # type: ignore[attr-defined]


async def test_two_clients_see_one_stream(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([tool_step("mark", label="shared"), MockResponse(text="both saw it")])
    client = await EventClient.connect(server.address)
    try:
        sid = (await client.call("session/create", {"title": "shared"}))["id"]
        await client.call("session/subscribe", {"sessionId": sid, "afterSeq": 0})
        page = await open_ui(context, server)
        await expect(page.get_by_test_id("session-title")).to_have_text("shared")
        # The other client starts the turn; the page sees it, and the approval, live.
        op = (await client.call("turn/start", {"sessionId": sid, "text": "from the CLI", "clientMessageId": "1"}))[
            "operationId"
        ]
        await expect(page.get_by_test_id("user-message").locator(".text")).to_have_text("from the CLI")
        await expect(page.get_by_test_id("approval")).to_have_count(1)
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
        (request,) = [e.payload for e in client.events if e.type == "approval_requested"]
        # Approved elsewhere: it disappears from the page.
        await client.call("approval/respond", {"requestId": request.request_id, "approved": True})  # type: ignore[union-attr]
        await expect(page.get_by_test_id("approval")).to_have_count(0)
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("both saw it")
        assert await client.wait_turn_end(op) == "done"

        # And the other way round: a turn from the page, an approval on the page, the other client sees both.
        mock_llm.set_script([tool_step("mark", label="again"), MockResponse(text="page turn done")])
        client.events.clear()
        await page.get_by_test_id("composer").fill("from the page")
        await page.get_by_test_id("composer").press("Enter")
        await client.wait_for(lambda evs: any(e.type == "approval_requested" for e in evs))
        await page.get_by_test_id("approval").get_by_test_id("reject").click()
        await client.wait_for(lambda evs: any(e.type == "approval_resolved" for e in evs))
        (resolved,) = [e.payload for e in client.events if e.type == "approval_resolved"]
        assert resolved.approved is False  # type: ignore[union-attr]
        await expect(page.get_by_test_id("assistant-message").last).to_have_text("page turn done")
        texts = [e.payload.text for e in client.events if e.type == "user_message"]  # type: ignore[union-attr]
        assert texts == ["from the page"]
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await client.close()


async def test_an_event_type_newer_than_the_page_gets_a_neutral_line(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="all done")])
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("hello")
    await page.get_by_test_id("composer").press("Enter")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("all done")
    # The next event as a newer server could send it, through the entry point the WebSocket's notifications take.
    await page.evaluate(
        """() => {
          const app = window.coworkApp, view = app.current;
          app.onNotification({ method: "session/event", params: {
            sessionId: view.session.id, seq: view.lastSeq + 1, ts: new Date().toISOString(),
            type: "hologram", payload: { shape: "cube" } } });
        }"""
    )
    await expect(page.get_by_test_id("note-event")).to_have_text("· event hologram")
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("all done")
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("width", "height"), [(420, 800), (1400, 900)])
async def test_the_chat_is_usable_narrow_and_wide(
    browser: Browser, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path, width: int, height: int
) -> None:
    mock_llm.set_script([MockResponse(text="a reply that should be read in full, not cut off at the edge")])
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_ui(context, server)
        await page.get_by_test_id("composer").fill("hello from a small window")
        await page.get_by_test_id("composer").press("Enter")
        reply = page.get_by_test_id("assistant-message").last
        await expect(reply).to_have_text("a reply that should be read in full, not cut off at the edge")
        await page.screenshot(path=str(artifacts / f"chat-{width}.png"))
        # Nothing scrolls sideways, and the reply and the composer lie wholly inside the window.
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        for box in (await reply.bounding_box(), await page.get_by_test_id("composer").bounding_box()):
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()
