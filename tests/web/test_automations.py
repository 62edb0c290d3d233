"""The Automations view and notifications in the browser, against a real server and the mock LLM: a flow created from
YAML, a refused one showing its problems and saving nothing, Run now with an inputs form, a `write` step approved (the
file written) or rejected, opened from its toast, an agent step answered in its session, cancelling a waiting or
running run and resuming an interrupted one, disable and enable, export, delete after a confirmation, untrusted text
shown as text, notification toasts (dismiss, snooze) and the header's list, and the tab's count of waiting runs seen
from any view; at a wide and a narrow width.

Inside an automation the approval policy runs what it would ask about in chat; the tests that need a step to wait set
`write` to always ask (`tool/setPolicy`), as a user can."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer, MockResponse, tool_step
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

XSS = "<img src=x onerror=alert(1)>"
HELLO = """\
name: hello
description: Say hello
inputs:
  who: {type: string, default: world}
steps:
  - id: greet
    type: toolCall
    tool: write
    arguments: {filePath: hello.txt, content: "hello ${input.who}"}
  - id: tell
    type: notification
    tier: urgent
    title: Wrote hello.txt
    body: "for ${input.who}"
"""


async def rpc(server: ServerProcess, method: str, params: dict[str, Any] | None = None) -> Any:
    client = await EventClient.connect(server.address)
    try:
        return await client.call(method, params or {})
    finally:
        await client.close()


def marks(tmp_path: Path) -> list[str]:
    """What the test tools did (tests/web/conftest.py's server writes them to marks.txt)."""
    path = tmp_path / "marks.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def marked(tmp_path: Path, expected: list[str]) -> None:
    """Wait until the test tools' marks are `expected` (a step's status shows before its tool writes its mark)."""
    with anyio.fail_after(20):
        while marks(tmp_path) != expected:  # noqa: ASYNC110 - polls a file the server's tools write
            await anyio.sleep(0.05)


async def ask_before_writing(server: ServerProcess) -> None:
    """Inside an automation the policy runs what it would otherwise ask about; `write` set to always ask parks."""
    await rpc(server, "tool/setPolicy", {"name": "write", "policy": "always"})


async def open_automations(context: BrowserContext, server: ServerProcess) -> Page:
    page = await open_ui(context, server)
    await page.get_by_test_id("tab-automations").click()
    await expect(page.get_by_test_id("automations-view")).to_be_visible()
    return page


async def create(page: Page, text: str) -> None:
    """Write a flow in the New automation pane and save it; its pane opens."""
    await page.get_by_test_id("automation-new").click()
    await page.get_by_test_id("automation-yaml").fill(text)
    await page.get_by_test_id("automation-save").click()
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    await expect(page.get_by_test_id("detail-name")).to_have_text(name)


def item(page: Page, name: str) -> Any:
    return page.locator(f"[data-testid=automation-item][data-name='{name}']")


async def test_create_run_approve_and_the_notification(
    context: BrowserContext, server: ServerProcess, workspace: Path, artifacts: Path
) -> None:
    await ask_before_writing(server)
    page = await open_automations(context, server)
    await expect(page.get_by_test_id("automations-empty")).to_be_visible()
    await create(page, HELLO)
    hello = item(page, "hello")
    await expect(hello.get_by_test_id("automation-description")).to_have_text("Say hello")
    await expect(hello.get_by_test_id("automation-trigger")).to_have_text("Run by hand")
    await expect(hello.get_by_test_id("automation-toggle")).to_be_checked()
    await expect(hello.get_by_test_id("automation-last-run")).to_have_text("never run")
    saved = await rpc(server, "automation/get", {"id": "hello"})
    assert saved["definition"]["steps"][0]["tool"] == "write"
    await expect(page.get_by_test_id("automation-yaml")).to_have_value(saved["text"])

    # Run now with an input from the form made of the flow's inputs: the write waits for approval.
    field = page.locator("[data-testid=run-input][data-name=who]")
    await expect(field).to_have_value("world")  # its default
    await field.fill("Ada")
    await page.get_by_test_id("automation-run").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "waiting_for_human")
    pending = run.get_by_test_id("run-pending")
    await expect(pending.get_by_test_id("pending-tool")).to_have_text("write")
    await expect(pending.get_by_test_id("pending-arguments")).to_contain_text('"content": "hello Ada"')
    await expect(run.get_by_test_id("run-inputs")).to_have_text('Inputs who = "Ada"')
    await expect(hello.get_by_test_id("last-run-status")).to_have_text("waiting for you")
    asking = page.get_by_test_id("notification-toast").filter(has_text="hello waits for your approval")
    await expect(asking).to_have_attribute("data-tier", "urgent")

    # Waiting is seen from any view: the tab's badge.
    badge = page.get_by_test_id("automations-waiting")
    await expect(badge).to_have_text("1")
    await page.get_by_test_id("tab-chat").click()
    await expect(badge).to_be_visible()
    await page.get_by_test_id("tab-automations").click()
    await page.screenshot(path=str(artifacts / "automations-waiting-1280.png"))

    await page.get_by_test_id("run").first.get_by_test_id("run-approve").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "done")
    await expect(badge).to_be_hidden()
    steps = run.get_by_test_id("run-step")
    await expect(steps.get_by_test_id("step-id")).to_have_text(["greet", "tell"])
    await expect(steps.get_by_test_id("step-status")).to_have_text(["done", "done"])
    assert (await anyio.Path(workspace / "hello.txt").read_text(encoding="utf-8")) == "hello Ada"
    await steps.first.locator("summary").click()
    await expect(steps.first.get_by_test_id("step-input")).to_contain_text('"content": "hello Ada"')
    await expect(steps.first.get_by_test_id("step-output")).to_be_visible()
    await expect(hello.get_by_test_id("last-run-status")).to_have_text("done")

    # The toast that asked for the approval went with it, answered; the notification step's toast: title, body, tier;
    # Dismiss answers it.
    toast = page.get_by_test_id("notification-toast")
    await expect(toast.get_by_test_id("notification-title")).to_have_text(["Wrote hello.txt"])
    await expect(toast).to_have_attribute("data-tier", "urgent")
    await expect(toast.get_by_test_id("notification-title")).to_have_text("Wrote hello.txt")
    await expect(toast.get_by_test_id("notification-body")).to_have_text("for Ada")
    await expect(page.get_by_test_id("notifications-count")).to_have_text("1")
    await toast.get_by_test_id("notification-dismiss").click()
    await expect(toast).to_have_count(0)
    await expect(page.get_by_test_id("notifications-count")).to_be_hidden()
    listed = (await rpc(server, "notification/list"))["notifications"]
    assert [(n["title"], n["response"]) for n in listed] == [
        ("Wrote hello.txt", "dismiss"),
        ("hello waits for your approval", "accept"),
    ]
    await page.get_by_test_id("notifications-button").click()
    entries = page.get_by_test_id("notification-item")
    await expect(entries.get_by_test_id("notification-title")).to_have_text(
        ["Wrote hello.txt", "hello waits for your approval"]
    )
    await expect(entries.first).to_contain_text("dismissed")
    await expect(entries.last).to_contain_text("accepted")
    await expect(entries.get_by_test_id("notification-dismiss")).to_have_count(0)
    await page.keyboard.press("Escape")
    await expect(page.get_by_test_id("notifications-panel")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_a_refused_flow_shows_each_problem_and_saves_nothing(
    context: BrowserContext, server: ServerProcess, artifacts: Path
) -> None:
    page = await open_automations(context, server)
    await page.get_by_test_id("automation-new").click()
    editor = page.get_by_test_id("automation-yaml")
    bad = "name: Bad Name\ntrigger: {type: cron, expression: '0 9 * *', timezone: Nowhere}\nsteps: []\n"
    await editor.fill(bad)
    await page.get_by_test_id("automation-save").click()
    errors = page.get_by_test_id("automation-error")
    await expect(errors).to_have_count(4)
    await expect(errors.filter(has_text="lower-case letters")).to_have_count(1)
    await expect(errors.filter(has_text="Nowhere")).to_have_count(1)
    await expect(errors.filter(has_text="five fields")).to_have_count(1)
    await expect(editor).to_have_value(bad)  # left as typed, to fix
    await page.get_by_test_id("automation-detail").screenshot(path=str(artifacts / "automations-errors.png"))
    assert (await rpc(server, "automation/list"))["automations"] == []
    await expect(page.get_by_test_id("automation-item")).to_have_count(0)

    # Not YAML at all.
    await editor.fill("name: [unclosed\n")
    await page.get_by_test_id("automation-save").click()
    await expect(errors.first).to_contain_text("not valid YAML")

    # A good one, then a bad edit of it: refused, the saved version stays.
    await editor.fill(HELLO)
    await page.get_by_test_id("automation-save").click()
    await expect(page.get_by_test_id("detail-name")).to_have_text("hello")
    await expect(page.get_by_test_id("automation-errors")).to_be_hidden()
    await page.get_by_test_id("automation-yaml").fill(HELLO.replace("${input.who}", "${input.whom}"))
    await page.get_by_test_id("automation-save").click()
    await expect(page.get_by_test_id("automation-error").first).to_contain_text("whom")
    saved = await rpc(server, "automation/get", {"id": "hello"})
    assert saved["version"] == 1 and "whom" not in saved["text"]

    # The unsaved edit survives a visit to another view; opening another pane asks before dropping it.
    await page.get_by_test_id("tab-chat").click()
    await page.get_by_test_id("tab-automations").click()
    await expect(page.get_by_test_id("run-form")).to_be_visible()  # the pane drawn again
    await expect(page.get_by_test_id("automation-yaml")).to_have_value(re.compile(r"input\.whom"))
    await page.get_by_test_id("automation-new").click()
    dialog = page.get_by_test_id("automation-discard-dialog")
    await dialog.get_by_test_id("dialog-cancel").click()
    await expect(page.get_by_test_id("detail-name")).to_have_text("hello")
    await expect(page.get_by_test_id("automation-yaml")).to_have_value(re.compile(r"input\.whom"))
    await page.get_by_test_id("automation-new").click()
    await page.get_by_test_id("automation-discard").click()
    await expect(page.get_by_test_id("automation-save")).to_have_text("Create")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_reject_and_cancel(context: BrowserContext, server: ServerProcess, workspace: Path) -> None:
    await ask_before_writing(server)
    page = await open_automations(context, server)
    await create(page, HELLO)
    await page.get_by_test_id("automation-run").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "waiting_for_human")
    # From another view, the toast asking for the approval opens the run.
    await page.get_by_test_id("tab-chat").click()
    asking = page.get_by_test_id("notification-toast").filter(has_text="hello waits for your approval")
    await asking.get_by_test_id("notification-accept").click()
    await expect(page.get_by_test_id("automations-view")).to_be_visible()
    await expect(asking).to_have_count(0)
    run = page.get_by_test_id("run").first
    await expect(run.get_by_test_id("run-pending")).to_be_visible()
    await run.get_by_test_id("run-reject").click()
    await expect(run).to_have_attribute("data-status", "failed")
    await expect(run.get_by_test_id("run-error")).to_be_visible()
    await expect(run.get_by_test_id("run-pending")).to_have_count(0)
    await expect(page.get_by_test_id("automations-waiting")).to_be_hidden()
    assert not (workspace / "hello.txt").exists()

    # Another run, cancelled while it waits.
    await page.get_by_test_id("automation-run").click()
    await expect(page.get_by_test_id("run")).to_have_count(2)
    newest = page.get_by_test_id("run").first
    await expect(newest).to_have_attribute("data-status", "waiting_for_human")
    await newest.get_by_test_id("run-cancel").click()
    await expect(newest).to_have_attribute("data-status", "cancelled")
    await expect(newest.get_by_test_id("run-cancel")).to_have_count(0)
    runs = (await rpc(server, "automation/runs", {"id": "hello"}))["runs"]
    assert [r["status"] for r in runs] == ["cancelled", "failed"]
    assert not (workspace / "hello.txt").exists()
    assert page.errors == []  # type: ignore[attr-defined]


async def test_resume_an_interrupted_run_then_cancel_it(
    context: BrowserContext, server: ServerProcess, tmp_path: Path
) -> None:
    """The server killed during a step with side effects: the run is interrupted; Resume asks before running the step
    again; approved, it runs again, and Cancel stops it."""
    nap = "name: nap\nsteps:\n  - {id: nap, type: toolCall, tool: sleep, arguments: {label: z, seconds: 60}}\n"
    await rpc(server, "automation/create", {"text": nap})
    page = await open_automations(context, server)
    await page.get_by_test_id("automation-run").click()
    run = page.get_by_test_id("run").first
    await expect(run.get_by_test_id("step-status")).to_have_text("running")
    await marked(tmp_path, ["start z"])

    server.kill()
    await expect(page.locator("[data-testid=connection][data-state=reconnecting]")).to_be_visible()
    server.start()
    await expect(page.locator("[data-testid=connection][data-state=open]")).to_be_visible()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "interrupted")
    await expect(run.get_by_test_id("step-status")).to_have_text("interrupted")
    await expect(run.get_by_test_id("run-error")).to_contain_text("The server stopped while step nap ran")
    await run.get_by_test_id("run-resume").click()
    await expect(run).to_have_attribute("data-status", "waiting_for_human")
    await expect(run.get_by_test_id("pending-reason")).to_contain_text("Run it again?")
    await run.get_by_test_id("run-approve").click()
    await expect(run).to_have_attribute("data-status", "running")
    await marked(tmp_path, ["start z", "start z"])
    await run.get_by_test_id("run-cancel").click()
    await expect(run).to_have_attribute("data-status", "cancelled")
    await expect(run.get_by_test_id("run-resume")).to_have_count(0)
    assert marks(tmp_path) == ["start z", "start z"]  # stopped, never finished
    assert page.errors == []  # type: ignore[attr-defined]


async def test_run_inputs_from_the_form(context: BrowserContext, server: ServerProcess) -> None:
    forms = """\
name: forms
inputs:
  who: {type: string, description: Whom to greet}
  count: {type: number, default: 2}
  loud: {type: boolean, default: false}
  tags: {type: array, default: [a]}
steps:
  - {id: tell, type: notification, tier: urgent, title: "Hi ${input.who}", body: "${input.count} ${input.loud} ${input.tags}"}
"""
    await rpc(server, "automation/create", {"text": forms})
    page = await open_automations(context, server)
    field = lambda name: page.locator(f"[data-testid=run-input][data-name={name}]")  # noqa: E731
    await expect(field("count")).to_have_value("2")
    await expect(field("loud")).not_to_be_checked()
    await expect(field("tags")).to_have_value('["a"]')
    await expect(page.get_by_test_id("run-form")).to_contain_text("Whom to greet")

    # A required input left empty: the server says so and nothing runs.
    await page.get_by_test_id("automation-run").click()
    await expect(page.get_by_test_id("run-form-error")).to_contain_text("who")
    await expect(page.get_by_test_id("runs-empty")).to_be_visible()
    # JSON that does not parse is caught before anything is sent.
    await field("who").fill("Ada")
    await field("tags").fill("[oops")
    await page.get_by_test_id("automation-run").click()
    await expect(page.get_by_test_id("run-form-error")).to_have_text("tags: not valid JSON")
    assert (await rpc(server, "automation/runs", {"id": "forms"}))["runs"] == []

    await field("count").fill("3")
    await field("loud").check()
    await field("tags").fill('["x", "y"]')
    await page.get_by_test_id("automation-run").click()
    await expect(page.get_by_test_id("run-form-error")).to_be_hidden()
    await expect(page.get_by_test_id("run").first).to_have_attribute("data-status", "done")
    toast = page.get_by_test_id("notification-toast").filter(has_text="Hi Ada")
    await expect(toast.get_by_test_id("notification-body")).to_have_text('3 true ["x", "y"]')
    runs = (await rpc(server, "automation/runs", {"id": "forms"}))["runs"]
    assert runs[0]["inputs"] == {"who": "Ada", "count": 3, "loud": True, "tags": ["x", "y"]}

    # Snoozed: the toast goes, the server keeps the answer (and shows it again later).
    await toast.get_by_test_id("notification-snooze").click()
    await expect(toast).to_have_count(0)
    listed = (await rpc(server, "notification/list"))["notifications"]
    assert [(n["title"], n["response"]) for n in listed] == [("Hi Ada", "snooze")]
    assert page.errors == []  # type: ignore[attr-defined]


async def test_an_agent_step_is_answered_in_its_session(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, workspace: Path
) -> None:
    await ask_before_writing(server)
    mock_llm.set_script(
        [tool_step("write", filePath="agent.txt", content="from the agent"), MockResponse(text="Wrote agent.txt.")]
    )
    flow = "name: scribe\nsteps:\n  - {id: write_it, type: agentStep, prompt: Write agent.txt}\n"
    await rpc(server, "automation/create", {"text": flow})
    page = await open_automations(context, server)
    await page.get_by_test_id("automation-run").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "waiting_for_human")
    pending = run.get_by_test_id("run-pending")
    await expect(pending).to_contain_text("waits for you in the automation's session")
    await expect(pending.get_by_test_id("run-approve")).to_have_count(0)
    await pending.get_by_test_id("pending-open-session").click()

    # The automation's session, with the agent's question: answered like any approval.
    await expect(page.get_by_test_id("session-title")).to_have_text("Automation: scribe")
    await page.get_by_test_id("approval").get_by_test_id("approve").click()
    await expect(page.get_by_test_id("assistant-message").last).to_have_text("Wrote agent.txt.")
    assert (await anyio.Path(workspace / "agent.txt").read_text(encoding="utf-8")) == "from the agent"
    await expect(page.get_by_test_id("automations-waiting")).to_be_hidden()
    await page.get_by_test_id("tab-automations").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "done")
    await expect(run.get_by_test_id("step-preview")).to_have_text("Wrote agent.txt.")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_disable_enable_export_and_delete(context: BrowserContext, server: ServerProcess) -> None:
    page = await open_automations(context, server)
    cron = "name: weekday-report\ndescription: Every weekday\ntrigger: {type: cron, expression: '0 9 * * 1-5', timezone: Europe/Paris}\n"
    cron += "steps:\n  - {id: tell, type: notification, title: Report}\n"
    await create(page, cron)
    report = item(page, "weekday-report")
    await expect(report.get_by_test_id("automation-trigger")).to_have_text(
        re.compile(r"^Weekdays at 09:00 \(Europe/Paris\) · next .*\d\d:\d\d$")
    )

    toggle = report.get_by_test_id("automation-toggle")
    await toggle.click()
    await expect(report).to_have_attribute("data-enabled", "false")
    await expect(report.get_by_test_id("automation-trigger")).to_have_text("Weekdays at 09:00 (Europe/Paris) · off")
    assert (await rpc(server, "automation/get", {"id": "weekday-report"}))["enabled"] is False
    await page.reload()
    await page.get_by_test_id("tab-automations").click()
    await expect(item(page, "weekday-report").get_by_test_id("automation-toggle")).not_to_be_checked()
    await item(page, "weekday-report").get_by_test_id("automation-toggle").click()
    await expect(item(page, "weekday-report")).to_have_attribute("data-enabled", "true")
    assert (await rpc(server, "automation/get", {"id": "weekday-report"}))["enabled"] is True

    # Export: the saved YAML, as a file.
    async with page.expect_download() as info:
        await page.get_by_test_id("automation-export").click()
    download = await info.value
    assert download.suggested_filename == "weekday-report.yaml"
    saved = await rpc(server, "automation/get", {"id": "weekday-report"})
    assert await anyio.Path(await download.path()).read_text(encoding="utf-8") == saved["text"]

    # Delete: Cancel keeps it; Delete removes it.
    await page.get_by_test_id("automation-delete").click()
    dialog = page.get_by_test_id("automation-delete-dialog")
    await expect(dialog).to_contain_text("This cannot be undone.")
    await expect(dialog.get_by_test_id("dialog-cancel")).to_be_focused()
    await dialog.get_by_test_id("dialog-cancel").click()
    await expect(dialog).to_have_count(0)
    assert len((await rpc(server, "automation/list"))["automations"]) == 1
    await page.get_by_test_id("automation-delete").click()
    await page.get_by_test_id("automation-delete-confirm").click()
    await expect(page.get_by_test_id("automation-item")).to_have_count(0)
    await expect(page.get_by_test_id("automations-empty")).to_be_visible()
    assert (await rpc(server, "automation/list"))["automations"] == []
    assert page.errors == []  # type: ignore[attr-defined]


async def test_untrusted_text_is_shown_as_text(context: BrowserContext, server: ServerProcess) -> None:
    """A description, a step's output and error, and a notification's title and body, all holding markup."""
    page = await open_automations(context, server)
    flow = {
        "name": "xss",
        "description": XSS,
        "steps": [
            {"id": "look", "type": "toolCall", "tool": "peek", "arguments": {"label": XSS}},
            {"id": "tell", "type": "notification", "tier": "urgent", "title": XSS, "body": f"body {XSS}"},
            {"id": "boom", "type": "toolCall", "tool": "fail", "arguments": {"message": f"failed {XSS}"}},
        ],
    }
    await rpc(server, "automation/create", {"definition": flow})
    await page.reload()
    await page.get_by_test_id("tab-automations").click()
    xss = item(page, "xss")
    await expect(xss.get_by_test_id("automation-description")).to_have_text(XSS)
    await expect(page.get_by_test_id("detail-description")).to_have_text(XSS)
    await page.get_by_test_id("automation-run").click()
    run = page.get_by_test_id("run").first
    await expect(run).to_have_attribute("data-status", "failed")
    steps = run.get_by_test_id("run-step")
    await expect(steps.first.get_by_test_id("step-preview")).to_contain_text(XSS)
    await expect(steps.last.get_by_test_id("step-error")).to_contain_text(f"failed {XSS}")  # a failed step opens
    toast = page.get_by_test_id("notification-toast")
    await expect(toast.get_by_test_id("notification-title")).to_have_text(XSS)
    await expect(toast.get_by_test_id("notification-body")).to_have_text(f"body {XSS}")
    assert await page.locator("img").count() == 0
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_trigger_in_words(context: BrowserContext, server: ServerProcess) -> None:
    page = await open_ui(context, server)
    cases = {
        "0 9 * * 1-5": "Weekdays at 09:00",
        "30 8 * * 1,3,5": "Every Monday, Wednesday and Friday at 08:30",
        "0 9,17 * * *": "Every day at 09:00 and 17:00",
        "*/15 * * * *": "Every 15 minutes",
        "5 * * * *": "Every hour at :05",
        "0 0 1 * *": "On the 1st of every month at 00:00",
        "0 9 * * 0,6": "Weekends at 09:00",
        "@daily": "Every day at 00:00",
        "0 9 1-7 * 1": None,  # said as written
    }
    words = await page.evaluate(
        "async (cases) => { const m = await import('/static/js/triggers.js');"
        " return Object.fromEntries(Object.keys(cases).map((e) => [e, m.cronWords(e)])); }",
        cases,
    )
    assert words == cases
    triggers = [
        {"type": "manual"},
        {"type": "cron", "expression": "0 9 1-7 * 1", "timezone": "UTC"},
        {"type": "file", "patterns": ["inbox/*.pdf"]},
        {"type": "file", "patterns": ["a/*", "b/*"], "events": ["created"]},
        {"type": "sessionEvent", "eventType": "done"},
        {"type": "mcpNotification", "server": "github", "method": "notifications/resources/updated"},
    ]
    said = await page.evaluate(
        "async (ts) => { const m = await import('/static/js/triggers.js'); return ts.map(m.triggerWords); }", triggers
    )
    assert said == [
        "Run by hand",
        "On the schedule 0 9 1-7 * 1 (UTC)",
        "When a file matching inbox/*.pdf changes",
        "When a file matching a/* or b/* is created",
        "On each session's done event",
        "On notifications/resources/updated from the MCP server github",
    ]


@pytest.mark.parametrize(("width", "height"), [(420, 900), (1400, 900)])
async def test_the_view_narrow_and_wide(
    browser: Browser, server: ServerProcess, artifacts: Path, width: int, height: int
) -> None:
    await ask_before_writing(server)
    await rpc(server, "automation/create", {"text": HELLO})
    cron = {"name": "weekday-report", "description": "A long description " * 6,
            "trigger": {"type": "cron", "expression": "0 9 * * 1-5", "timezone": "Europe/Paris"},
            "steps": [{"id": "tell", "type": "notification", "title": "Report"}]}  # fmt: skip
    await rpc(server, "automation/create", {"definition": cron})
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await open_automations(context, server)
        await item(page, "hello").get_by_test_id("automation-open").click()
        await expect(page.get_by_test_id("detail-name")).to_have_text("hello")
        await page.get_by_test_id("automation-run").click()
        await expect(page.get_by_test_id("run").first).to_have_attribute("data-status", "waiting_for_human")
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        for testid in (
            "automation-new",
            "automation-run",
            "run-approve",
            "run-reject",
            "automation-save",
            "automations-waiting",
        ):
            box = await page.get_by_test_id(testid).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, testid
        await page.screenshot(path=str(artifacts / f"automations-{width}.png"))
        await page.get_by_test_id("run-approve").click()
        await expect(page.get_by_test_id("notification-toast")).to_be_visible()
        await expect(page.get_by_test_id("run").first).to_have_attribute("data-status", "done")
        await page.get_by_test_id("notifications-button").click()
        panel = page.get_by_test_id("notifications-panel")
        await expect(panel.get_by_test_id("notification-title")).to_have_text(
            ["Wrote hello.txt", "hello waits for your approval"]
        )
        box = await panel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        await page.screenshot(path=str(artifacts / f"automations-notifications-{width}.png"))
        # The pane scrolls inside the page: a window tall enough to show all of it, for the picture.
        await page.keyboard.press("Escape")
        await page.set_viewport_size({"width": width, "height": 2000})
        await page.screenshot(path=str(artifacts / f"automations-done-{width}.png"))
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        await context.close()


async def test_automations_made_or_removed_elsewhere_show_up_without_a_reload(
    context: BrowserContext, server: ServerProcess
) -> None:
    page = await open_automations(context, server)
    await expect(page.get_by_test_id("automations-empty")).to_be_visible()
    # Another client (or the agent's proposeAutomation) creates one: `automation/changed` reaches the open page.
    made = await rpc(server, "automation/create", {"text": HELLO})
    await expect(item(page, made["name"])).to_be_visible()
    await rpc(server, "automation/disable", {"id": made["id"]})
    await expect(item(page, made["name"])).to_have_attribute("data-enabled", "false")
    await rpc(server, "automation/delete", {"id": made["id"]})
    await expect(item(page, made["name"])).to_have_count(0)
