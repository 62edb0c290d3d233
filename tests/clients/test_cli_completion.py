"""Tab completion at the REPL prompt: commands, their first word, names the REPL knows, folders for /cwd."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from cowork.clients.cli.completion import SlashCompleter
from cowork.clients.cli.repl import COMMANDS

NAMES = {
    "tools": ["mark", "read", "bash"],
    "mcp": ["time", "github"],
    "sessions": ["ses_1", "ses_2"],
    "automations": ["hello", "report"],
    "runs": ["run_b", "run_a"],
    "notifications": ["n2", "n1"],
}


def completions(text: str, cwd: Path = Path("/")) -> list[str]:
    completer = SlashCompleter(COMMANDS, names=lambda kind: NAMES.get(kind, []), cwd=lambda: cwd)
    document = Document(text, len(text))
    found = completer.get_completions(document, CompleteEvent(completion_requested=True))
    return [document.text[: len(document.text) + c.start_position] + c.text for c in found]


def test_commands_are_completed_and_all_documented() -> None:
    assert completions("/yo") == ["/yolo"]
    assert set(completions("/")) == set(COMMANDS)
    for command in ("/tools", "/cwd", "/network", "/yolo", "/mcp", "/help"):
        assert command in COMMANDS
    assert completions("hello") == []


def test_arguments_are_completed() -> None:
    assert completions("/yolo ") == ["/yolo on", "/yolo off"]
    assert completions("/network of") == ["/network off"]
    assert completions("/yolo on ") == []
    assert completions("/mcp ") == [
        f"/mcp {a}" for a in ("list", "enable", "disable", "restart", "remove", "add", "trust")
    ]
    assert completions("/mcp re") == ["/mcp restart", "/mcp remove"]
    assert completions("/mcp restart g") == ["/mcp restart github"]
    assert completions("/mcp add ") == []  # a new name: nothing to offer
    assert completions("/tools ma") == ["/tools mark"]
    assert completions("/tools mark a") == ["/tools mark always"]
    assert completions("/resume ses_") == ["/resume ses_1", "/resume ses_2"]
    assert completions("/automation r") == [f"/automation {a}" for a in ("run", "runs", "run-info", "resume", "reject")]
    assert completions("/automation run h") == ["/automation run hello"]
    assert completions("/automation approve ") == ["/automation approve run_b", "/automation approve run_a"]
    assert completions("/automation import ") == []  # a file: nothing to offer
    assert completions("/notifications d") == ["/notifications dismiss"]
    assert completions("/notifications snooze ") == ["/notifications snooze n2", "/notifications snooze n1"]


def test_cwd_completes_folders_relative_to_the_session(workspace: Path) -> None:
    assert completions("/cwd s", cwd=workspace) == ["/cwd src"]
    assert completions("/cwd d", cwd=workspace) == ["/cwd docs"]
    assert completions("/cwd R", cwd=workspace) == []  # README.md is a file
