"""The configuration checks: config files, providers and MCP servers, read the way the server reads them.

Nothing here starts a server, an MCP server or a model call: saved connections and MCP entries are read from the
database opened read-only, providers are reported with `ProviderService.status(check=False)`, and only
`--network` probes the connected ones (the same probe `provider/status` runs).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from cowork.config import ConfigError, LoadedConfig, load_config
from cowork.protocol import ProtocolError, ProviderStatusInfo

from ._checks import Check

if TYPE_CHECKING:
    from cowork.mcp import ServerConfig
    from cowork.providers import ProviderService
    from cowork.store import Database

__all__ = ["check_config", "check_mcp", "check_providers", "check_tracing"]

NETWORK_TIMEOUT = 8.0
"""Longest `--network` waits for one provider (local servers answer sooner: their probe has its own timeout)."""

_NO_PROVIDER_FIX = (
    "export OPENAI_API_KEY=… (or ANTHROPIC_API_KEY, GOOGLE_API_KEY); or OPENAI_BASE_URL=http://localhost:11434/v1 "
    "for a local OpenAI-compatible server; or /connect PROVIDER in the REPL."
)


def check_config(workspace: Path, env: Mapping[str, str]) -> tuple[LoadedConfig | None, list[Check]]:
    """Load the configuration as the server would for `workspace`; a broken file is a problem naming it."""
    try:
        loaded = load_config(workspace, env=env)
    except ConfigError as exc:
        files = sorted({p.source for p in exc.problems})
        detail = "; ".join(str(p) for p in exc.problems)
        return None, [Check("config", "problem", detail, f"Fix {', '.join(files)} (docs/configuration.md).")]
    files = [str(p) for p in (loaded.paths.config_file, workspace / ".cowork" / "config.toml") if p.is_file()]
    read = f"read {', '.join(files)}" if files else "defaults (no config.toml)"
    trust = "trusted" if loaded.trusted else "not trusted"
    checks = [Check("config", "ok", f"{read}; workspace {loaded.workspace} is {trust}")]
    for warning in loaded.warnings():
        checks.append(Check("config", "warning", warning))
    return loaded, checks


def _open_database(loaded: LoadedConfig) -> Database | None:
    from cowork.store import Database

    if loaded.config.database_url and not loaded.config.database_url.startswith("sqlite"):
        db = Database.postgres(loaded.config.database_url)  # replicas: only read here (doctor writes nothing)
        try:
            if db.current_revision() is None:
                db.close()
                return None  # no server has used it yet: nothing is saved
        except Exception:
            return db  # unreachable: reading the saved connections says so
        return db
    try:
        return Database.sqlite_readonly(loaded.paths.database)
    except FileNotFoundError:
        return None  # no server has run yet: nothing is saved


def _connected(info: ProviderStatusInfo, default: str | None, preset_url: str | None) -> bool:
    """A keyed provider with a key (or an OpenAI-compatible URL); a local one only when chosen or pointed somewhere."""
    if info.state == "missing_key":
        return False
    return not info.local or info.id == default or info.base_url != preset_url


def _how(info: ProviderStatusInfo, env: Mapping[str, str], custom_url: bool) -> str:
    parts = []
    if info.key_source == "store":
        parts.append("saved key")
    elif info.key_source == "env":
        parts.append(next((f"${name}" for name in info.key_env if env.get(name)), "key from the environment"))
    if custom_url or info.local:
        parts.append(str(info.base_url))
    return f"{info.id} ({', '.join(parts)})" if parts else info.id


async def check_providers(loaded: LoadedConfig, env: Mapping[str, str], *, network: bool = False) -> list[Check]:
    """Which providers are connected and which model a new turn would use; with `network`, whether they answer."""
    from cowork.credentials import CredentialStore
    from cowork.models import ModelSelector
    from cowork.providers import ProviderService
    from cowork.store import Database

    checks: list[Check] = []
    selector = ModelSelector(loaded.config, env)
    credentials = CredentialStore(loaded.paths.home, backend=loaded.config.credentials.store)
    saved = _open_database(loaded)
    db = saved if saved is not None else Database.memory()
    service = ProviderService(selector, credentials, db, loaded.config)
    try:
        if saved is not None:
            try:
                await service.load()
            except Exception as exc:  # a locked or older database: report, and go on with the environment
                checks.append(
                    Check("providers", "warning", f"saved connections could not be read: {type(exc).__name__}: {exc}")
                )
        default = selector.default_provider()
        presets = selector.presets
        status = await service.status(check=False)
        connected = [p for p in status.providers if p.id in presets and _connected(p, default, presets[p.id].base_url)]
        if not connected:
            return [*checks, Check("providers", "problem", "no model provider is connected.", _NO_PROVIDER_FIX)]
        shown = ", ".join(_how(p, env, p.base_url != presets[p.id].base_url) for p in connected)
        checks.append(Check("providers", "ok", f"connected: {shown}"))
        chosen: str | None = None
        try:
            target = selector.resolve(None, None)
        except ProtocolError as exc:
            fix = f"/model, or set provider and model in {loaded.paths.config_file}"
            checks.append(Check("default model", "problem", str(exc), fix))
        else:
            chosen = target.provider
            checks.append(Check("default model", "ok", f"{target.provider}:{target.model}"))
        if network:
            for info in connected:
                checks.append(await _reach(service, info, chosen))
    finally:
        await service.aclose()
        db.close()
    return checks


async def _reach(service: ProviderService, info: ProviderStatusInfo, default: str | None) -> Check:
    name = f"provider {info.id}"
    try:
        result = (await asyncio.wait_for(service.status(info.id, check=True), NETWORK_TIMEOUT)).providers[0]
    except TimeoutError:
        state, message, latency = "unreachable", f"no answer from {info.base_url} in {NETWORK_TIMEOUT:.0f} s", None
    else:
        state, message, latency = result.state, result.message, result.latency_ms
    if state == "connected":
        took = f" in {latency:.0f} ms" if latency is not None else ""
        return Check(name, "ok", f"reachable at {info.base_url}{took}")
    fix = f"/connect {info.id} in the REPL" if state == "auth_failed" else f"check that {info.base_url} is up"
    return Check(name, "problem" if info.id == default else "warning", f"{state.replace('_', ' ')}: {message}", fix)


def _mcp_configs(loaded: LoadedConfig) -> tuple[list[ServerConfig], list[Check]]:
    from cowork.mcp import ConfigFileError, ServerConfig, load_file, merge_layers
    from cowork.store import repos

    checks: list[Check] = []
    layers: dict[str, list[ServerConfig]] = {"workspace": [], "user": []}
    files = {
        "workspace": loaded.workspace / ".cowork" / "mcp-servers.json",
        "user": loaded.paths.home / "mcp-servers.json",
    }
    for source, path in files.items():
        try:
            layers[source] = load_file(path, source=source, workspace=str(loaded.workspace))  # type: ignore[arg-type]
        except ConfigFileError as exc:
            checks.append(Check("mcp", "problem", str(exc), f"Fix {path}."))
    stored: list[ServerConfig] = []
    db = _open_database(loaded)
    if db is not None:
        try:
            stored = [ServerConfig.from_row(row) for row in db.read_sync(repos.mcp_servers.all_rows)]
        except Exception as exc:  # a locked or older database: report, and check the files
            checks.append(Check("mcp", "warning", f"saved MCP servers could not be read: {type(exc).__name__}: {exc}"))
        finally:
            db.close()
    merged, _stale = merge_layers(stored, layers["workspace"], layers["user"], [])
    return merged, checks


def _server_check(server: ServerConfig) -> Check:
    name = f"mcp {server.name}"
    if not server.enabled:
        return Check(name, "ok", "disabled")
    fix = "Fix the server's entry (/mcp in the REPL, or its mcp-servers.json)."
    problem = server.problem()
    if problem is not None:
        return Check(name, "problem", problem, fix)
    if server.transport == "stdio":
        command = server.command or ""
        found = shutil.which(command, path=server.env.get("PATH") or os.environ.get("PATH"))
        if found is None:
            return Check(
                name,
                "problem",
                f"command {command!r} not found on PATH.",
                f"Install {command}, or give its full path in the server's entry (/mcp in the REPL).",
            )
        return Check(name, "ok", f"stdio: {found}")
    url = urlparse(server.url or "")
    if url.scheme not in ("http", "https") or not url.hostname:
        return Check(name, "problem", f"URL {server.url!r} is not an http(s) address.", fix)
    return Check(name, "ok", f"{server.transport}: {server.url}")


def check_mcp(loaded: LoadedConfig) -> list[Check]:
    """Each configured MCP server can be started: its command is on PATH (stdio) or its URL parses (http, sse)."""
    servers, checks = _mcp_configs(loaded)
    if not servers and not checks:
        return [Check("mcp", "ok", "no MCP servers configured")]
    return [*checks, *(_server_check(server) for server in servers)]


_TRACING_FIX = (
    "Set [tracing] otlp_endpoint to the collector's OTLP/HTTP traces URL, e.g. http://localhost:4318/v1/traces."
)


async def check_tracing(loaded: LoadedConfig, *, network: bool = False) -> list[Check]:
    """Whether turns are traced and where spans go; with `network`, whether the OTLP collector takes an (empty)
    export."""
    tracing = loaded.config.tracing
    kept = (
        f"on, kept {tracing.keep_days:g} days in the database" if tracing.enabled else "off (tracing.enabled = false)"
    )
    endpoint = tracing.otlp_endpoint
    if not endpoint:
        return [Check("tracing", "ok", f"{kept}; nothing is sent anywhere")]
    url = urlparse(endpoint)
    if url.scheme not in ("http", "https") or not url.netloc:
        return [Check("tracing", "problem", f"otlp_endpoint {endpoint!r} is not an http(s) URL.", _TRACING_FIX)]
    checks = [Check("tracing", "ok", f"{kept}; also sent to {endpoint}")]
    if network:
        checks.append(await _reach_collector(endpoint, dict(tracing.otlp_headers)))
    return checks


async def _reach_collector(endpoint: str, headers: dict[str, str]) -> Check:
    import httpx

    headers = {**headers, "Content-Type": "application/x-protobuf"}
    try:
        async with httpx.AsyncClient(timeout=NETWORK_TIMEOUT) as client:
            answer = await client.post(endpoint, content=b"", headers=headers)
    except httpx.HTTPError as exc:
        return Check(
            "otlp collector", "problem", f"{endpoint} cannot be reached: {type(exc).__name__}: {exc}", _TRACING_FIX
        )
    if answer.is_success:
        return Check("otlp collector", "ok", f"{endpoint} takes exports ({answer.status_code})")
    fix = (
        "Check the collector's credentials (tracing.otlp_headers)."
        if answer.status_code in (401, 403)
        else _TRACING_FIX
    )
    return Check("otlp collector", "problem", f"{endpoint} answered {answer.status_code} to an empty export.", fix)
