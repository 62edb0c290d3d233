"""`cowork server status|stop|restart`: the background server this user's clients share (in `COWORK_HOME`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cowork.clients.connection import cowork_home, ensure_server, running_server, stop_server
from cowork.protocol import environment_fingerprint

__all__ = ["main_server"]


def main_server(action: str, workspace: Path | None = None) -> int:
    """Exit codes: 0 done; 1 no server (status, stop) or it would not stop."""
    home = cowork_home()
    running = running_server(home)
    if action == "status":
        if running is None:
            print(f"No Cowork server is running for {home}.")
            return 1
        same = running.environment == environment_fingerprint(os.environ)
        print(f"Cowork server at {running.url}")
        print(f"  pid {running.pid}, running since {running.since()}, home {home}")
        print(
            f"  {'idle (no client, no running turn)' if running.idle else 'busy (a client is connected or a turn runs)'}"
        )
        print(
            "  provider settings: "
            + ("the same as this shell's" if same else "different from this shell's (`cowork server restart`)")
        )
        return 0
    if action == "stop":
        if running is None:
            print(f"No Cowork server is running for {home}.")
            return 1
        if not stop_server(running):
            print(f"The Cowork server (pid {running.pid}) did not stop.", file=sys.stderr)
            return 1
        print(f"Stopped the Cowork server (pid {running.pid}).")
        return 0
    # restart: stop whatever runs, then start one with this shell's settings.
    if running is not None and not stop_server(running):
        print(f"The Cowork server (pid {running.pid}) did not stop.", file=sys.stderr)
        return 1
    address = ensure_server(workspace=(workspace or Path.cwd()).resolve(), home=home)
    started = running_server(home)
    print(
        f"Cowork server at {address.url}"
        + (f" (pid {started.pid})" if started else "")
        + ", with this shell's settings."
    )
    return 0
