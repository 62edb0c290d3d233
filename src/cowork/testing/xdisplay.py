"""A real X server (Xvfb) with a real window manager (openbox) and real windows on it, for the capture tests.

The X11 capture source reads what a window manager publishes (EWMH's `_NET_ACTIVE_WINDOW`) about windows that
applications made; a fake of either would only test our reading of the fake. So tests start `XDisplay` (Xvfb and
openbox on a free display number), open windows with `open_window` (each on its own connection, as an application
would), switch between them with xdotool (a client other than ours), and reset the idle timer with `touch_input`
(XTEST fake input, which the server counts as user input).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from Xlib import X, Xatom
from Xlib.display import Display
from Xlib.error import ConnectionClosedError, DisplayError, XError
from Xlib.ext import xtest

from cowork.processes import die_with_parent, stop_tree

__all__ = ["TestWindow", "XDisplay", "available", "open_window", "touch_input"]

_TOOLS = ("Xvfb", "openbox", "xdotool")
_FIRST_DISPLAY = 90  # far above the :0 or :1 of a real desktop
_TRIES = 50
_TIMEOUT = 10.0
_SCREEN = "1280x800x24"


def available() -> str | None:
    """Why an `XDisplay` cannot run here (a missing program), or None when it can."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (scripts/_system_packages.sh installs them)"
    return None


class XDisplay:
    """Xvfb on a free display number with openbox managing it; `.display` is ":N" once started.

    Args:
        window_manager: False for a bare X server (no EWMH: what a source falls back on without a window manager).
        disable: X extensions to leave out (Xvfb's `-extension NAME`), e.g. "MIT-SCREEN-SAVER".
    """

    def __init__(self, *, window_manager: bool = True, disable: tuple[str, ...] = ()) -> None:
        self.display = ""
        self._window_manager = window_manager
        self._disable = disable
        self._xvfb: subprocess.Popen[bytes] | None = None
        self._wm: subprocess.Popen[bytes] | None = None
        self._home: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> XDisplay:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Start Xvfb and openbox; return once the window manager has announced itself (EWMH) on the root.

        Raises:
            RuntimeError: Neither could be started; the message carries their output.
        """
        self._home = tempfile.TemporaryDirectory(prefix="cowork-xdisplay-")
        try:
            self._start_xvfb(Path(self._home.name))
            if self._window_manager:
                self._start_wm(Path(self._home.name))
                # openbox announces itself before its event loop runs, and a window mapped in between is never
                # managed: a first window proves it manages them (`open_window` maps again if one is missed anyway).
                open_window(self.display, "Probe", "probe").close()
        except BaseException:
            self.stop()
            raise

    def kill_server(self) -> None:
        """SIGKILL the X server, as a crash would (openbox then exits on its own; `stop` still cleans up)."""
        if self._xvfb is not None:
            self._xvfb.kill()
            self._xvfb.wait()

    def stop(self) -> None:
        """Stop openbox, then Xvfb (SIGTERM, SIGKILL after a grace period); idempotent."""
        for proc in (self._wm, self._xvfb):
            if proc is not None and proc.poll() is None:
                stop_tree(proc.pid, grace=2.0)
            if proc is not None:
                proc.wait()
        if self._xvfb is not None and self._xvfb.returncode == -signal.SIGKILL:
            # A killed server leaves its socket behind, and later runs would skip that display number forever.
            number = self.display.removeprefix(":")
            Path(f"/tmp/.X11-unix/X{number}").unlink(missing_ok=True)
            Path(f"/tmp/.X{number}-lock").unlink(missing_ok=True)
        self._wm = self._xvfb = None
        if self._home is not None:
            self._home.cleanup()
            self._home = None

    def _start_xvfb(self, home: Path) -> None:
        log = home / "xvfb.log"
        for number in range(_FIRST_DISPLAY, _FIRST_DISPLAY + _TRIES):
            if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
                continue
            # -noreset: without it the server starts afresh whenever its last client leaves (a display without a
            # window manager between two tests), dropping root properties and any connection being made meanwhile.
            # -displayfd: Xvfb writes the number once it accepts connections, or exits when :N is taken after all
            # (another test run got there between our look and its bind); then we try the next one.
            read, write = os.pipe()
            command = [
                "Xvfb",
                f":{number}",
                "-displayfd",
                str(write),
                "-screen",
                "0",
                _SCREEN,
                "-nolisten",
                "tcp",
                "-noreset",
            ]
            command += [arg for name in self._disable for arg in ("-extension", name)]
            with log.open("ab") as out:
                proc = subprocess.Popen(command, pass_fds=[write], stdout=out, stderr=out, preexec_fn=die_with_parent())
            os.close(write)
            try:
                announced = _read_line(read, _TIMEOUT)
            finally:
                os.close(read)
            if announced == str(number):
                self._xvfb, self.display = proc, f":{number}"
                return
            proc.kill()
            proc.wait()
        raise RuntimeError(f"Xvfb could not start on :{_FIRST_DISPLAY}..: {log.read_text(errors='replace')[-2000:]}")

    def _start_wm(self, home: Path) -> None:
        log = home / "openbox.log"
        # A home of its own: openbox reads (and may write) its configuration there, never the user's.
        env = {**os.environ, "DISPLAY": self.display, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
        with log.open("ab") as out:
            self._wm = subprocess.Popen(
                ["openbox", "--sm-disable"], env=env, stdout=out, stderr=out, preexec_fn=die_with_parent()
            )
        conn = Display(self.display)
        try:
            check = conn.intern_atom("_NET_SUPPORTING_WM_CHECK")
            deadline = time.monotonic() + _TIMEOUT
            while conn.screen().root.get_full_property(check, X.AnyPropertyType) is None:
                if self._wm.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"openbox did not start on {self.display}: {log.read_text(errors='replace')}")
                time.sleep(0.01)
        finally:
            conn.close()


def _read_line(fd: int, timeout: float) -> str:
    """What the process writes to `fd` up to a newline, EOF or `timeout`, stripped."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


class TestWindow:
    """A top-level window an application would make, on its own X connection; see `open_window`."""

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(
        self, display: str, app: str, title: str, *, instance: str | None, ewmh_title: bool, machine: str | None
    ) -> None:
        self.display = display
        self._conn = Display(display)
        screen = self._conn.screen()
        self._window = screen.root.create_window(0, 0, 320, 200, 0, screen.root_depth)
        self.id = int(self._window.id)
        self._ewmh_title = ewmh_title
        self._window.set_wm_class(instance if instance is not None else app.lower(), app)
        self.set_title(title)
        self._window.change_property(self._atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()])
        host = machine if machine is not None else socket.gethostname()
        self._window.change_property(Xatom.WM_CLIENT_MACHINE, Xatom.STRING, 8, host.encode())
        self._window.map()
        self._conn.flush()
        try:
            self._wait_managed()
        except BaseException:
            self.close()
            raise

    def activate(self) -> None:
        """Make this the active window, through the window manager as a taskbar would; return once it is."""
        subprocess.run(
            ["xdotool", "windowactivate", "--sync", str(self.id)],
            env={**os.environ, "DISPLAY": self.display},
            check=True,
            capture_output=True,
            timeout=_TIMEOUT,
        )

    def focus(self, *, inner: bool = False) -> None:
        """Give the window the input focus directly, as an application does without a window manager.

        With `inner`, the focus goes to a child window inside it (as a toolkit focusing a text field does).
        """
        target = self._window
        if inner:
            target = self._window.create_window(0, 0, 10, 10, 0, X.CopyFromParent)
            target.map()
        target.set_input_focus(X.RevertToParent, X.CurrentTime)
        self._conn.sync()

    def set_title(self, text: str) -> None:
        """Retitle the window as a toolkit does: `_NET_WM_NAME` in UTF-8 and WM_NAME in Latin-1 (what fits)."""
        if self._ewmh_title:
            self._window.change_property(self._atom("_NET_WM_NAME"), self._atom("UTF8_STRING"), 8, text.encode())
        self._window.change_property(Xatom.WM_NAME, Xatom.STRING, 8, text.encode("latin-1", errors="replace"))
        self._conn.flush()

    def close(self) -> None:
        """Destroy the window and drop its connection; idempotent, and quiet when the server is already gone."""
        with contextlib.suppress(XError, ConnectionClosedError, OSError):
            self._window.destroy()
        with contextlib.suppress(XError, ConnectionClosedError, OSError):
            self._conn.close()

    def _atom(self, name: str) -> int:
        return self._conn.intern_atom(name)

    def _wait_managed(self) -> None:
        """Until the window manager lists the window among its clients (before that it cannot be activated).

        Without a window manager, until the window is viewable (mapped, with its parents).

        A map request the window manager missed (while starting) is not sent again by the server: the window is
        mapped again every quarter of a second until it is managed.
        """
        clients = self._atom("_NET_CLIENT_LIST")
        root = self._conn.screen().root
        with_wm = root.get_full_property(self._atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType) is not None
        start = remapped = time.monotonic()
        while True:
            if not with_wm:
                if self._window.get_attributes().map_state == X.IsViewable:
                    return
            elif (prop := root.get_full_property(clients, X.AnyPropertyType)) is not None and self.id in prop.value:
                return
            now = time.monotonic()
            if now > start + _TIMEOUT:
                raise RuntimeError(f"the window manager on {self.display} never managed window {self.id:#x}")
            if now > remapped + 0.25:
                self._window.map()
                remapped = now
            time.sleep(0.005)


def open_window(
    display: str,
    app: str,
    title: str,
    *,
    instance: str | None = None,
    ewmh_title: bool = True,
    machine: str | None = None,
) -> TestWindow:
    """A mapped, managed top-level window of `app` (WM_CLASS class; instance `app.lower()` unless given).

    Its `_NET_WM_PID` is this process, on this host (WM_CLIENT_MACHINE) unless `machine` names another, as a client
    over `ssh -X` would. With `ewmh_title=False` it has only WM_NAME, like an old X application.
    """
    return TestWindow(display, app, title, instance=instance, ewmh_title=ewmh_title, machine=machine)


def touch_input(display: str) -> None:
    """Move the pointer by one pixel with XTEST, which resets the server's idle timer as a real mouse does."""
    try:
        conn = Display(display)
    except DisplayError as exc:
        raise RuntimeError(f"cannot open {display}: {exc}") from exc
    try:
        pointer = conn.screen().root.query_pointer()
        # Towards the middle, so the pointer never sits against an edge where a move would not move it.
        x = pointer.root_x + (1 if pointer.root_x < 100 else -1)
        xtest.fake_input(conn, X.MotionNotify, x=x, y=pointer.root_y)
        conn.sync()
    finally:
        conn.close()
