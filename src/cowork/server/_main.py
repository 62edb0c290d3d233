"""Running the server: bind, token, discovery file, idle exit, clean shutdown.

Start-up order: the config and the token; the address reserved (bound, not listening); the core built and started
(migrations, recovery) by the app's lifespan; only then does uvicorn listen, so the first connection is answered,
and only then is the discovery file written. Once listening, the core warms up in the background
(`Core.warm_up`), so the first turn does not pay for loading the model layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette

from cowork.config import ConfigError, CoworkPaths, LoadedConfig, load_config
from cowork.config._paths import write_private
from cowork.core import Core
from cowork.logs import setup_server_logging
from cowork.protocol import environment_fingerprint, web_url

from ._app import ServerState, create_app
from ._auth import is_loopback, load_or_create_token

__all__ = ["ServeOptions", "read_server_file", "serve"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeOptions:
    workspace: Path | None = None
    host: str | None = None
    port: int | None = None
    no_auth: bool = False
    idle_exit_seconds: float | None = None
    quiet: bool = False
    reuse_port: bool = False
    """Set `server.reuse_port` (only ever turns it on: off leaves the configured value)."""
    database_url: str | None = None
    """Set `database_url`, as COWORK_DATABASE_URL does (checked by the config schema)."""


class StartupError(Exception):
    """The server refuses to start; the message says why and what to do."""


def read_server_file(paths: CoworkPaths) -> dict[str, Any] | None:
    """The running server's discovery record, if its process is still alive."""
    try:
        info = json.loads(paths.server_file.read_text(encoding="utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) else None


def _bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """Reserve the address. Not listening yet: uvicorn listens once the app has started and can answer, so a client
    that connects the moment the port accepts is answered (before, it is refused and retries).

    With `reuse_port`, SO_REUSEPORT before the bind: every replica that binds the same host:port so (as the same
    user) listens on it, and the kernel spreads new connections between their listening sockets.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        if not hasattr(socket, "SO_REUSEPORT"):
            sock.close()
            raise StartupError("server.reuse_port needs SO_REUSEPORT, which this system does not have.")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise StartupError(f"Cannot listen on {host}:{port}: {exc.strerror}.") from None
    sock.set_inheritable(True)
    return sock


def _setup_logging(loaded: LoadedConfig, quiet: bool) -> None:
    """JSON lines into `logs/server.log` (0600, rotated at `logs.max_mb`), warnings on stderr unless quiet."""
    limits = loaded.config.logs
    setup_server_logging(
        loaded.paths.server_log, quiet=quiet, max_bytes=int(limits.max_mb * 1024 * 1024), backups=limits.backups
    )


async def _idle_watch(state: ServerState, server: uvicorn.Server, seconds: float) -> None:
    idle_since: float | None = None
    loop = asyncio.get_running_loop()
    while not server.should_exit:
        await asyncio.sleep(min(1.0, seconds / 4))
        if state.idle():
            idle_since = idle_since or loop.time()
            if loop.time() - idle_since >= seconds:
                log.info("idle for %.0f s with no clients and no running turn: exiting", seconds)
                server.should_exit = True
        else:
            idle_since = None


async def _after_start(state: ServerState, server: uvicorn.Server, loaded: LoadedConfig, url: str, quiet: bool) -> None:
    """Once the server listens: tell clients where it is, then warm up."""
    while not server.started:
        if server.should_exit:
            return
        await asyncio.sleep(0.002)
    _announce(state, loaded, url, quiet)
    await state.core.warm_up()
    # What is loaded by now (the modules, the provider stack, the schemas, the caches) lives as long as the server.
    # Frozen, it is left out of the collector's full passes, which otherwise walk all of it: about 150 ms of the
    # event loop each, landing in whatever turn is running (bench/startup.py, bench/long_session.py).
    gc.freeze()


def _announce(state: ServerState, loaded: LoadedConfig, url: str, quiet: bool) -> None:
    record = {
        "url": url,
        "pid": os.getpid(),
        "workspace": str(loaded.workspace),
        "startedAt": datetime.now(UTC).isoformat(),
        "auth": state.token is not None,
        "environment": environment_fingerprint(os.environ),
    }
    write_private(loaded.paths.server_file, json.dumps(record))
    if not quiet:
        print(f"Cowork server listening on {url}", flush=True)
        if state.token is not None:
            print(f"Token: {state.token}  (saved in {loaded.paths.token_file})", flush=True)
            print(f"WebSocket: {url.replace('http', 'ws', 1)}/ws?token={state.token}", flush=True)
        print(f"Web UI: {web_url(url, state.token)}", flush=True)


def prepare(options: ServeOptions) -> tuple[LoadedConfig, str, int, str | None]:
    """Load config and decide host, port and token. Raises ConfigError or StartupError."""
    overrides: dict[str, Any] = {}
    server: dict[str, Any] = {}
    if options.host is not None:
        server["host"] = options.host
    if options.port is not None:
        server["port"] = options.port
    if options.idle_exit_seconds is not None:
        server["idle_exit_seconds"] = options.idle_exit_seconds
    if options.reuse_port:
        server["reuse_port"] = True
    if server:
        overrides["server"] = server
    if options.database_url is not None:
        overrides["database_url"] = options.database_url
    loaded = load_config(options.workspace, overrides=overrides)
    host, port = loaded.config.server.host, loaded.config.server.port
    if loaded.config.server.reuse_port and port == 0:
        raise StartupError(
            "server.reuse_port needs a port: with port 0 each replica would get a free port of its own, and none "
            "would share. Name one (--port 8765, or server.port)."
        )
    if options.no_auth and not is_loopback(host):
        raise StartupError(
            f"Refusing to listen on {host} without a token: anyone who can reach this address could run commands "
            "as you. Drop --no-auth (a token is then required), or bind to 127.0.0.1."
        )
    loaded.paths.ensure()
    token = None if options.no_auth else os.environ.get("COWORK_TOKEN") or load_or_create_token(loaded.paths.token_file)
    return loaded, host, port, token


def build_app(loaded: LoadedConfig, token: str | None, port: int) -> tuple[ServerState, Starlette]:
    """The core and the app, not started (the app's lifespan starts the core)."""
    state = ServerState(core=Core(loaded), token=token, port=port)
    return state, create_app(state)


async def _serve(options: ServeOptions) -> None:
    loaded, host, port, token = prepare(options)
    _setup_logging(loaded, options.quiet)
    sock = _bind(host, port, reuse_port=loaded.config.server.reuse_port)
    bound_port = sock.getsockname()[1]
    display_host = f"[{host}]" if ":" in host else host
    url = f"http://{display_host}:{bound_port}"
    if token is None:
        log.warning("authentication is OFF (--no-auth): any local program can drive this server")
        if not options.quiet:
            print("WARNING: authentication is off (--no-auth).", file=sys.stderr, flush=True)
    state, app = build_app(loaded, token, bound_port)
    server_cfg = loaded.config.server
    config = uvicorn.Config(
        app,
        loop="asyncio",
        log_level="warning",
        access_log=False,
        lifespan="on",
        ws="websockets-sansio",
        # Frames between our limit and this one get a JSON-RPC error with the connection kept open.
        ws_max_size=server_cfg.max_frame_bytes * 4,
        # Compressing every frame costs more CPU than it saves bytes on loopback.
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    tasks = [asyncio.get_running_loop().create_task(_after_start(state, server, loaded, url, options.quiet))]
    idle = server_cfg.idle_exit_seconds
    if idle:
        tasks.append(asyncio.get_running_loop().create_task(_idle_watch(state, server, idle)))
    try:
        await server.serve(sockets=[sock])
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(FileNotFoundError, ValueError, OSError):
            info = json.loads(loaded.paths.server_file.read_text(encoding="utf-8"))
            if info.get("pid") == os.getpid():
                loaded.paths.server_file.unlink()
        sock.close()


def serve(options: ServeOptions) -> int:
    """Run the server until it is stopped; returns the process exit code."""
    try:
        # The standard event loop, not uvloop: libuv spawns child processes with fork(), about 7 ms each in a
        # process this size against 1 ms for asyncio's, and tools (grep, bash) spawn on every call.
        asyncio.run(_serve(options))
    except (ConfigError, StartupError) as exc:
        print(f"cowork: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
