"""The notification service over a real store, on a controlled clock: deliveries stored and published, bundling
closed by the ticker, deep work holding and releasing, answers remembered across a restart, and a delivery shown by a
real notification daemon (dunst on a private bus)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cowork.notify import DesktopNotifier, NotificationService, Outcome
from cowork.protocol import NotificationInfo, ProtocolError
from cowork.store import Database
from cowork.testing.dbus import Dunst, PrivateSessionBus, available
from cowork.testing.xdisplay import XDisplay

pytestmark = pytest.mark.anyio

START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    db = Database.sqlite(tmp_path / "cowork.db")
    db.migrate()
    yield db
    db.close()


async def service(db: Database, clock: Clock, sent: list[NotificationInfo], deep: list[bool] | None = None,
                  desktop: DesktopNotifier | None = None) -> NotificationService:  # fmt: skip
    state = deep if deep is not None else [False]
    notifications = NotificationService(db, sent.append, deep_work=lambda: state[0], desktop=desktop, clock=clock)
    await notifications.start()
    return notifications


async def test_urgent_goes_out_at_once_and_helpful_ones_are_bundled(store: Database) -> None:
    clock, sent = Clock(), list[NotificationInfo]()
    notifications = await service(store, clock, sent)
    decision = await notifications.offer(kind="automation_approval", tier="urgent", title="Approve", run_id="run_1")
    assert decision.outcome is Outcome.DELIVERED and [n.title for n in sent] == ["Approve"]
    assert sent[0].run_id == "run_1"
    for title in ("a", "b"):
        held = await notifications.offer(kind="automation:report", tier="helpful", title=title)
        assert held.outcome is Outcome.BUNDLED
    clock.now += timedelta(seconds=10)
    assert await notifications.tick() == []
    clock.now += timedelta(seconds=25)
    [bundle] = await notifications.tick()
    assert len(bundle.candidates) == 2 and sent[-1].count == 2
    listed = await notifications.recent()
    assert [n.count for n in listed] == [2, 1]
    await notifications.stop()


async def test_deep_work_holds_helpful_ones_until_it_ends(store: Database) -> None:
    clock, sent, deep = Clock(), list[NotificationInfo](), [True]
    notifications = await service(store, clock, sent, deep)
    await notifications.tick()  # it sees deep work start
    decision = await notifications.offer(kind="automation:digest", tier="helpful", title="Digest")
    assert decision.outcome is Outcome.HELD and sent == []
    assert (await notifications.offer(kind="automation_approval", tier="urgent", title="Now")).delivery is not None
    deep[0] = False
    clock.now += timedelta(minutes=5)
    await notifications.tick()  # released through the other gates: bundled for its window
    clock.now += timedelta(seconds=31)
    await notifications.tick()
    assert [n.title for n in sent] == ["Now", "Digest"]
    await notifications.stop()


async def test_dismissals_are_remembered_across_a_restart(store: Database) -> None:
    clock, sent = Clock(), list[NotificationInfo]()
    notifications = await service(store, clock, sent)
    for _ in range(3):
        decision = await notifications.offer(kind="automation_failed", tier="urgent", title="Failed")
        assert decision.delivery is not None
        await notifications.respond(decision.delivery.id, "dismiss")
        clock.now += timedelta(hours=1)  # past the cooldown
    await notifications.stop()

    restarted = await service(store, clock, sent)
    # Dismissed three times and never accepted: the kind drops a tier (urgent → helpful, so it is bundled).
    decision = await restarted.offer(kind="automation_failed", tier="urgent", title="Failed again")
    assert decision.outcome is Outcome.BUNDLED and "dismissed" in decision.reason
    with pytest.raises(ProtocolError) as unknown:
        await restarted.respond("nope", "accept")
    assert unknown.value.code == "notification_not_found"
    answered = [n for n in await restarted.recent() if n.response == "dismiss"]
    assert len(answered) == 3
    await restarted.stop()


@pytest.mark.skipif(available() is not None, reason=available() or "")
async def test_a_delivery_is_shown_by_a_real_notification_daemon(store: Database) -> None:
    clock, sent = Clock(), list[NotificationInfo]()
    with (
        XDisplay(window_manager=False) as display,
        PrivateSessionBus() as bus,
        Dunst(bus.address, display.display) as dunst,
    ):
        notifications = await service(store, clock, sent, desktop=DesktopNotifier(bus.address))
        decision = await notifications.offer(kind="automation_approval", tier="urgent", title="Approve <b>rm</b>",
                                             body="Step clean wants to run bash")  # fmt: skip
        assert decision.delivery is not None
        await notifications.stop()  # waits for the desktop send
        [shown] = dunst.history()
        assert shown.summary == "Approve <b>rm</b>" and shown.urgency == "critical"
        [stored] = await notifications.recent()
        assert stored.desktop is True and sent[0].desktop is False  # published first, shown after
