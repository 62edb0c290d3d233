"""The client side of the protocol: find or start a local server, and a JSON-RPC client over its WebSocket.

Shared by every client; imports nothing of the server or the core.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import websockets
from websockets.asyncio.client import ClientConnection

from cowork.protocol import METHODS, Params, WireModel, environment_fingerprint, request

__all__ = [
    "RpcClient",
    "RpcError",
    "RunningServer",
    "ServerAddress",
    "cowork_home",
    "discover_server",
    "ensure_server",
    "running_server",
    "stop_server",
]

R = TypeVar("R", bound=WireModel)

_log = logging.getLogger(__name__)


class RpcError(Exception):
    """A JSON-RPC error from the server, with its stable `code` (`data.code`)."""

    def __init__(self, code: str, message: str, *, rpc_code: int = 0, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rpc_code = rpc_code
        self.data = data or {}


def cowork_home() -> Path:
    return Path(os.environ.get("COWORK_HOME") or "~/.cowork").expanduser().absolute()


@dataclass(frozen=True)
class ServerAddress:
    url: str
    """`http://host:port`"""
    token: str | None

    @property
    def ws_url(self) -> str:
        return self.url.replace("http", "ws", 1) + "/ws"


def _health(url: str, timeout: float = 1.0) -> dict[str, Any] | None:
    """What `/healthz` says (`status`, `pid`, `idle`), or None when nothing healthy answers."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=timeout) as resp:
            if resp.status != 200:
                return None
            body = json.loads(resp.read() or b"{}")
            return body if isinstance(body, dict) else {}
    except (OSError, ValueError):
        return None


def _healthy(url: str, timeout: float = 1.0) -> bool:
    return _health(url, timeout) is not None


@dataclass(frozen=True)
class RunningServer:
    """The background server recorded in `COWORK_HOME/server.json` that answers."""

    url: str
    pid: int
    started_at: str
    environment: str | None
    idle: bool

    def since(self) -> str:
        return self.started_at[:19].replace("T", " ") + " UTC" if self.started_at else "an unknown time"


def running_server(home: Path | None = None) -> RunningServer | None:
    """The recorded server, if it answers and is the process the record names."""
    home = home or cowork_home()
    try:
        info = json.loads((home / "server.json").read_text(encoding="utf-8"))
        url, pid = str(info["url"]), int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    health = _health(url)
    if health is None or health.get("pid", pid) != pid:
        return None
    environment = info.get("environment")
    return RunningServer(
        url,
        pid,
        str(info.get("startedAt", "")),
        environment if isinstance(environment, str) else None,
        bool(health.get("idle", False)),
    )


def stop_server(server: RunningServer, *, timeout: float = 15.0) -> bool:
    """Ask the server to stop (SIGTERM: it finishes writing and exits) and wait until it no longer answers."""
    try:
        os.kill(server.pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _health(server.url, 0.5) is None:
            return True
        time.sleep(0.05)
    return False


def _read_token(home: Path) -> str | None:
    try:
        return (home / "auth" / "token").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def discover_server(home: Path | None = None) -> ServerAddress | None:
    """The server recorded in `COWORK_HOME/server.json`, if it answers."""
    home = home or cowork_home()
    try:
        info = json.loads((home / "server.json").read_text(encoding="utf-8"))
        url = str(info["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _healthy(url):
        return None
    token = os.environ.get("COWORK_TOKEN") or (_read_token(home) if info.get("auth", True) else None)
    return ServerAddress(url, token)


def ensure_server(
    *,
    workspace: Path,
    home: Path | None = None,
    idle_exit_seconds: float = 900,
    timeout: float = 30.0,
    say: Callable[[str], None] | None = None,
) -> ServerAddress:
    """Attach to the running server, or start one in the background (it exits after a while with no clients).

    A running server started with other provider settings (keys, base URLs, `COWORK_*`) than this process has would
    not see ours: when it is idle it is restarted with ours; when it is busy we attach and `say` so, with how to
    restart it.

    Raises:
        RuntimeError: the server did not come up; the message includes the end of its log.
    """
    home = home or cowork_home()
    say = say or _say
    running = running_server(home)
    mine = environment_fingerprint(os.environ)
    if running is not None and running.environment not in (None, mine):
        if running.idle and stop_server(running):
            say(f"Restarted the Cowork server: the one running since {running.since()} had other provider settings.")
        else:
            say(
                f"Attached to the Cowork server at {running.url} (pid {running.pid}, since {running.since()}), which "
                "was started with other provider settings than this shell's and is busy; it keeps its own. "
                "`cowork server restart` restarts it with this shell's settings."
            )
    found = discover_server(home)
    if found is not None:
        return found
    home.mkdir(parents=True, exist_ok=True)
    (home / "logs").mkdir(exist_ok=True)
    log_path = home / "logs" / "server-stdout.log"
    with open(log_path, "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "cowork", "serve", "--quiet", "--idle-exit", str(idle_exit_seconds)],
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = discover_server(home)
        if found is not None:
            return found
        time.sleep(0.02)  # the server writes its file once it answers; the sooner it is seen, the sooner we attach
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    raise RuntimeError(f"The Cowork server did not start within {timeout:.0f} s. Its log says:\n{tail}")


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class RpcClient:
    """A JSON-RPC 2.0 client over one WebSocket. Notifications go to `on_notification`."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.on_notification: Callable[[str, dict[str, Any]], None] = lambda _m, _p: None
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.closed = asyncio.Event()

    @classmethod
    async def connect(cls, address: ServerAddress, *, origin: str | None = None) -> RpcClient:
        headers = {"Authorization": f"Bearer {address.token}"} if address.token else {}
        ws = await websockets.connect(
            address.ws_url,
            additional_headers=headers,
            origin=origin,  # type: ignore[arg-type]
            max_size=None,
            open_timeout=10,
            compression=None,
        )
        return cls(ws)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    _log.warning("ignoring a frame that is not JSON: %.200r", raw)
                    continue
                self._dispatch(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection to the Cowork server closed"))

    def _dispatch(self, message: Any) -> None:
        # Nothing in here may raise: this runs in the reader task, and if that task dies every pending call fails
        # and no further message is read. A newer server may send what this client does not understand.
        if isinstance(message, list):
            for item in message:
                self._dispatch(item)
            return
        if not isinstance(message, dict):
            _log.warning("ignoring a message that is not a JSON-RPC object: %.200r", message)
            return
        if "method" in message:
            self._notify(str(message["method"]), message.get("params"))
            return
        id_ = message.get("id")
        future = self._pending.pop(id_, None) if isinstance(id_, int) else None
        if future is None or future.done():
            return
        error = message.get("error")
        if error is not None:
            err = error if isinstance(error, dict) else {}
            data = err["data"] if isinstance(err.get("data"), dict) else {}
            future.set_exception(
                RpcError(
                    str(data.get("code", "error")), str(err.get("message", "")), rpc_code=err.get("code", 0), data=data
                )
            )
        else:
            future.set_result(message.get("result"))

    def _notify(self, method: str, params: Any) -> None:
        try:
            self.on_notification(method, params if isinstance(params, dict) else {})
        except Exception:
            # A handler that cannot cope with one notification is a client bug worth a traceback, not a reason to
            # stop reading: the turn, and every call waiting for its response, goes on.
            _log.exception("the %s notification handler failed; the connection keeps reading", method)

    async def call(self, method: str, params: Params | dict[str, Any] | None = None) -> Any:
        """Call a method and return its raw result; raises RpcError."""
        id_ = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[id_] = future
        payload = params.wire() if isinstance(params, WireModel) else params
        await self._ws.send(json.dumps(request(id_, method, payload)))
        return await future

    async def request(self, method: str, params: Params | None = None) -> Any:
        """Call a method and parse its result into the method's result model."""
        raw = await self.call(method, params)
        return METHODS[method].result.model_validate(raw)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
