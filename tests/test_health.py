"""`Core.health()`: each subsystem ready, degraded or disabled with its reason, read live at every call."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from pathlib import Path

import pytest

from cowork.core import Core
from cowork.models import no_provider_message
from cowork.protocol import HealthResult, McpAddParams, SubsystemHealth
from cowork.sandbox import find_bwrap
from cowork.sessions import GIT_MISSING
from cowork.testing.core import CoreHarness

from .mcp.conftest import MCP_ENV, stdio_server, wait_status

pytestmark = pytest.mark.anyio

MISSING_BWRAP = {"COWORK_TOOLS__SANDBOX__BWRAP_PATH": "/nonexistent/bwrap"}
EXITS_AT_ONCE = "import sys; sys.exit('no database at /srv/db')"
SCHEDULER = [SubsystemHealth(name="scheduler", status="ready")]
EMBEDDER = SubsystemHealth(
    name="embedder",
    status="ready",
    reason="all-MiniLM-L6-v2 on this machine (loads with the first search or indexing job).",
)


def statuses(health: HealthResult) -> dict[str, str]:
    return {s.name: s.status for s in health.subsystems}


def subsystem(health: HealthResult, name: str) -> SubsystemHealth:
    return next(s for s in health.subsystems if s.name == name)


@pytest.mark.skipif(
    find_bwrap() is None or shutil.which("git") is None, reason="needs bubblewrap and git (apt install bubblewrap git)"
)
async def test_a_working_core_is_ready_and_says_what_is_off(harness: CoreHarness) -> None:
    core = await harness.core()
    assert await core.health() == HealthResult(
        status="ready",
        subsystems=[
            SubsystemHealth(name="store", status="ready"),
            SubsystemHealth(name="providers", status="ready"),
            SubsystemHealth(name="mcp", status="disabled", reason="No MCP servers are configured."),
            SubsystemHealth(name="sandbox", status="ready"),
            SubsystemHealth(name="checkpoints", status="ready"),
            SubsystemHealth(name="tracing", status="ready"),
            SubsystemHealth(
                name="toolbox",
                status="disabled",
                reason="Not installed yet: installed in the background after start-up (or `cowork toolbox install`).",
            ),
            EMBEDDER,
            SubsystemHealth(
                name="capture",
                status="disabled",
                reason="No capture source can run here. x11: no X display ($DISPLAY is not set).",
            ),
            *SCHEDULER,
        ],
    )


async def test_a_failing_mcp_server_and_a_missing_sandbox_are_degraded_with_their_reasons(
    harness: CoreHarness,
) -> None:
    core = await harness.core(env=MCP_ENV | MISSING_BWRAP)
    await core.mcp.add(stdio_server("good"))
    await core.mcp.add(
        McpAddParams(name="broken", transport="stdio", command=sys.executable, args=["-c", EXITS_AT_ONCE])
    )
    await wait_status(core, "good", "running")
    failed = await wait_status(core, "broken", "error")
    health = await core.health()
    assert health.status == "degraded"
    assert statuses(health) == {
        "store": "ready",
        "providers": "ready",
        "mcp": "degraded",
        "sandbox": "degraded",
        "checkpoints": statuses(health)["checkpoints"],  # (git on this machine: its own test below)
        "tracing": "ready",
        "toolbox": "disabled",
        "embedder": "ready",
        "capture": "disabled",  # no display in the tests' environment
        "scheduler": "ready",
    }
    assert subsystem(health, "mcp").reason == f"broken (error): {failed.reason}"  # the working one is not named
    assert failed.reason is not None and "no database at /srv/db" in failed.reason  # its stderr, to act on
    sandbox = subsystem(health, "sandbox")
    assert sandbox.reason == core.sandbox_note
    assert sandbox.reason is not None and "bubblewrap (bwrap) was not found" in sandbox.reason
    await core.mcp.set_enabled("broken", False)  # read live: nothing is cached between calls
    assert statuses(await core.health())["mcp"] == "ready"
    await core.mcp.set_enabled("good", False)
    assert subsystem(await core.health(), "mcp") == SubsystemHealth(
        name="mcp", status="disabled", reason="Every MCP server is disabled."
    )


async def test_what_the_configuration_turns_off_is_disabled_not_degraded(harness: CoreHarness) -> None:
    core = await harness.core(
        env={"COWORK_TOOLS__SANDBOX__ENABLED": "false", "COWORK_CHECKPOINTS__ENABLED": "false"} | MISSING_BWRAP
    )
    health = await core.health()
    assert subsystem(health, "sandbox") == SubsystemHealth(
        name="sandbox",
        status="disabled",
        reason="The sandbox is off (tools.sandbox.enabled = false): shell commands run unconfined.",
    )
    assert subsystem(health, "checkpoints") == SubsystemHealth(
        name="checkpoints",
        status="disabled",
        reason="Checkpoints are off (checkpoints.enabled = false): changes cannot be taken back.",
    )
    assert health.status == "ready"


async def test_no_provider_is_degraded_with_the_words_turn_start_uses(harness: CoreHarness) -> None:
    core = await harness.core("")
    health = await core.health()
    assert subsystem(health, "providers") == SubsystemHealth(
        name="providers", status="degraded", reason=no_provider_message()
    )
    assert health.status == "degraded"


async def test_git_missing_degrades_checkpoints(
    harness: CoreHarness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    core = await harness.core()
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    assert subsystem(await core.health(), "checkpoints") == SubsystemHealth(
        name="checkpoints", status="degraded", reason=GIT_MISSING
    )


async def test_a_store_that_cannot_be_read_is_degraded(harness: CoreHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    core: Core = await harness.core()

    async def broken(_fn: object) -> object:
        raise OSError("disk I/O error")

    monkeypatch.setattr(core.db, "read", broken)
    store = subsystem(await core.health(), "store")
    assert store.status == "degraded"
    assert store.reason == f"The database cannot be read ({core.db.where}): OSError: disk I/O error"


async def test_a_scheduler_that_stopped_is_degraded_with_why(harness: CoreHarness) -> None:
    core = await harness.core()
    assert subsystem(await core.health(), "scheduler").status == "ready"
    loop = core.automations._loop_task  # the cron loop, killed the way a bug would kill it
    assert loop is not None
    loop.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await loop

    async def broken() -> None:
        raise RuntimeError("the store went away")

    core.automations._loop_task = asyncio.get_running_loop().create_task(broken())
    await asyncio.sleep(0)
    scheduler = subsystem(await core.health(), "scheduler")
    assert scheduler.status == "degraded" and scheduler.reason is not None and "the store went away" in scheduler.reason
