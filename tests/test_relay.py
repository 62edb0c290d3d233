"""What another replica says on the relay channel: each good message is read and pushed to this replica's clients
in order; a malformed one, this replica's own, or one naming something gone pushes nothing and stops nothing.

(Two real replicas relaying through PostgreSQL: tests/server/test_replicas.py.)"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest

from cowork.mcp import Notices
from cowork.protocol import AutomationChanged, ErrorCode, ErrorSource, ProtocolError, WireModel
from cowork.relay import NoticeRelay
from cowork.store import Database

pytestmark = pytest.mark.anyio


class Item(WireModel):
    id: str
    text: str


class Relayed:
    def __init__(self) -> None:
        self.notices = Notices()
        self.pushed: list[tuple[str, WireModel]] = []
        self.notices.subscribe(lambda method, params: self.pushed.append((method, params)))
        self.reloads = 0
        self.stored = {"n1": Item(id="n1", text="first"), "r1": Item(id="r1", text="a run")}

    async def reload(self) -> None:
        self.reloads += 1

    async def read(self, item_id: str) -> WireModel | None:
        if item_id == "deleted":
            raise ProtocolError(ErrorCode.RUN_NOT_FOUND, "gone", source=ErrorSource.SERVER)
        return self.stored.get(item_id)


@pytest.fixture
async def relayed() -> AsyncIterator[tuple[NoticeRelay, Relayed]]:
    seen = Relayed()
    db = Database.memory()
    relay = NoticeRelay(
        db,
        seen.notices,
        "here",
        reload=seen.reload,
        readers={"notification/delivered": seen.read, "automation/run": seen.read},
    )
    relay.start()
    yield relay, seen
    await relay.stop()
    db.close()


def said(replica: str, method: str, **rest: object) -> str:
    return json.dumps({"replica": replica, "method": method, **rest})


async def settled(seen: Relayed, count: int) -> None:
    for _ in range(200):
        if len(seen.pushed) >= count:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # and nothing more comes


async def test_each_good_message_is_read_and_pushed_in_order(relayed: tuple[NoticeRelay, Relayed]) -> None:
    relay, seen = relayed
    relay.on_notify(said("there", "notification/delivered", id="n1"))
    relay.on_notify(said("there", "automation/changed", params={"id": "a1", "name": "tidy", "deleted": True}))
    relay.on_notify(said("there", "automation/run", id="r1"))
    await settled(seen, 3)
    assert [(m, p) for m, p in seen.pushed] == [
        ("notification/delivered", Item(id="n1", text="first")),
        ("automation/changed", AutomationChanged(id="a1", name="tidy", deleted=True)),
        ("automation/run", Item(id="r1", text="a run")),
    ]
    assert seen.reloads == 1  # a changed automation makes this replica read its flows again


async def test_bad_own_unknown_and_gone_messages_push_nothing(
    relayed: tuple[NoticeRelay, Relayed], caplog: pytest.LogCaptureFixture
) -> None:
    relay, seen = relayed
    caplog.set_level(logging.WARNING, logger="cowork.relay")
    for payload in (
        "not json",
        "[]",
        json.dumps({"method": "automation/run", "id": "r1"}),  # no replica
        said("there", "automation/run"),  # no id
        json.dumps({"replica": "there", "method": ["automation/run"], "id": "r1"}),
        said("there", "automation/run", id=7),
        said("there", "automation/changed", params={"name": 3}),
        said("there", "session/delete", id="s1"),  # not something relayed
        said("here", "automation/run", id="r1"),  # this replica's own, already pushed here
        said("there", "automation/run", id="deleted"),
        said("there", "notification/delivered", id="unknown"),
    ):
        relay.on_notify(payload)
    relay.on_notify(said("there", "notification/delivered", id="n1"))  # and the relay still works after them
    await settled(seen, 1)
    assert seen.pushed == [("notification/delivered", Item(id="n1", text="first"))]
    assert seen.reloads == 0
    assert sum("malformed" in r.getMessage() for r in caplog.records) == 7


async def test_what_is_pushed_from_another_replica_is_not_told_back(
    relayed: tuple[NoticeRelay, Relayed], caplog: pytest.LogCaptureFixture
) -> None:
    relay, seen = relayed
    caplog.set_level(logging.WARNING, logger="cowork.relay")
    relay.on_notify(said("there", "automation/run", id="r1"))
    await settled(seen, 1)
    assert len(seen.pushed) == 1
    # Telling would write a NOTIFY, which this SQLite store cannot: a warning would say so.
    assert not [r for r in caplog.records if "could not tell" in r.getMessage()]
    seen.notices.publish("automation/run", Item(id="r2", text="made here"))
    await settled(seen, 2)
    assert [r for r in caplog.records if "could not tell" in r.getMessage()]  # this one is told (and fails here)
