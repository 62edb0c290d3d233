"""Session settings: `session/update` is announced and persisted, and the live switches change at once."""

from __future__ import annotations

import pytest

from cowork.protocol import ErrorCode, ProtocolError, SessionUpdated, SessionUpdateParams
from cowork.sessions import SessionFlags
from cowork.testing.core import CoreHarness

pytestmark = pytest.mark.anyio


async def test_an_update_changes_the_live_switches_and_is_announced(harness: CoreHarness) -> None:
    core = await harness.core()
    sid = await harness.session(core)
    assert core.settings.flags(sid) == SessionFlags()
    info = await core.settings.update(
        SessionUpdateParams(session_id=sid, title="Notes", network=True, reasoning_effort="off")
    )
    assert (info.title, info.network, info.yolo, info.reasoning_effort) == ("Notes", True, False, "off")
    assert core.settings.flags(sid) == SessionFlags(network=True, reasoning_effort="off")
    await core.journal.flush()
    assert harness.payloads(sid, SessionUpdated) == [
        SessionUpdated(title="Notes", network=True, reasoning_effort="off")
    ]
    await core.settings.update(SessionUpdateParams(session_id=sid, reasoning_effort="default"))
    assert core.settings.flags(sid) == SessionFlags(network=True)


async def test_remember_reads_the_switches_a_session_row_holds(harness: CoreHarness) -> None:
    core = await harness.core()
    sid = await harness.session(core)
    await core.sessions.update_settings(sid, yolo=True)  # not through the settings service: the cache is stale
    assert core.settings.flags(sid) == SessionFlags()
    assert core.settings.remember(await core.sessions.get_row(sid)) == SessionFlags(yolo=True)
    assert core.settings.flags(sid).yolo


async def test_an_unknown_session_is_refused(harness: CoreHarness) -> None:
    core = await harness.core()
    with pytest.raises(ProtocolError) as info:
        await core.settings.update(SessionUpdateParams(session_id="ses_nope", title="x"))
    assert info.value.code == ErrorCode.SESSION_NOT_FOUND
