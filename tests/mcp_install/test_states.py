"""The install state machine: its table agrees with `InstallState`'s facts, and the wire and the store use one casing."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from cowork.machines import InvalidTransition
from cowork.mcp.install import INSTALL_MACHINE, PROGRESS
from cowork.protocol import InstallInfo, InstallState
from cowork.store import Database, repos
from cowork.store.repos.mcp_installs import McpInstallRow

S = InstallState


def test_final_states_are_the_enums_final_states() -> None:
    assert INSTALL_MACHINE.final == {s for s in InstallState if s.is_final} == {S.COMPLETED, S.CANCELLED}


def test_error_is_not_final_continue_retries_it() -> None:
    assert INSTALL_MACHINE.allows(S.ERROR, S.CHECKING_DEPENDENCIES)


def test_a_pause_is_left_only_by_continue_or_cancel() -> None:
    paused = {s for s in InstallState if s.is_paused}
    assert paused == {S.DEPENDENCIES_REQUIRED, S.CONFIGURATION_REQUIRED}
    assert INSTALL_MACHINE.transitions[S.DEPENDENCIES_REQUIRED] == {S.CHECKING_DEPENDENCIES, S.CANCELLED}
    assert INSTALL_MACHINE.transitions[S.CONFIGURATION_REQUIRED] == {S.STARTING, S.CANCELLED}


def test_every_working_state_can_fail_and_be_cancelled() -> None:
    # A restart turns an install it finds mid-step into an error; cancel works at any step.
    working = {s for s in InstallState if s.is_working}
    assert working == {S.FETCHING_MANIFEST, S.CHECKING_DEPENDENCIES, S.STARTING, S.SAVING}
    for state in working:
        assert INSTALL_MACHINE.allows(state, S.ERROR) and INSTALL_MACHINE.allows(state, S.CANCELLED), state
    assert not working & {s for s in InstallState if s.is_paused or s.is_final}


def test_progress_never_goes_back_along_the_happy_path() -> None:
    path = [S.FETCHING_MANIFEST, S.CHECKING_DEPENDENCIES, S.STARTING, S.SAVING, S.COMPLETED]
    for current, target in pairwise(path):
        assert INSTALL_MACHINE.allows(current, target)
        assert PROGRESS[current] < PROGRESS[target]


def test_illegal_transitions_raise_the_shared_error() -> None:
    with pytest.raises(InvalidTransition, match="install: illegal transition COMPLETED -> STARTING"):
        INSTALL_MACHINE.check(S.COMPLETED, S.STARTING)


def test_the_store_keeps_the_wire_value(tmp_path: Path) -> None:
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    try:
        now = datetime.now(UTC)
        for state in InstallState:
            row = McpInstallRow(
                id=f"inst_{state.value.lower()}",
                name="n",
                state=state,
                progress=0,
                message="",
                manifest={},
                created_at=now,
                updated_at=now,
            )
            db.write_sync(lambda c, r=row: repos.mcp_installs.put(c, r))  # type: ignore[misc]
            stored = db.read_sync(lambda c, i=row.id: repos.mcp_installs.get(c, i))  # type: ignore[misc]
            assert stored is not None
            assert type(stored.state) is str and stored.state == state.value
            wire = InstallInfo(install_id=row.id, name="n", state=InstallState(stored.state), progress=0, message="")
            assert wire.model_dump(mode="json", by_alias=True)["state"] == stored.state
    finally:
        db.close()


def test_the_wire_values_are_unchanged() -> None:
    assert [s.value for s in InstallState] == [
        "FETCHING_MANIFEST",
        "CHECKING_DEPENDENCIES",
        "DEPENDENCIES_REQUIRED",
        "CONFIGURATION_REQUIRED",
        "STARTING",
        "SAVING",
        "COMPLETED",
        "ERROR",
        "CANCELLED",
    ]
