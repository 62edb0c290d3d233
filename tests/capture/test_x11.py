"""The X11 source against a real Xvfb, a real window manager (openbox) and real windows on their own connections."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from Xlib import Xatom
from Xlib.display import Display

from cowork.capture._source import Source, SourceUnavailable, Window
from cowork.capture._x11 import X11Source
from cowork.testing.xdisplay import TestWindow, XDisplay, available, open_window, touch_input

if (_reason := available()) is not None:
    pytest.skip(_reason, allow_module_level=True)

PID = os.getpid()
COMM = Path("/proc/self/comm").read_text(encoding="utf-8").rstrip("\n")


@pytest.fixture(scope="module")
def xdisplay() -> Iterator[str]:
    with XDisplay() as server:
        yield server.display


@pytest.fixture(scope="module")
def bare() -> Iterator[str]:
    """An X server with no window manager and without the MIT-SCREEN-SAVER extension."""
    with XDisplay(window_manager=False, disable=("MIT-SCREEN-SAVER",)) as server:
        yield server.display


@pytest.fixture
def source(xdisplay: str) -> Iterator[X11Source]:
    src = X11Source(xdisplay)
    src.open()
    yield src
    src.close()


@pytest.fixture
def windows() -> Iterator[Callable[..., TestWindow]]:
    """`open_window`, with every window opened by the test closed after it."""
    opened: list[TestWindow] = []

    def make(display: str, app: str, title: str, **options: Any) -> TestWindow:
        window = open_window(display, app, title, **options)
        opened.append(window)
        return window

    yield make
    for window in opened:
        window.close()


def settle(source: X11Source) -> None:
    """Consume the changes earlier steps caused, so the next `wait` sees only what the test does next."""
    while source.wait(0.2):
        pass


def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_the_source_keeps_the_protocol() -> None:
    source: Source = X11Source()
    assert source.name == "x11"


def test_active_window_follows_activation(xdisplay: str, source: X11Source, windows) -> None:
    firefox = windows(xdisplay, "Firefox", "Mozilla Firefox", instance="Navigator")
    terminal = windows(xdisplay, "XTerm", "bash: ~/src")
    browser = Window(app="Firefox", title="Mozilla Firefox", pid=PID, process=COMM)
    shell = Window(app="XTerm", title="bash: ~/src", pid=PID, process=COMM)
    # `activate` returns once the window manager made it active; on a loaded machine the root property that says
    # so can land a moment later (CI saw one read of None), so each is awaited rather than read once.
    firefox.activate()
    eventually(lambda: source.active_window() == browser)
    terminal.activate()
    eventually(lambda: source.active_window() == shell)
    firefox.activate()
    eventually(lambda: source.active_window() == browser)


def test_the_instance_names_the_app_when_the_class_is_empty(xdisplay: str, source: X11Source, windows) -> None:
    windows(xdisplay, "", "untitled", instance="gimp").activate()
    assert source.active_window() == Window(app="gimp", title="untitled", pid=PID, process=COMM)


def test_a_window_from_another_host_has_no_local_process(xdisplay: str, source: X11Source, windows) -> None:
    # Its pid is a process on that host: naming whatever runs under the same number here would be wrong.
    windows(xdisplay, "Remote", "over ssh", machine="elsewhere.example").activate()
    assert source.active_window() == Window(app="Remote", title="over ssh", pid=PID, process=None)


def test_titles_round_trip_in_utf8_and_fall_back_to_wm_name(xdisplay: str, source: X11Source, windows) -> None:
    title = "Résumé — naïve 日本"
    windows(xdisplay, "Writer", title).activate()
    assert source.active_window() == Window(app="Writer", title=title, pid=PID, process=COMM)
    # An old application sets only WM_NAME, in Latin-1.
    windows(xdisplay, "Legacy", "Café crème", ewmh_title=False).activate()
    assert source.active_window() == Window(app="Legacy", title="Café crème", pid=PID, process=COMM)


def test_wait_wakes_on_activation_and_on_the_active_windows_title(
    xdisplay: str, windows, request: pytest.FixtureRequest
) -> None:
    first = windows(xdisplay, "First", "one")
    second = windows(xdisplay, "Second", "two")
    first.activate()
    source = X11Source(xdisplay)
    source.open()
    request.addfinalizer(source.close)
    settle(source)
    assert source.wait(0.3) is False

    second.activate()
    assert source.wait(10) is True
    settle(source)
    # `wait` follows the new active window by itself: no query in between.
    second.set_title("two, edited")
    assert source.wait(10) is True
    settle(source)
    # A window in the background retitling itself (a clock, a download counter) does not wake the capture.
    first.set_title("one, edited")
    assert source.wait(0.3) is False
    assert source.active_window() == Window(app="Second", title="two, edited", pid=PID, process=COMM)


def test_wait_watches_the_window_already_active_at_open(xdisplay: str, windows) -> None:
    window = windows(xdisplay, "Early", "before")
    window.activate()
    source = X11Source(xdisplay)
    source.open()
    try:
        settle(source)
        window.set_title("after")
        assert source.wait(10) is True
        assert source.active_window() == Window(app="Early", title="after", pid=PID, process=COMM)
    finally:
        source.close()


def test_close_ends_a_wait_in_another_thread(source: X11Source) -> None:
    settle(source)
    results: list[bool] = []
    waiter = threading.Thread(target=lambda: results.append(source.wait(60)))
    waiter.start()
    time.sleep(0.1)  # let it block (ending before it does would pass too, so this only makes the test meaningful)
    source.close()
    waiter.join(10)
    assert not waiter.is_alive()
    assert results == [False]
    source.close()  # idempotent
    assert source.wait(1) is False


def test_idle_time_grows_and_input_resets_it(xdisplay: str, source: X11Source) -> None:
    touch_input(xdisplay)
    idle = source.idle_seconds()
    assert idle is not None and idle < 1.0
    eventually(lambda: (source.idle_seconds() or 0.0) >= 1.2)
    touch_input(xdisplay)
    idle = source.idle_seconds()
    assert idle is not None and idle < 1.0


def test_a_window_destroyed_right_after_activation_is_no_error(xdisplay: str, source: X11Source, windows) -> None:
    keep = windows(xdisplay, "Keep", "stays")
    keep.activate()
    for attempt in range(5):
        gone = windows(xdisplay, "Gone", f"closing {attempt}")
        gone.activate()
        gone.close()
        assert source.active_window() in (
            None,
            Window(app="Keep", title="stays", pid=PID, process=COMM),
            Window(app="Gone", title=f"closing {attempt}", pid=PID, process=COMM),
        )
    eventually(lambda: source.active_window() == Window(app="Keep", title="stays", pid=PID, process=COMM))


def test_a_stale_active_window_reads_as_none(bare: str, windows) -> None:
    # The deterministic form of the race above: the root names a window that no longer exists.
    window = windows(bare, "Doomed", "doomed")
    window.close()
    conn = Display(bare)
    root = conn.screen().root
    active = conn.intern_atom("_NET_ACTIVE_WINDOW")
    root.change_property(active, Xatom.WINDOW, 32, [window.id])
    conn.sync()
    source = X11Source(bare)
    try:
        source.open()
        assert source.active_window() is None
        assert source.wait(0.1) is False
    finally:
        source.close()
        root.delete_property(active)
        conn.sync()  # python-xlib's close() does not always send what is still buffered
        conn.close()


def test_without_a_window_manager_the_input_focus_names_the_window(bare: str, windows) -> None:
    source = X11Source(bare)
    source.open()
    try:
        editor = windows(bare, "Editor", "notes.txt")
        viewer = windows(bare, "Viewer", "photo.png")
        editor.focus(inner=True)  # a child of the top-level window has the focus: its top level is reported
        assert source.active_window() == Window(app="Editor", title="notes.txt", pid=PID, process=COMM)
        viewer.focus()
        assert source.active_window() == Window(app="Viewer", title="photo.png", pid=PID, process=COMM)
        # Without MIT-SCREEN-SAVER the idle time is unknown, not an error.
        assert source.idle_seconds() is None
    finally:
        source.close()


def test_no_display_set_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(SourceUnavailable) as caught:
        X11Source().open()
    assert str(caught.value) == (
        "no X display: $DISPLAY is not set (Wayland sessions are not supported yet, see docs/capture.md)"
    )


def test_a_display_nobody_serves_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    unserved = next(f":{n}" for n in range(4000, 5000) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    monkeypatch.setenv("DISPLAY", unserved)
    with pytest.raises(SourceUnavailable, match=f"^cannot open the X display {unserved}: "):
        X11Source().open()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    with pytest.raises(SourceUnavailable, match="Wayland session: an X11 client sees only XWayland windows"):
        X11Source().open()


def test_under_wayland_the_source_runs_and_says_what_it_cannot_see(
    xdisplay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    source = X11Source(xdisplay)
    source.open()
    try:
        assert source.notice == "this is a Wayland session: an X11 client sees only XWayland windows"
    finally:
        source.close()


def test_the_x_server_dying_is_reported_as_unavailable() -> None:
    with XDisplay() as server:
        window = open_window(server.display, "Doomed", "doomed")
        window.activate()
        source = X11Source(server.display)
        source.open()
        try:
            assert source.active_window() == Window(app="Doomed", title="doomed", pid=PID, process=COMM)
            server.kill_server()
            # `wait` does not raise either: it wakes, so that the caller's next query finds out.
            assert source.wait(10) is True
            with pytest.raises(SourceUnavailable, match=f"^the X display {server.display} went away$"):
                source.active_window()
            with pytest.raises(SourceUnavailable, match=f"^the X display {server.display} went away$"):
                source.idle_seconds()
        finally:
            source.close()
            window.close()


def test_queries_before_open_say_so() -> None:
    with pytest.raises(SourceUnavailable, match="not open"):
        X11Source(":0").active_window()
