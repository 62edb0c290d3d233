"""Desktop notifications against a real bus and a real notification daemon: dbus-daemon and dunst on Xvfb.

What dunst recorded is the evidence: the title and body as they arrived, the urgency it took them for, and the Pango
markup it drew them with (which is where a smuggled `<b>` would turn bold). Then the ways there is no desktop
notification: no bus, a bus with no daemon, a daemon or a bus that dies between two sends.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowork.notify import DesktopNotifier
from cowork.testing.dbus import Dunst, PrivateSessionBus, Received, available
from cowork.testing.xdisplay import XDisplay

if (_reason := available()) is not None:
    pytest.skip(_reason, allow_module_level=True)

pytestmark = pytest.mark.anyio

TITLE = "<b>Deploy</b> & ship"
BODY = 'Review <a href="https://evil.example">this</a> & <i>that</i> > now'


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    # dunst draws on X; it needs no window manager.
    with XDisplay(window_manager=False) as server:
        yield server.display


@pytest.fixture
def bus() -> Iterator[PrivateSessionBus]:
    with PrivateSessionBus() as private:
        yield private


@pytest.fixture
def dunst(bus: PrivateSessionBus, display: str) -> Iterator[Dunst]:
    with Dunst(bus.address, display) as daemon:
        yield daemon


def drawn(markup: str) -> tuple[str, list[str]]:
    """The text Pango draws for `markup`, and the formatting tags in it (none means plain text)."""
    root = ET.fromstring(f"<markup>{markup}</markup>")
    return "".join(root.itertext()), [element.tag for element in root.iter() if element is not root]


async def test_a_notification_reaches_dunst_as_plain_text(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        assert await notifier.available() is None
        sent = await notifier.send(title=TITLE, body=BODY, tier="helpful")
    finally:
        await notifier.close()
    assert isinstance(sent, int)
    assert dunst.history() == [
        Received(
            id=sent,
            app="Cowork",
            # The summary is plain text by the specification: sent as it is, and dunst escapes it itself.
            summary=TITLE,
            # dunst reads markup in bodies (it lists body-markup): the body went escaped.
            body='Review &lt;a href="https://evil.example"&gt;this&lt;/a&gt; &amp; &lt;i&gt;that&lt;/i&gt; &gt; now',
            urgency="normal",
            markup=(
                "&lt;b&gt;Deploy&lt;/b&gt; &amp; ship\n"
                'Review &lt;a href="https://evil.example"&gt;this&lt;/a&gt; &amp; &lt;i&gt;that&lt;/i&gt; &gt; now'
            ),
        )
    ]
    # What the user sees is exactly what was sent, with no bold, italics or link.
    assert drawn(dunst.history()[0].markup) == (f"{TITLE}\n{BODY}", [])


async def test_urgency_follows_the_tier(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        ids = {
            tier: await notifier.send(title=tier, body="", tier=tier) for tier in ("urgent", "helpful", "informational")
        }
    finally:
        await notifier.close()
    assert {(n.id, n.summary, n.urgency) for n in dunst.history()} == {
        (ids["urgent"], "urgent", "critical"),
        (ids["helpful"], "helpful", "normal"),
        (ids["informational"], "informational", "low"),
    }


async def test_a_body_is_not_escaped_where_the_server_reads_no_markup(bus: PrivateSessionBus, display: str) -> None:
    # With markup off dunst lists no body-markup and shows a body as it is: entities would reach the user as "&lt;".
    with Dunst(bus.address, display, markup="no") as plain:
        notifier = DesktopNotifier(bus.address)
        try:
            sent = await notifier.send(title=TITLE, body=BODY, tier="informational")
        finally:
            await notifier.close()
        (received,) = plain.history()
    assert (received.id, received.summary, received.body) == (sent, TITLE, BODY)
    assert drawn(received.markup) == (f"{TITLE}\n{BODY}", [])


async def test_titles_and_bodies_are_clipped_and_made_sendable(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        # A NUL would make the message invalid, and the bus drops a client that sends one.
        sent = await notifier.send(title="t" * 300, body="a\x00b" + "x" * 2000, tier="urgent")
        again = await notifier.send(title="still connected", body="", tier="urgent")
    finally:
        await notifier.close()
    assert isinstance(sent, int) and isinstance(again, int)
    clipped = next(n for n in dunst.history() if n.id == sent)
    assert clipped.summary == "t" * 199 + "…"
    assert clipped.body == "ab" + "x" * 997 + "…"


async def test_replacing_a_notification_keeps_its_id(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        first = await notifier.send(title="3 new messages", body="", tier="helpful")
        assert first is not None
        second = await notifier.send(title="4 new messages", body="", tier="helpful", replaces_id=first)
    finally:
        await notifier.close()
    assert second == first
    assert [(n.id, n.summary) for n in dunst.history()] == [(first, "4 new messages")]


async def test_without_a_bus_address(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    notifier = DesktopNotifier()
    assert await notifier.available() == "no D-Bus session bus ($DBUS_SESSION_BUS_ADDRESS is not set)"
    with caplog.at_level(logging.DEBUG, logger="cowork.notify._desktop"):
        assert await notifier.send(title="t", body="b", tier="urgent") is None
    assert caplog.messages == [
        "desktop notification not sent: no D-Bus session bus ($DBUS_SESSION_BUS_ADDRESS is not set)"
    ]
    await notifier.close()


async def test_a_bus_socket_that_does_not_exist(tmp_path: Path) -> None:
    address = f"unix:path={tmp_path}/missing"
    notifier = DesktopNotifier(address)
    assert await notifier.available() == (
        f"cannot connect to the D-Bus session bus at {address}: No such file or directory"
    )
    assert await notifier.send(title="t", body="b", tier="urgent") is None
    await notifier.close()


async def test_a_bus_address_with_no_unix_socket() -> None:
    notifier = DesktopNotifier("tcp:host=localhost,port=1")
    assert await notifier.available() == (
        "the D-Bus session bus address 'tcp:host=localhost,port=1' names no Unix socket to connect to"
    )
    assert await notifier.send(title="t", body="b", tier="urgent") is None


async def test_a_bus_with_no_notification_daemon(bus: PrivateSessionBus, caplog: pytest.LogCaptureFixture) -> None:
    notifier = DesktopNotifier(bus.address)
    try:
        assert await notifier.available() == (
            "no notification daemon is running on the session bus (nothing owns org.freedesktop.Notifications)"
        )
        with caplog.at_level(logging.DEBUG, logger="cowork.notify._desktop"):
            assert await notifier.send(title="t", body="b", tier="urgent") is None
    finally:
        await notifier.close()
    assert caplog.messages == [
        "desktop notification not sent: the bus answered org.freedesktop.DBus.Error.ServiceUnknown: "
        "The name org.freedesktop.Notifications was not provided by any .service files"
    ]


async def test_a_daemon_the_bus_starts_on_demand(tmp_path: Path, display: str) -> None:
    services = tmp_path / "services"
    services.mkdir()
    with PrivateSessionBus(service_dirs=(services,)) as bus:
        daemon = Dunst(bus.address, display)
        daemon.service_file(services)
        bus.reload()
        notifier = DesktopNotifier(bus.address)
        try:
            assert await notifier.available() is None
            sent = await notifier.send(title="started for this", body="", tier="helpful")
        finally:
            await notifier.close()
        assert [(n.id, n.summary) for n in daemon.history()] == [(sent, "started for this")]
        daemon.stop()


async def test_the_daemon_killed_between_two_sends(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        first = await notifier.send(title="before", body="", tier="helpful")
        dunst.kill()
        assert await notifier.send(title="while gone", body="", tier="helpful") is None
        assert await notifier.available() == (
            "no notification daemon is running on the session bus (nothing owns org.freedesktop.Notifications)"
        )
        dunst.start()
        after = await notifier.send(title="after", body="", tier="helpful")
    finally:
        await notifier.close()
    assert isinstance(first, int) and isinstance(after, int)
    # The new dunst has only what came after it.
    assert [(n.id, n.summary) for n in dunst.history()] == [(after, "after")]


async def test_the_bus_killed_between_two_sends(bus: PrivateSessionBus, dunst: Dunst) -> None:
    notifier = DesktopNotifier(bus.address)
    try:
        assert isinstance(await notifier.send(title="before", body="", tier="helpful"), int)
        dunst.kill()
        bus.kill()
        assert await notifier.send(title="while gone", body="", tier="helpful") is None
        assert (await notifier.available() or "").startswith(
            f"cannot connect to the D-Bus session bus at {bus.address}"
        )
        bus.start()
        dunst.start()
        # The same notifier connects again by itself.
        after = await notifier.send(title="after", body="", tier="urgent")
    finally:
        await notifier.close()
    assert isinstance(after, int)
    assert [(n.id, n.summary, n.urgency) for n in dunst.history()] == [(after, "after", "critical")]


async def test_the_bus_restarted_unnoticed_between_two_sends(bus: PrivateSessionBus, dunst: Dunst) -> None:
    # No failed call in between: the notifier finds its connection dropped on the next send and connects again.
    notifier = DesktopNotifier(bus.address)
    try:
        assert isinstance(await notifier.send(title="before", body="", tier="helpful"), int)
        dunst.kill()
        bus.kill()
        bus.start()
        dunst.start()
        after = await notifier.send(title="after", body="", tier="helpful")
    finally:
        await notifier.close()
    assert isinstance(after, int)
    assert [(n.id, n.summary) for n in dunst.history()] == [(after, "after")]


async def test_arguments_out_of_range_are_not_sent(dunst: Dunst) -> None:
    notifier = DesktopNotifier(dunst.address)
    try:
        assert await notifier.send(title="t", body="", tier="critical") is None  # type: ignore[arg-type]
        assert await notifier.send(title="t", body="", tier="urgent", replaces_id=-1) is None
        assert await notifier.send(title="t", body="", tier="urgent", timeout_ms=2**31) is None
    finally:
        await notifier.close()
    assert dunst.history() == []
