"""`initialize`, `ping`, `health` and `trace/*`: what this server is and offers, how it stands, what it did."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import cowork
from cowork.core import Core
from cowork.models import presets
from cowork.protocol import (
    EVENT_PAYLOADS,
    METHODS,
    PROTOCOL_VERSION,
    SLASH_COMMANDS,
    Capabilities,
    EmptyParams,
    HealthResult,
    InitializeParams,
    InitializeResult,
    PingResult,
    PublicConfig,
    ServerInfo,
    TraceGetParams,
    TraceGetResult,
    TraceListParams,
    TraceListResult,
    environment_fingerprint,
)

from .._peer import Peer

__all__ = ["health", "initialize", "ping", "trace_get", "trace_list"]

_STARTED_AT = datetime.now(UTC)
"""When this server started: this module is loaded while the app is built, before the port opens."""


_SERVED_WAIT_SECONDS = 1.0


async def initialize(core: Core, peer: Peer | None, params: InitializeParams) -> InitializeResult:
    config = core.config
    provider = core.selector.default_provider()
    preset = presets().get(provider) if provider else None
    model = core.selector.default_model(provider) if provider else None
    if provider and model:
        # What a turn would use: a server of one's own may not serve the catalog's default (a short wait at most).
        model = await core.providers.served_default(provider, model, wait=_SERVED_WAIT_SECONDS) or model
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_info=ServerInfo(
            name="cowork",
            version=cowork.__version__,
            pid=os.getpid(),
            started_at=_STARTED_AT,
            environment=environment_fingerprint(os.environ),
        ),
        capabilities=Capabilities(
            # Every protocol method has a handler (tests/server/test_registry.py), so this is what the server answers.
            methods=sorted(METHODS),
            event_types=list(EVENT_PAYLOADS),
            tools=core.tools.names(),
            max_frame_bytes=config.server.max_frame_bytes,
            max_inflight_requests=config.server.max_inflight_requests,
            sandbox=core.bwrap is not None,
            sandbox_note=core.sandbox_note,
        ),
        config=PublicConfig(
            workspace=str(core.workspace),
            provider=provider,
            model=model,
            home=str(core.paths.home),
            base_url=core.selector.base_url(preset) if preset else None,
            warnings=core.loaded.warnings(),
        ),
        commands=list(SLASH_COMMANDS),
    )


async def ping(core: Core, peer: Peer | None, params: EmptyParams) -> PingResult:
    return PingResult(time=datetime.now(UTC))


async def health(core: Core, peer: Peer | None, params: EmptyParams) -> HealthResult:
    return await core.health()


async def trace_list(core: Core, peer: Peer | None, params: TraceListParams) -> TraceListResult:
    return await core.traces.list(params)


async def trace_get(core: Core, peer: Peer | None, params: TraceGetParams) -> TraceGetResult:
    return await core.traces.get(params)
