"""Shared fixtures. No test may reach a real model provider: every provider variable is scrubbed here,
and the only model a test can talk to is the scripted mock LLM server from `cowork.testing.mockllm`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cowork.store import Database
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import PROVIDER_VARIABLES


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COWORK_HOME", str(tmp_path_factory.mktemp("cowork-home")))
    # Servers started by tests do not build the document toolbox in the background (tests/toolbox builds it).
    monkeypatch.setenv("COWORK_TOOLS__TOOLBOX__INSTALL", "never")
    # prompt_toolkit asks the terminal for the cursor position; a test pty never answers.
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    # Never touch the machine's real keyring: saved keys go to the test home's 0600 file.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # Never capture the desktop of whoever runs the tests: capture tests give their own Xvfb display explicitly.
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    # Nor pop notifications up on it: desktop-notification tests give their own private bus explicitly.
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("COWORK_HOME", str(path))
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder."""
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "notes.md").write_text("# Notes\n\nThe launch code word is PELICAN.\n", encoding="utf-8")
    (root / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    (root / "README.md").write_text("# Project\n", encoding="utf-8")
    return root


@pytest.fixture
def mock_llm() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
async def harness(home: Path, workspace: Path, mock_llm: MockLLMServer) -> AsyncIterator[CoreHarness]:
    """In-process cores against the mock LLM, with the test tools loaded; closed at the end."""
    h = CoreHarness(
        home,
        workspace,
        openai_base_url=mock_llm.openai_base_url,
        anthropic_base_url=mock_llm.anthropic_base_url,
        google_base_url=mock_llm.google_base_url,
    )
    yield h
    await h.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A real SQLite store in the test's folder, migrated to the newest schema."""
    database = Database.sqlite(tmp_path / "cowork.db")
    database.migrate()
    yield database
    database.close()
