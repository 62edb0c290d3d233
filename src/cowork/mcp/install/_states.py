"""The install state machine: the legal transitions between `InstallState`s, and how far along each state is.

The states themselves are `cowork.protocol.InstallState` (what clients see, and what `mcp_installs.state` stores);
whether a state is final, paused or working is a property of the enum.
"""

from __future__ import annotations

from cowork.machines import StateMachine
from cowork.protocol import InstallState

__all__ = ["INSTALL_MACHINE", "PROGRESS"]

S = InstallState

INSTALL_MACHINE = StateMachine(
    "install",
    InstallState,
    {
        S.FETCHING_MANIFEST: {S.CHECKING_DEPENDENCIES, S.ERROR, S.CANCELLED},
        S.CHECKING_DEPENDENCIES: {S.DEPENDENCIES_REQUIRED, S.CONFIGURATION_REQUIRED, S.STARTING, S.ERROR, S.CANCELLED},
        S.DEPENDENCIES_REQUIRED: {S.CHECKING_DEPENDENCIES, S.CANCELLED},
        S.CONFIGURATION_REQUIRED: {S.STARTING, S.CANCELLED},
        S.STARTING: {S.SAVING, S.ERROR, S.CANCELLED},
        S.SAVING: {S.COMPLETED, S.ERROR, S.CANCELLED},
        # Retry: back to the dependency check, with the configuration already given.
        S.ERROR: {S.CHECKING_DEPENDENCIES, S.CANCELLED},
        S.COMPLETED: set(),
        S.CANCELLED: set(),
    },
)

PROGRESS: dict[InstallState, int] = {
    S.FETCHING_MANIFEST: 15,
    S.CHECKING_DEPENDENCIES: 30,
    S.DEPENDENCIES_REQUIRED: 40,
    S.CONFIGURATION_REQUIRED: 50,
    S.STARTING: 70,
    S.SAVING: 90,
    S.COMPLETED: 100,
}
"""Percent done on entering a state; ERROR and CANCELLED keep the figure they were reached at."""
