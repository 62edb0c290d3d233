"""The MCP server status machine: its table, reason updates, and `stop()` from every state without forcing one."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.config import McpConfig
from cowork.machines import InvalidTransition
from cowork.mcp._config import ServerConfig
from cowork.mcp._server import SERVER_MACHINE, McpServer
from cowork.protocol import McpServerInfo, McpStatus

pytestmark = pytest.mark.anyio

S = McpStatus

# A legal way to each state from a new server, through the table's own edges.
PATHS: dict[McpStatus, list[McpStatus]] = {
    S.STOPPED: [],
    S.STARTING: [S.STARTING],
    S.RUNNING: [S.STARTING, S.RUNNING],
    S.ERROR: [S.STARTING, S.ERROR],
    S.AUTH_REQUIRED: [S.STARTING, S.AUTH_REQUIRED],
    S.DISABLED: [S.DISABLED],
    S.UNTRUSTED: [S.UNTRUSTED],
}


def server(tmp_path: Path, seen: list[tuple[McpStatus, str | None]]) -> McpServer:
    async def no_tools(_server: McpServer) -> None:
        return None

    return McpServer(
        ServerConfig(name="s", transport="stdio", command="never-run"),
        settings=McpConfig(),
        lock_dir=tmp_path,
        on_change=lambda s: seen.append((s.status, s.reason)),
        on_tools=no_tools,
    )


def at(tmp_path: Path, state: McpStatus, seen: list[tuple[McpStatus, str | None]]) -> McpServer:
    s = server(tmp_path, seen)
    for step in PATHS[state]:
        s.set_status(step, f"reason for {step}" if not step.is_live else None)
    assert s.status is state
    return s


def test_the_wire_values_are_unchanged() -> None:
    assert [s.value for s in McpStatus] == [
        "stopped",
        "starting",
        "running",
        "error",
        "auth_required",
        "disabled",
        "untrusted",
    ]
    info = McpServerInfo.model_validate(
        {"name": "s", "transport": "stdio", "status": "auth_required", "updatedAt": "2026-01-01T00:00:00Z"}
    )
    assert info.status is McpStatus.AUTH_REQUIRED
    assert info.model_dump(mode="json", by_alias=True)["status"] == "auth_required"


def test_no_state_transitions_to_itself() -> None:
    assert not [s for s in McpStatus if SERVER_MACHINE.allows(s, s)]


def test_every_state_can_be_stopped_and_disabled() -> None:
    for state in McpStatus:
        for target in (S.STOPPED, S.DISABLED):
            assert state is target or SERVER_MACHINE.allows(state, target), (state, target)


@pytest.mark.parametrize("state", list(McpStatus))
async def test_stop_from_every_state_rests_in_stopped(tmp_path: Path, state: McpStatus) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = at(tmp_path, state, seen)
    await s.stop()
    assert (s.status, s.reason) == (S.STOPPED, None)
    assert seen[-1:] == ([] if state is S.STOPPED else [(S.STOPPED, None)])


@pytest.mark.parametrize("state", list(McpStatus))
async def test_disabling_from_every_state_rests_in_disabled(tmp_path: Path, state: McpStatus) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = at(tmp_path, state, seen)
    await s.stop(S.DISABLED, "Disabled.")
    assert (s.status, s.reason) == (S.DISABLED, "Disabled.")


@pytest.mark.parametrize("state", [S.STARTING, S.RUNNING, S.ERROR])
async def test_a_start_that_timed_out_stops_in_error(tmp_path: Path, state: McpStatus) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = at(tmp_path, state, seen)
    await s.stop(S.ERROR, "The server did not start within 30 s.")
    assert (s.status, s.reason) == (S.ERROR, "The server did not start within 30 s.")


async def test_stop_refuses_a_status_the_table_does_not_allow(tmp_path: Path) -> None:
    s = at(tmp_path, S.DISABLED, [])
    with pytest.raises(InvalidTransition, match="MCP server s: illegal transition disabled -> error"):
        await s.stop(S.ERROR, "no")
    assert s.status is S.DISABLED  # nothing forced


async def test_stopping_a_stopped_server_says_nothing(tmp_path: Path) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = server(tmp_path, seen)
    await s.stop()
    assert seen == []


def test_a_new_reason_in_the_same_resting_status_is_an_update(tmp_path: Path) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = at(tmp_path, S.ERROR, seen)
    s.set_status(S.ERROR, "Reconnecting in 2.0 s (attempt 2).")
    assert (s.status, s.reason) == (S.ERROR, "Reconnecting in 2.0 s (attempt 2).")
    assert seen[-2:] == [(S.ERROR, "reason for error"), (S.ERROR, "Reconnecting in 2.0 s (attempt 2).")]


@pytest.mark.parametrize("state", [S.STARTING, S.RUNNING])
def test_a_live_status_is_never_set_again(tmp_path: Path, state: McpStatus) -> None:
    s = at(tmp_path, state, [])
    with pytest.raises(InvalidTransition):
        s.set_status(state)


def test_illegal_changes_raise_and_change_nothing(tmp_path: Path) -> None:
    seen: list[tuple[McpStatus, str | None]] = []
    s = server(tmp_path, seen)
    with pytest.raises(InvalidTransition, match="stopped -> running"):
        s.set_status(S.RUNNING)
    assert s.status is S.STOPPED and seen == []
