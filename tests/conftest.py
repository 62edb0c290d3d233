"""Shared fixtures. No test may reach a real model provider: every provider variable is scrubbed here,
and the only model a test can talk to is the scripted mock LLM server from `cowork.testing.mockllm`."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cowork.store import Database
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.postgres import PostgresSchema
from cowork.testing.server import PROVIDER_VARIABLES

ENGINE = os.environ.get("COWORK_TEST_ENGINE", "sqlite")
"""The store every test's cores and servers use: `sqlite` (a file in the test's home) or `postgres` (a schema of
its own on the test server, dropped afterwards). `scripts/test` runs the suite once on each."""
if ENGINE not in ("sqlite", "postgres"):
    raise pytest.UsageError(f"COWORK_TEST_ENGINE must be sqlite or postgres, not {ENGINE!r}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The PostgreSQL half leaves out what only a SQLite file has (the `sqlite_file` mark), and what makes its own
    PostgreSQL schemas whatever the engine and so ran in the first half already (`own_postgres`)."""
    if ENGINE != "postgres":
        return

    def left(item: pytest.Item) -> bool:
        return any(item.get_closest_marker(mark) is not None for mark in ("sqlite_file", "own_postgres"))

    kept = [item for item in items if not left(item)]
    left_out = [item for item in items if left(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> str:
    return f"store engine: {ENGINE}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("COWORK_DATABASE_URL", raising=False)
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


@pytest.fixture(autouse=True)
def database_url(_isolated_environment: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str | None]:
    """The PostgreSQL schema of this test when the suite runs on PostgreSQL (None on SQLite). Every core and server
    the test starts finds it in COWORK_DATABASE_URL."""
    if ENGINE == "sqlite":
        yield None
        return
    with PostgresSchema() as schema:
        monkeypatch.setenv("COWORK_DATABASE_URL", schema.url)
        yield schema.url


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
def db(tmp_path: Path, database_url: str | None) -> Iterator[Database]:
    """A real store, migrated to the newest schema: a SQLite file in the test's folder, or the test's PostgreSQL
    schema."""
    database = Database.from_url(database_url, tmp_path / "cowork.db")
    database.migrate()
    yield database
    database.close()
