"""After a turn that makes documents, the REPL names each with a one-line summary, in a real pty against a real
server and the mock LLM."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse, bash_step, tool_step
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def make_workbook(path: Path) -> None:
    """A workbook the turn's command copies into place: the sandbox cannot run Cowork's own Python when it lives
    under /tmp (the sandbox's /tmp is its own), as in a clone there."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    for row in (["Region", "Q1"], ["North", 120], ["South", 98]):
        ws.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


def test_documents_get_a_summary_line(workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str]) -> None:
    mock_llm.set_script(
        [
            bash_step("cp samples/sales.xlsx sales.xlsx"),
            tool_step("write", filePath="data/totals.csv", content="region,total\nNorth,255\nSouth,199\n"),
            MockResponse(text="made them"),
        ]
    )
    make_workbook(workspace / "samples" / "sales.xlsx")
    env = cli_env | provider_env("openai", mock_llm.openai_base_url)
    child = spawn(workspace, env | {"COWORK_TOOLS__AUTO_APPROVE": json.dumps(["write", "bash"])})
    child.expect(PROMPT)
    child.send("make the files\r")
    child.expect("made them")
    child.expect(PROMPT)
    shown = screen(child)
    assert (workspace / "sales.xlsx").is_file()
    assert "📄 sales.xlsx — 1 sheet: Sales (A1:B3) · 5 KB" in shown
    assert "📄 data/totals.csv — 3 rows × 2 columns · 33 B" in shown
    assert "Traceback" not in shown
