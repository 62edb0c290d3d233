"""The install state machine against real processes, a real SQLite file and the file credential store."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import stat
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from cowork.credentials import CredentialStore
from cowork.mcp.install import InstallService
from cowork.protocol import ErrorCode, InstallInfo, ProtocolError
from cowork.store import Database, repos

pytestmark = pytest.mark.anyio

# A real stdio MCP server: the MCP-core helper's test server when present, else mcp-server-time from PyPI.
if importlib.util.find_spec("cowork.testing.mcp_servers") is not None:
    SERVER_ARGS = ["-m", "cowork.testing.mcp_servers", "normal"]
else:
    SERVER_ARGS = ["-m", "mcp_server_time"]


class Installs:
    """Builds install services on one home (a second one is a restarted Cowork) and closes them."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.saved: list[dict[str, Any]] = []
        self.events: list[InstallInfo] = []
        self._open: list[tuple[InstallService, Database]] = []
        self.credentials = CredentialStore(home, backend="file")

    async def service(self, *, start_timeout: float = 30.0) -> InstallService:
        db = Database.sqlite(self.home / "cowork.db")
        db.migrate()

        async def save(config: dict[str, Any]) -> None:
            from datetime import UTC, datetime

            from cowork.store.repos.mcp_servers import McpServerRow

            now = datetime.now(UTC)
            row = McpServerRow(
                name=config["name"],
                transport=config["transport"],
                created_at=now,
                updated_at=now,
                command=config.get("command"),
                args=config.get("args", []),
                env=config.get("env", {}),
                url=config.get("url"),
            )
            await db.write(lambda c: repos.mcp_servers.upsert(c, row))
            self.saved.append(config)

        async def remove(name: str) -> None:
            await db.write(lambda c: repos.mcp_servers.delete(c, name))

        service = InstallService(db, self.credentials, save=save, remove=remove, start_timeout=start_timeout)
        service.subscribe(self.events.append)
        await service.load()
        self._open.append((service, db))
        return service

    async def restart(self) -> InstallService:
        await self.close()
        return await self.service()

    def servers(self) -> list[str]:
        db = Database.sqlite(self.home / "cowork.db")
        try:
            return [r.name for r in db.read_sync(repos.mcp_servers.all_rows)]
        finally:
            db.close()

    async def close(self) -> None:
        for service, db in self._open:
            await service.aclose()
            db.close()
        self._open.clear()


@pytest.fixture
async def installs(tmp_path: Path) -> AsyncIterator[Installs]:
    found = Installs(tmp_path / "home")
    yield found
    await found.close()


def fake_program(folder: Path, name: str, version: str) -> None:
    """A program on PATH that reports `version`, as `node --version` would."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{name} v{version}'\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def manifest(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "test server",
        "transport": "stdio",
        "command": sys.executable,
        "args": SERVER_ARGS,
        **extra,
    }


CONFIG_FORM = {
    "type": "object",
    "properties": {
        "apiKey": {"type": "string", "minLength": 8, "x-secret": True, "title": "API key"},
        "region": {"type": "string", "enum": ["eu", "us"]},
    },
    "required": ["apiKey", "region"],
}


def children(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if any(marker in part for part in proc.cmdline()):
                found.append(proc)
        except psutil.NoSuchProcess:
            pass
    return found


async def until(predicate: Callable[[], bool], within: float = 20.0) -> None:
    async def wait() -> None:
        while True:
            if predicate():
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), within)


async def test_pause_for_dependencies_survives_a_restart_then_configure_and_finish(
    installs: Installs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    service = await installs.service()
    info = await service.start(
        manifest(
            "timey",
            dependencies=[{"name": "cowork-fake-node", "version": ">=18"}, {"name": "python"}],
            env={"TIMEY_API_KEY": "${config.apiKey}", "TIMEY_REGION": "${config.region}"},
            config=CONFIG_FORM,
        )
    )
    assert info.state == "DEPENDENCIES_REQUIRED"
    assert info.progress == 40
    fake, python = info.dependencies
    assert (fake.name, fake.found, fake.satisfied, fake.required) == ("cowork-fake-node", False, False, ">=18")
    assert fake.install_hint is not None and "cowork-fake-node >=18 is required" in fake.install_hint
    assert (python.found, python.satisfied) == (True, True) and python.version
    assert [e.state for e in installs.events] == ["FETCHING_MANIFEST", "CHECKING_DEPENDENCIES", "DEPENDENCIES_REQUIRED"]
    assert [e.progress for e in installs.events] == [15, 30, 40]

    # Cowork restarts: the install is still waiting where it was.
    service = await installs.restart()
    assert (await service.get(info.install_id)).state == "DEPENDENCIES_REQUIRED"
    assert [i.install_id for i in await service.list()] == [info.install_id]

    # Too old: still paused, and the hint says what was found.
    fake_program(bin_dir, "cowork-fake-node", "16.2.0")
    again = await service.continue_(info.install_id)
    assert again.state == "DEPENDENCIES_REQUIRED"
    assert again.dependencies[0].found and again.dependencies[0].version == "16.2.0"
    assert "found 16.2.0" in (again.dependencies[0].install_hint or "")

    fake_program(bin_dir, "cowork-fake-node", "20.11.1")
    form = await service.continue_(info.install_id)
    assert form.state == "CONFIGURATION_REQUIRED" and form.progress == 50
    assert form.form == CONFIG_FORM

    # A restart at the second pause, too.
    service = await installs.restart()
    assert (await service.get(info.install_id)).state == "CONFIGURATION_REQUIRED"

    # Bad values: a clear error naming the fields, and nothing changes.
    with pytest.raises(ProtocolError) as bad:
        await service.continue_(info.install_id, {"apiKey": "short", "region": "mars"})
    assert bad.value.code == ErrorCode.INVALID_PARAMS
    assert "apiKey" in bad.value.message and "region" in bad.value.message
    assert "short" not in bad.value.message  # a secret is never echoed
    assert (await service.get(info.install_id)).state == "CONFIGURATION_REQUIRED"
    assert installs.credentials.names() == []

    secret = f"sk-{uuid.uuid4().hex}"
    done = await service.continue_(info.install_id, {"apiKey": secret, "region": "eu"})
    assert done.state == "COMPLETED", done
    assert done.progress == 100
    assert done.tools and all(isinstance(t, str) for t in done.tools)
    assert installs.credentials.get("mcp/timey/apiKey") == secret
    assert installs.saved == [
        {
            "name": "timey",
            "transport": "stdio",
            "command": sys.executable,
            "args": SERVER_ARGS,
            "env": {"TIMEY_API_KEY": "${credential:mcp/timey/apiKey}", "TIMEY_REGION": "eu"},
        }
    ]
    assert installs.servers() == ["timey"]
    # The secret went to the credential store only, never to the database.
    await installs.close()
    for path in installs.home.glob("cowork.db*"):
        assert secret.encode() not in path.read_bytes()
    with pytest.raises(ProtocolError) as finished:
        await (await installs.service()).continue_(info.install_id)
    assert finished.value.code == ErrorCode.NOT_RESUMABLE


async def test_cancel_while_starting_leaves_no_process_secret_or_config(installs: Installs) -> None:
    marker = f"cowork-install-hang-{uuid.uuid4().hex[:8]}"
    service = await installs.service(start_timeout=60)
    info = await service.start(
        {
            "name": "hangs",
            "command": sys.executable,
            "args": ["-c", "import sys, time; time.sleep(90)", marker],
            "env": {"KEY": "${config.token}"},
            "config": {"type": "object", "properties": {"token": {"type": "string", "x-secret": True}}},
        }
    )
    assert info.state == "CONFIGURATION_REQUIRED"
    starting = await service.continue_(info.install_id, {"token": "secret-token-value"}, wait=False)
    assert starting.state == "STARTING"
    await until(lambda: bool(children(marker)))
    assert installs.credentials.names() == ["mcp/hangs/token"]

    cancelled = await service.cancel(info.install_id)
    assert cancelled.state == "CANCELLED"
    await until(lambda: not children(marker), within=15)
    assert installs.credentials.names() == []
    assert installs.servers() == []
    assert installs.events[-1].state == "CANCELLED"
    # Cancelling again is a no-op; continuing is refused.
    assert (await service.cancel(info.install_id)).state == "CANCELLED"
    with pytest.raises(ProtocolError) as refused:
        await service.continue_(info.install_id)
    assert refused.value.code == ErrorCode.NOT_RESUMABLE
    service = await installs.restart()
    assert (await service.get(info.install_id)).state == "CANCELLED"


async def test_cancel_at_a_pause(installs: Installs) -> None:
    service = await installs.service()
    info = await service.start(manifest("paused", dependencies=[{"name": "node", "version": ">=999"}]))
    assert info.state == "DEPENDENCIES_REQUIRED"
    assert (await service.cancel(info.install_id)).state == "CANCELLED"
    assert installs.servers() == []


async def test_a_server_that_exits_at_once_ends_in_error_with_its_stderr(installs: Installs) -> None:
    service = await installs.service()
    script = (
        "import sys; print('starting', file=sys.stderr); print('fatal: API key rejected', file=sys.stderr); sys.exit(3)"
    )
    info = await service.start({"name": "crashy", "command": sys.executable, "args": ["-c", script]})
    assert info.state == "ERROR"
    assert info.error and "did not start" in info.error
    assert info.stderr_tail == "starting\nfatal: API key rejected"
    assert installs.servers() == []
    assert [e.state for e in installs.events][-2:] == ["STARTING", "ERROR"]
    # ERROR persists and can be retried.
    service = await installs.restart()
    assert (await service.get(info.install_id)).stderr_tail == "starting\nfatal: API key rejected"
    retried = await service.continue_(info.install_id)
    assert retried.state == "ERROR"


async def test_bad_manifests_are_refused_and_store_nothing(installs: Installs, tmp_path: Path) -> None:
    service = await installs.service()
    cases: list[tuple[dict[str, Any] | None, str | None, str]] = [
        ({"name": "Bad Name", "command": "x"}, None, "name"),
        ({"name": "nocmd"}, None, "needs a command"),
        ({"name": "web", "transport": "http"}, None, "needs a url"),
        ({"name": "tpl", "command": "x", "args": ["${config.missing}"]}, None, "no property 'missing'"),
        (
            {"name": "schema", "command": "x", "config": {"type": "object", "properties": {"a": {"type": 3}}}},
            None,
            "not a valid JSON schema",
        ),
        ({"name": "dep", "command": "x", "dependencies": [{"name": "node", "version": "latest"}]}, None, "version"),
        (None, str(tmp_path / "missing.json"), "does not exist"),
    ]
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    cases.append((None, str(tmp_path / "broken.json"), "not valid JSON"))
    for inline, path, expected in cases:
        with pytest.raises(ProtocolError) as refused:
            await service.start(inline, path)
        assert refused.value.code == ErrorCode.INVALID_PARAMS
        assert expected in refused.value.message, refused.value.message
    assert await service.list() == []
    assert installs.events == []


async def test_manifest_file_and_a_second_install_of_the_same_name(installs: Installs, tmp_path: Path) -> None:
    service = await installs.service()
    path = tmp_path / "manifest.json"
    import json

    path.write_text(json.dumps(manifest("filed", dependencies=[{"name": "node", "version": ">=999"}])), "utf-8")
    info = await service.start(manifest_path=str(path))
    assert info.state == "DEPENDENCIES_REQUIRED"
    with pytest.raises(ProtocolError) as busy:
        await service.start(manifest_path=str(path))
    assert busy.value.code == ErrorCode.BUSY
    with pytest.raises(ProtocolError) as unknown:
        await service.get("inst_nope")
    assert unknown.value.code == ErrorCode.MCP_INSTALL_NOT_FOUND
