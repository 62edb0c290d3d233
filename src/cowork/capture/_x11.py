"""The X11 source: the EWMH active window, its WM_CLASS and title, and idle time from MIT-SCREEN-SAVER.

One X connection of its own (python-xlib speaks the protocol; nothing to compile). `wait` sleeps on that connection
until the root's `_NET_ACTIVE_WINDOW` or the active window's title changes, so switches are seen at once without
polling fast. Under a Wayland session only XWayland windows are visible to an X client; the source still reports
those.

Windows come and go between two requests, so an X protocol error while reading one means "no window", never an
exception; only a lost connection surfaces, as `SourceUnavailable`, because then nothing more can be read.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
import time
import traceback
import warnings
from contextlib import suppress

from Xlib import X, Xatom
from Xlib.display import Display
from Xlib.error import ConnectionClosedError, DisplayError, XauthError, XError, XNoAuthError
from Xlib.xobject.drawable import Window as XWindow

from cowork.capture._source import SourceUnavailable, Window

__all__ = ["X11Source"]

log = logging.getLogger(__name__)

# What a dead X server looks like from here: python-xlib's own error once it noticed, the socket's before that.
_LOST = (ConnectionClosedError, OSError)
# Titles are short; asking for 1 KiB at once saves the second round trip get_full_property makes for a longer value.
_TEXT_SIZEHINT = 256


def _wayland_note() -> str | None:
    """The caveat of running as an X client inside a Wayland session, or None outside one."""
    if os.environ.get("WAYLAND_DISPLAY") and os.environ.get("XDG_SESSION_TYPE") == "wayland":
        return "this is a Wayland session: an X11 client sees only XWayland windows"
    return None


class X11Source:
    """The active window and idle time of an X display (`display`, or `$DISPLAY` when None).

    Meant for one capture thread; `close` may come from any thread. A query from another thread waits while `wait`
    runs (one lock guards the connection so `close` never pulls the socket from under a `select`).
    """

    name = "x11"

    def __init__(self, display: str | None = None) -> None:
        self._requested = display
        self._name = display or ""
        self._display: Display | None = None
        self._lock = threading.Lock()
        self._wake: tuple[int, int] | None = None
        self._watched = 0  # the window whose title changes wake `wait` (0: none)
        self._idle = False
        self._atoms: dict[str, int] = {}
        self.notice: str | None = None
        """A limitation to show the user although the source runs (set by `open`)."""

    def open(self) -> None:
        """Connect and start listening for focus and title changes.

        Raises:
            SourceUnavailable: No display is set, or it cannot be opened; the reason names the display.
        """
        name = self._requested or os.environ.get("DISPLAY", "")
        note = _wayland_note()
        if not name:
            raise SourceUnavailable(
                "no X display: $DISPLAY is not set (Wayland sessions are not supported yet, see docs/capture.md)"
            )
        self._name = name
        try:
            display = _connect(name)
        except (DisplayError, XauthError, XNoAuthError, XError, *_LOST) as exc:
            detail = getattr(exc, "msg", None) or str(exc)
            reason = f"cannot open the X display {name}: {detail}"
            raise SourceUnavailable(f"{reason} ({note})" if note else reason) from exc
        # Errors of requests that have no reply (selecting events on a window that just vanished) would otherwise be
        # printed to stderr by python-xlib; a vanished window is normal here.
        display.set_error_handler(lambda error, request: None)
        try:
            self._atoms = {
                atom: display.intern_atom(atom)
                for atom in ("_NET_ACTIVE_WINDOW", "_NET_WM_NAME", "_NET_WM_PID", "UTF8_STRING")
            }
            display.screen().root.change_attributes(event_mask=X.PropertyChangeMask)
            self._idle = display.has_extension("MIT-SCREEN-SAVER")
            self._watched = 0
            self._watch(display, self._active_id(display))
        except (XError, *_LOST) as exc:
            with suppress(XError, *_LOST):
                display.close()
            raise SourceUnavailable(f"the X display {name} went away while connecting: {exc}") from exc
        self._display, self._wake = display, os.pipe()
        if note:
            self.notice = note
            log.warning("X11 capture: %s", note)

    def active_window(self) -> Window | None:
        """The focused top-level window, or None.

        Raises:
            SourceUnavailable: The X display went away.
        """
        with self._lock:
            display = self._connected()
            try:
                wid = self._active_id(display)
                return self._describe(display, wid) if wid else None
            except XError:
                # The window vanished between reading its id and its properties: no window, until the next call.
                return None
            except _LOST as exc:
                raise self._lost() from exc

    def idle_seconds(self) -> float | None:
        """Seconds since the last input, from the MIT-SCREEN-SAVER extension; None without it.

        Raises:
            SourceUnavailable: The X display went away.
        """
        with self._lock:
            display = self._connected()
            if not self._idle:
                return None
            try:
                return float(display.screen().root.screensaver_query_info().idle) / 1000
            except XError:
                return None
            except _LOST as exc:
                raise self._lost() from exc

    def wait(self, timeout: float) -> bool:
        """Block until the active window or its title changes (True) or `timeout` seconds pass (False).

        A lost connection also returns True: the caller's next query then raises `SourceUnavailable`. After
        `close`, returns False at once.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            display, wake = self._display, self._wake
            if display is None or wake is None:
                return False
            try:
                while not self._changed(display):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    # The wake pipe is never drained: once `close` wrote to it, every later select returns at once.
                    readable, _, _ = select.select([display.fileno(), wake[0]], [], [], remaining)
                    if wake[0] in readable:
                        return False
                return True
            except (XError, *_LOST):
                return True

    def close(self) -> None:
        """Disconnect; idempotent, and a `wait` running in another thread returns promptly."""
        wake = self._wake
        if wake is not None:
            with suppress(OSError):
                os.write(wake[1], b"x")
        with self._lock:
            display, self._display, self._wake = self._display, None, None
            if display is not None:
                with suppress(XError, *_LOST):
                    display.close()
            for fd in wake or ():
                with suppress(OSError):
                    os.close(fd)

    def _connected(self) -> Display:
        if self._display is None:
            raise SourceUnavailable(f"the X11 source for {self._name or 'X'} is not open")
        return self._display

    def _lost(self) -> SourceUnavailable:
        return SourceUnavailable(f"the X display {self._name} went away")

    def _changed(self, display: Display) -> bool:
        """Drain the queued events; whether the active window or its title changed."""
        changed = False
        titles = (self._atoms["_NET_WM_NAME"], Xatom.WM_NAME)
        root = display.screen().root.id
        while display.pending_events():
            event = display.next_event()
            if event.type != X.PropertyNotify:
                continue
            if event.window.id == root and event.atom == self._atoms["_NET_ACTIVE_WINDOW"]:
                self._watch(display, self._active_id(display))
                changed = True
            elif event.window.id == self._watched and event.atom in titles:
                changed = True
        return changed

    def _watch(self, display: Display, wid: int) -> None:
        """Listen to `wid`'s property changes (its title) instead of the previous active window's."""
        if wid == self._watched:
            return
        if self._watched:
            display.create_resource_object("window", self._watched).change_attributes(event_mask=X.NoEventMask)
        if wid:
            display.create_resource_object("window", wid).change_attributes(event_mask=X.PropertyChangeMask)
        # Sent now, not with the next request: window ids are reused, and a selection sent late can land on a new
        # window that took the id of the one meant.
        display.flush()
        self._watched = wid

    def _active_id(self, display: Display) -> int:
        """The active window's id from the window manager (EWMH), else from the input focus; 0 for none."""
        root = display.screen().root
        prop = root.get_full_property(self._atoms["_NET_ACTIVE_WINDOW"], X.AnyPropertyType)
        if prop is not None:
            return int(prop.value[0]) if prop.format == 32 and len(prop.value) else 0
        # No EWMH window manager: the focus may be a child of the application's window; its top level is what has
        # the application's name (the first ancestor with WM_CLASS, or the child of the root).
        focus = display.get_input_focus().focus
        if not isinstance(focus, XWindow) or focus.id == root.id:
            return 0
        window: XWindow = focus
        while window.get_full_property(Xatom.WM_CLASS, Xatom.STRING) is None:
            parent = window.query_tree().parent
            if not isinstance(parent, XWindow) or parent.id in (0, root.id):
                break
            window = parent
        return int(window.id)

    def _describe(self, display: Display, wid: int) -> Window:
        window = display.create_resource_object("window", wid)
        instance, _, klass = (self._text(window, Xatom.WM_CLASS) or "").rstrip("\0").partition("\0")
        title = self._text(window, self._atoms["_NET_WM_NAME"]) or self._text(window, Xatom.WM_NAME)
        prop = window.get_full_property(self._atoms["_NET_WM_PID"], Xatom.CARDINAL)
        pid = int(prop.value[0]) if prop is not None and prop.format == 32 and len(prop.value) else None
        machine = self._text(window, Xatom.WM_CLIENT_MACHINE)
        # A pid means something only on its own machine (a client on another host, over ssh -X, names that host).
        local = machine is None or machine == socket.gethostname()
        return Window(
            app=klass or instance, title=title or "", pid=pid, process=_process_name(pid) if pid and local else None
        )

    def _text(self, window: XWindow, atom: int) -> str | None:
        prop = window.get_full_property(atom, X.AnyPropertyType, sizehint=_TEXT_SIZEHINT)
        if prop is None or prop.format != 8:
            return None
        raw = prop.value if isinstance(prop.value, bytes) else bytes(prop.value)
        # STRING is Latin-1 by definition; COMPOUND_TEXT is read as Latin-1 too (exact for its ASCII/Latin-1 part).
        encoding = "utf-8" if prop.property_type == self._atoms["UTF8_STRING"] else "latin-1"
        return raw.decode(encoding, errors="replace")


def _connect(name: str) -> Display:
    """python-xlib's `Display(name)`, minus the sockets a failed connect leaves behind.

    On failure python-xlib's unconnected sockets stay alive in the frames of its traceback (a reference cycle) until
    the garbage collector closes them, with a ResourceWarning, at some later moment; clearing the frames closes them
    now.
    """
    try:
        return Display(name)
    except BaseException as exc:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            error: BaseException | None = exc
            while error is not None:
                traceback.clear_frames(error.__traceback__)
                error = error.__context__
        raise


def _process_name(pid: int) -> str | None:
    """The process's command name from /proc (Linux), or None where there is no /proc or it has ended."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
            return comm.read().rstrip("\n") or None
    except OSError:
        return None
