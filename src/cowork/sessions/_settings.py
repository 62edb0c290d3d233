"""Session settings: `session/update` (title, network, yolo, reasoning effort) and the live switches runners read."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from cowork.models import ModelSelector, presets
from cowork.policy import load_allowances
from cowork.protocol import ErrorCode, ErrorSource, ProtocolError, SessionInfo, SessionUpdateParams
from cowork.store import SessionRow

from ._service import AUTO_MODEL, SessionService

__all__ = ["SessionFlags", "SessionSettings"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionFlags:
    """A session's switches as a running operation sees them."""

    network: bool = False
    yolo: bool = False
    reasoning_effort: str | None = None
    allowances: tuple[str, ...] = ()
    """What the user allowed for the session without asking again (keys, see `cowork.policy.allowance_key`)."""
    plan: bool = False
    """Plan mode: calls that change something are refused, not asked about."""

    @classmethod
    def of(cls, row: SessionRow) -> SessionFlags:
        return cls(
            network=row.network,
            yolo=row.yolo,
            reasoning_effort=row.reasoning_effort,
            allowances=load_allowances(row.allowances),
            plan=row.plan_mode,
        )


class SessionSettings:
    """Changes a session's settings and keeps its switches in memory, read by runners at every decision."""

    def __init__(
        self, sessions: SessionService, selector: ModelSelector, *, routes: Callable[[SessionRow], bool]
    ) -> None:
        """Args:
        sessions: the session store.
        selector: resolves a session's provider and model.
        routes: whether the complexity router picks the session's model (then any reasoning effort is allowed).
        """
        self._sessions = sessions
        self._selector = selector
        self._routes = routes
        self._flags: dict[str, SessionFlags] = {}

    def flags(self, session_id: str) -> SessionFlags:
        """The session's live switches (defaults until the session was read): a toggle applies at the next call."""
        return self._flags.get(session_id, SessionFlags())

    def remember(self, row: SessionRow) -> SessionFlags:
        """Refresh the switches from a freshly read session row."""
        flags = self._flags[row.id] = SessionFlags.of(row)
        return flags

    async def update(self, params: SessionUpdateParams) -> SessionInfo:
        """Change a session's title or switches; a switch applies to the running turn's next call.

        Raises:
            ProtocolError: `session_not_found`; `not_supported` for a reasoning effort the model cannot use.
        """
        changes: dict[str, str | bool | None] = {
            name: value
            for name, value in (
                ("title", params.title),
                ("network", params.network),
                ("yolo", params.yolo),
                ("plan_mode", params.plan_mode),
            )
            if value is not None
        }
        if params.reasoning_effort is not None:
            if params.reasoning_effort not in ("default", "off"):
                self.check_reasoning(await self._sessions.get_row(params.session_id))
            changes["reasoning_effort"] = None if params.reasoning_effort == "default" else params.reasoning_effort
        if params.clear_allowances:
            changes["allowances"] = "[]"
        await self._sessions.update_settings(params.session_id, **changes)
        info = self._refresh(await self._sessions.get_row(params.session_id))
        if params.yolo:
            log.warning("session %s: --yolo is on: approvals and the sandbox are off", params.session_id)
        return info

    def _refresh(self, row: SessionRow) -> SessionInfo:
        self.remember(row)
        return self._sessions.info(row)

    async def allow(self, session_id: str, key: str) -> SessionInfo:
        """Allow calls matching `key` for the rest of the session (announced with `session_updated`)."""
        row = await self._sessions.get_row(session_id)
        keys = load_allowances(row.allowances)
        if key not in keys:
            await self._sessions.update_settings(session_id, allowances=json.dumps([*keys, key]))
            row = await self._sessions.get_row(session_id)
        return self._refresh(row)

    def check_reasoning(self, session: SessionRow) -> None:
        """Refuse a reasoning effort for a model the catalog says cannot reason (unknown models may).

        Raises:
            ProtocolError: `not_supported`.
        """
        if session.model == AUTO_MODEL or self._routes(session):
            return
        try:
            target = self._selector.resolve(session.provider, session.model)
        except ProtocolError:
            return
        preset = presets().get(target.provider)
        entry = preset.model(target.model) if preset else None
        if entry is not None and not entry.reasoning:
            raise ProtocolError(
                ErrorCode.NOT_SUPPORTED,
                f"{target.provider}:{target.model} does not support reasoning effort; pick a reasoning model with "
                "/model first.",
                source=ErrorSource.RUNTIME,
            )
