"""A private D-Bus session bus, and a real notification daemon (dunst) on it, for the desktop notification tests.

`DesktopNotifier` talks to whatever owns `org.freedesktop.Notifications`; a fake owner would only test our reading of
the fake. So tests start `PrivateSessionBus` (a dbus-daemon of their own, never the user's session bus) and `Dunst` on
it, drawing on an Xvfb display (`cowork.testing.xdisplay`), and read back what dunst made of each notification.

The bus is configured here rather than with `--session`: the session configuration reads the system's service
directories, where dunst's own service file would start a dunst on demand, so a test of "no daemon" would get one.
Service directories are given explicitly (`service_dirs`) by a test that wants starting on demand.

`Dunst` runs with a configuration whose rules stamp each notification's urgency on the text it formats, because dunst
1.9 (Debian 12) does not list urgency in its history; `history` reads that history over dunst's own control interface
(what `dunstctl history` prints, without its need for systemd's busctl).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from xml.sax.saxutils import escape

from jeepney import DBusAddress, MessageType, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

from cowork.processes import die_with_parent, stop_tree

__all__ = ["NOTIFICATIONS", "Dunst", "PrivateSessionBus", "Received", "available", "wait_for_name"]

NOTIFICATIONS = "org.freedesktop.Notifications"
_TOOLS = ("dbus-daemon", "dunst", "Xvfb")
_TIMEOUT = 10.0
_URGENCIES = ("low", "normal", "critical")


def available() -> str | None:
    """Why a bus with dunst on an X display cannot run here (a missing program), or None when it can."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (scripts/_system_packages.sh installs them)"
    return None


class _Daemon:
    """A test daemon of ours: its process and its temporary folder, stopped (or killed) and removed."""

    _home: tempfile.TemporaryDirectory[str] | None = None
    _proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def kill(self) -> None:
        """SIGKILL it, as a crash would (`start` brings it back)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()

    def stop(self) -> None:
        """Stop it and whatever it started, and remove its folder; idempotent."""
        if self._proc is not None:
            if self._proc.poll() is None:
                stop_tree(self._proc.pid, grace=2.0)
            self._proc.wait()
            self._proc = None
        if self._home is not None:
            self._home.cleanup()
            self._home = None


class PrivateSessionBus(_Daemon):
    """A dbus-daemon of its own on a socket in a temporary folder; `.address` is set once started.

    Args:
        service_dirs: Folders of `.service` files the bus starts services from on demand; none by default.
    """

    def __init__(self, *, service_dirs: tuple[Path, ...] = ()) -> None:
        self.address = ""
        self._service_dirs = service_dirs

    @property
    def socket(self) -> Path:
        """The bus's socket file (the same across `kill` and `start`)."""
        if self._home is None:
            raise RuntimeError("the bus has not been started")
        return Path(self._home.name) / "bus"

    def start(self) -> None:
        """Start the bus (again, after `kill`, on the same socket); return once it accepts connections.

        Raises:
            RuntimeError: It did not start; the message carries its output.
        """
        if self._home is None:
            self._home = tempfile.TemporaryDirectory(prefix="cowork-dbus-")
        home = Path(self._home.name)
        # A killed bus leaves its socket file behind, and dbus-daemon will not listen on an existing path.
        self.socket.unlink(missing_ok=True)
        config = home / "bus.conf"
        config.write_text(_config(self.socket, self._service_dirs), encoding="utf-8")
        log = home / "dbus-daemon.log"
        read, write = os.pipe()
        with log.open("ab") as out:
            # --print-address: written once the bus listens, so reading it is the wait.
            self._proc = subprocess.Popen(
                ["dbus-daemon", f"--config-file={config}", "--nofork", f"--print-address={write}"],
                pass_fds=[write],
                stdout=out,
                stderr=out,
                preexec_fn=die_with_parent(),
            )
        os.close(write)
        try:
            with os.fdopen(read, "rb") as announced:
                address = announced.readline().decode(errors="replace").strip()
        except BaseException:
            self.stop()
            raise
        if not address:
            output = log.read_text(errors="replace")[-2000:]
            self.stop()
            raise RuntimeError(f"dbus-daemon did not start: {output}")
        self.address = address

    def reload(self) -> None:
        """Have the bus read its configuration and service files again (it does not notice a new service file)."""
        with open_dbus_connection(self.address) as conn:
            reply = conn.send_and_get_reply(new_method_call(message_bus, "ReloadConfig"), timeout=_TIMEOUT)
        if reply.header.message_type is MessageType.error:
            raise RuntimeError(f"the bus answered ReloadConfig with an error: {reply.body}")


def _config(socket: Path, service_dirs: tuple[Path, ...]) -> str:
    """A session bus configuration: one socket, EXTERNAL authentication, everything allowed, only `service_dirs`."""
    dirs = "".join(f"  <servicedir>{escape(str(path))}</servicedir>\n" for path in service_dirs)
    return (
        '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"\n'
        ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
        "<busconfig>\n"
        "  <type>session</type>\n"
        f"  <listen>unix:path={escape(str(socket))}</listen>\n"
        "  <auth>EXTERNAL</auth>\n"
        f"{dirs}"
        '  <policy context="default">\n'
        '    <allow send_destination="*" eavesdrop="true"/>\n'
        '    <allow eavesdrop="true"/>\n'
        '    <allow own="*"/>\n'
        "  </policy>\n"
        "</busconfig>\n"
    )


def wait_for_name(
    address: str, name: str, *, proc: subprocess.Popen[bytes] | None = None, log: Path | None = None
) -> None:
    """Return once `name` has an owner on the bus at `address`.

    Raises:
        RuntimeError: `proc` (the program meant to take the name) exited first, or ten seconds passed; with `log`.
    """
    deadline = time.monotonic() + _TIMEOUT
    with open_dbus_connection(address) as conn:
        while not conn.send_and_get_reply(message_bus.NameHasOwner(name), timeout=_TIMEOUT).body[0]:
            if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
                output = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
                raise RuntimeError(f"nothing took {name} on {address}: {output}")
            time.sleep(0.01)


@dataclass(frozen=True, slots=True)
class Received:
    """A notification as dunst recorded it."""

    id: int
    app: str
    summary: str
    """The title as it arrived."""
    body: str
    """The body as it arrived (escaped markup, where we escaped it)."""
    urgency: str
    """"low", "normal" or "critical": what dunst took the urgency hint for."""
    markup: str
    """What dunst gave Pango to draw: the summary, a newline, the body."""


class Dunst(_Daemon):
    """dunst on the bus at `address`, drawing on X display `display`, with a configuration of its own.

    Args:
        markup: dunst's `markup` setting: "full" (its default configuration's), "strip" or "no" (no `body-markup`).
    """

    def __init__(self, address: str, display: str, *, markup: str = "full") -> None:
        self.address = address
        self.display = display
        self._markup = markup

    def start(self) -> None:
        """Start dunst; return once it owns `org.freedesktop.Notifications`.

        Raises:
            RuntimeError: It did not take the name; the message carries its output.
        """
        home = self._folder()
        log = home / "dunst.log"
        with log.open("ab") as out:
            self._proc = subprocess.Popen(
                self.command(), env=self._environment(), stdout=out, stderr=out, preexec_fn=die_with_parent()
            )
        try:
            wait_for_name(self.address, NOTIFICATIONS, proc=self._proc, log=log)
        except BaseException:
            self.stop()
            raise

    def command(self) -> list[str]:
        """The command that runs this dunst, its configuration written first (its environment: `_environment`)."""
        config = self._folder() / "dunstrc"
        config.write_text(_dunstrc(self._markup), encoding="utf-8")
        return ["dunst", "-config", str(config)]

    def service_file(self, directory: Path) -> Path:
        """Write a D-Bus service file to `directory` that starts this dunst when a client calls it; its path.

        A running bus reads it on `PrivateSessionBus.reload`. The dunst it starts is the bus's child, stopped with it.
        """
        env = " ".join(f"{name}={value}" for name, value in self._environment().items() if name != "PATH")
        path = directory / f"{NOTIFICATIONS}.service"
        exec_line = f"/usr/bin/env {env} {' '.join(self.command())}"
        path.write_text(f"[D-BUS Service]\nName={NOTIFICATIONS}\nExec={exec_line}\n", encoding="utf-8")
        return path

    def history(self) -> list[Received]:
        """Every notification dunst has received, newest first (it closes those still shown to list them)."""
        control = DBusAddress(
            "/org/freedesktop/Notifications", bus_name=NOTIFICATIONS, interface="org.dunstproject.cmd0"
        )
        with open_dbus_connection(self.address) as conn:
            # dunst lists only closed notifications; closing moves the shown ones (and, in order, the waiting ones).
            for method in ("NotificationCloseAll", "NotificationListHistory"):
                reply = conn.send_and_get_reply(new_method_call(control, method), timeout=_TIMEOUT)
                if reply.header.message_type is MessageType.error:
                    raise RuntimeError(f"dunst answered {method} with an error: {reply.body}")
        return [_received({key: value for key, (_sig, value) in entry.items()}) for entry in reply.body[0]]

    def _folder(self) -> Path:
        if self._home is None:
            self._home = tempfile.TemporaryDirectory(prefix="cowork-dunst-")
        return Path(self._home.name)

    def _environment(self) -> dict[str, str]:
        # Only what dunst needs: never the caller's Wayland display or configuration folders.
        home = str(self._folder())
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": home,
            "DISPLAY": self.display,
            "DBUS_SESSION_BUS_ADDRESS": self.address,
        }


def _dunstrc(markup: str) -> str:
    # A rule per urgency puts it on the first line of the formatted text, the one place dunst 1.9 records it.
    rules = "".join(
        f'[cowork_{urgency}]\n    msg_urgency = {urgency}\n    format = "{urgency}\\n%s\\n%b"\n'
        for urgency in _URGENCIES
    )
    return f"[global]\n    markup = {markup}\n    history_length = 100\n{rules}"


def _received(entry: dict[str, Any]) -> Received:
    urgency, _, markup = str(entry["message"]).partition("\n")
    return Received(
        id=int(entry["id"]),
        app=str(entry["appname"]),
        summary=str(entry["summary"]),
        body=str(entry["body"]),
        urgency=urgency,
        markup=markup,
    )
