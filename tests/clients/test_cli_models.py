"""The CLI's model and money commands in a real pseudo-terminal: /connect, /provider, /retry, /usage, /budget,
/reasoning, against a real (auto-started) server and the mock LLM."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pexpect
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse, MockUsage
from cowork.testing.server import provider_env

from .test_cli import PROMPT, cli_env, screen, spawn

pytestmark = pytest.mark.slow
__all__ = ["cli_env"]  # the fixture, imported for these tests


def flat(child: pexpect.spawn) -> str:
    return " ".join(screen(child).replace("│", " ").split())


def test_connect_status_retry_usage_budget_and_reasoning(
    workspace: Path, mock_llm: MockLLMServer, cli_env: dict[str, str], home: Path
) -> None:
    mock_llm.set_api_keys({"test-key", "sk-new"})
    usage = MockUsage(input_tokens=2000, output_tokens=300)
    mock_llm.set_script(
        [MockResponse(text="quick answer", usage=usage), MockResponse(text="careful answer", usage=usage)]
    )
    env = cli_env | provider_env("anthropic", mock_llm.anthropic_base_url, model="claude-haiku-5-5")
    env["OPENAI_BASE_URL"] = mock_llm.openai_base_url
    child = spawn(workspace, env)
    child.expect(PROMPT)

    # A wrong key is checked and refused: nothing is saved.
    child.send("/connect openai\r")
    child.expect("hidden")
    child.send("sk-wrong\r")
    child.expect("auth_failed")
    child.expect(PROMPT)
    assert "Nothing was saved" in flat(child) and "sk-wrong" not in screen(child)
    assert not (home / "auth" / "credentials.json").exists()
    child.send("/connect openai\r")
    child.expect("hidden")
    child.send("sk-new\r")
    child.expect("saved")
    child.expect(PROMPT)
    saved = home / "auth" / "credentials.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text(encoding="utf-8"))["secrets"] == {"provider/openai": "sk-new"}
    child.send("/provider openai\r")
    child.expect(r"OpenAI is connected")
    child.expect(PROMPT)
    assert "saved" in flat(child)

    child.send("Why is the sky blue?\r")
    child.expect("quick answer")
    child.expect(PROMPT)
    child.send("/retry\r")
    child.expect(r"Go ahead\?")
    assert "Retry with anthropic:claude-sonnet-5-5 (strong), ~$" in flat(child)
    child.send("y\r")
    child.expect("careful answer")
    child.expect(PROMPT)
    assert mock_llm.requests[-1].model == "claude-sonnet-5-5"

    child.send("/usage\r")
    child.expect("this month")
    child.expect(PROMPT)
    shown = flat(child)
    assert "anthropic:claude-haiku-5-5" in shown and "anthropic:claude-sonnet-5-5" in shown
    before = len(screen(child))
    child.send("/budget daily=5 weekly=none\r")
    try:
        child.expect("no cap")
    except pexpect.TIMEOUT:
        raise AssertionError(screen(child)[before - 200 :]) from None
    child.expect(PROMPT)
    budgets = " ".join(screen(child)[before:].replace("│", " ").split())
    assert "today $5.00" in budgets and "this week no cap" in budgets
    child.send("/budget daily=lots\r")
    child.expect("not an amount")
    child.expect(PROMPT)
    child.send("/reasoning high\r")
    child.expect("Reasoning effort: high")
    child.expect(PROMPT)
    child.send("/reasoning loud\r")
    child.expect("invalid_params")
    child.expect(PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)
