"""`/capture` and `/context` in the REPL (a real pty, a real server without a display): the state and why, consent
refused with the reason, a pause, what an earlier run captured, and deleting it after a yes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cowork.store import repos
from cowork.store.repos.activity import ActivitySpanRow
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.postgres import store_of

from .test_cli import PROMPT, cli_env, screen
from .test_repl_approvals import quit_, start

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def seed(home: Path) -> None:
    now = datetime.now(UTC)
    start_ = max(now - timedelta(minutes=50), now.astimezone().replace(hour=0, minute=0, second=0).astimezone(UTC))
    home.mkdir(parents=True, exist_ok=True)
    db = store_of(home)
    db.migrate()
    spans = [
        ActivitySpanRow("s1", "Inkscape", "logo.svg [bold]not markup[/bold]", None, start_, start_ + timedelta(minutes=20)),
        ActivitySpanRow("s2", "Evince", "invoice-0042.pdf", None, start_ + timedelta(minutes=20), now - timedelta(minutes=1)),
    ]  # fmt: skip
    db.write_sync(lambda c: repos.activity.put_many(c, spans))
    db.close()


def test_capture_and_context_commands(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    seed(Path(cli_env["COWORK_HOME"]))
    child = start(workspace, mock_llm, cli_env, tmp_path)
    child.send("/capture\r")
    child.expect("capture unavailable")
    child.expect(PROMPT)
    shown = screen(child)
    assert "no X display" in shown and "keystrokes" in shown and "kept for 30 days" in shown

    child.send("/capture on keystrokes\r")
    child.expect("passwords")
    child.expect(PROMPT)
    child.send("/capture exclude app Signal*\r")
    child.expect("your exclusions: app Signal\\*")
    child.expect(PROMPT)
    child.send("/capture pause 30\r")
    child.expect("capture paused")
    child.expect(PROMPT)

    child.send("/context\r")
    child.expect("invoice-0042.pdf")
    child.expect(PROMPT)
    listing = screen(child)
    assert "Inkscape" in listing and "20 min" in listing
    assert "[bold]not markup[/bold]" in listing  # a window title is shown as it is, never as markup
    child.send("/context Inksc\r")
    child.expect("logo.svg")
    child.expect(PROMPT)
    assert "invoice-0042.pdf" not in screen(child).split("/context Inksc")[-1]

    child.send("/context delete 24h\r")
    child.expect("\\[y/N\\]")
    child.send("y\r")
    child.expect("Deleted \\(2 spans touched\\)")
    child.expect(PROMPT)
    child.send("/context\r")
    child.expect("Nothing captured")
    child.expect(PROMPT)
    quit_(child)
