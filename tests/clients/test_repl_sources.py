"""An answer's sources in the REPL (a real pty, a real server, the real local embedder): the `Sources:` line under
the answer, `/source N` showing passage N, and what it says for a number the answer has not got or a passage whose
file was indexed again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn
from .test_repl_approvals import quit_

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests

LEAVE = "# Holiday policy\n\nEmployees get twenty-five days of paid vacation per year. Unused days expire in March.\n"


def index(workspace: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cowork", "index", "docs", "--json"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and '"status": "done"' in done.stdout, done.stderr


def test_sources_under_the_answer_and_source_n(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]
) -> None:
    (workspace / "docs" / "leave.md").write_text(LEAVE, encoding="utf-8")
    env = cli_env | provider_env("openai", mock_llm.openai_base_url) | {"COWORK_MEMORY__CONTEXT": "auto"}
    index(workspace, env)  # starts the server the REPL then uses, document context on
    mock_llm.set_script([MockResponse(text="Twenty-five days a year.")])
    child = spawn(workspace, env)
    child.expect(PROMPT)
    child.send("/source 1\r")
    child.expect("No answer yet in this session")
    child.expect(PROMPT)

    child.send("How many vacation days do employees get?\r")
    child.expect("Sources: \\[1\\] docs/leave.md › Holiday policy")
    child.expect(PROMPT)
    shown = screen(child)
    assert shown.index("Twenty-five days a year.") < shown.index("Sources: [1]")

    child.send("/source 1\r")
    child.expect("Employees get twenty-five days of paid vacation per year")
    child.expect(PROMPT)
    passage = screen(child).rsplit("/source 1", 1)[1]
    assert passage.index("[1] docs/leave.md › Holiday policy") < passage.index("Employees get twenty-five days")
    child.send("/source 9\r")
    child.expect("No source \\[9\\]: the latest answer has")
    child.expect(PROMPT)
    child.send("/source one\r")
    child.expect("Usage: /source N")
    child.expect(PROMPT)

    (workspace / "docs" / "leave.md").write_text(LEAVE.replace("twenty-five", "thirty"), encoding="utf-8")
    index(workspace, env)  # the passage the answer was given is replaced
    child.send("/source 1\r")
    child.expect("is no longer in the index: its file was indexed again")
    child.expect(PROMPT)
    child.send("/help\r")
    child.expect("/source N")
    child.expect(PROMPT)
    quit_(child)
    assert "Traceback" not in screen(child)
