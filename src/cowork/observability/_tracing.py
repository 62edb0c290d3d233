"""One `Tracing` per server: the tracer provider (built on first use), its processors (the database, and OTLP when
configured), root spans with the trace id of their operation, flushing, health and shutdown."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cowork.config import TracingConfig
from cowork.lazy import HEAVY_IMPORTS
from cowork.protocol import SubsystemStatus
from cowork.store import Database

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import Span, Tracer

    from ._sdk import StoreExporter, Watched

__all__ = ["Tracing"]

log = logging.getLogger(__name__)

_STORE_DELAY_MS = 2000
"""How long finished spans wait to be stored together (`trace/get` flushes first, so none is missed)."""
_OTLP_DELAY_MS = 1000
"""How long finished spans wait to be sent to a collector together."""
_OTLP_TIMEOUT_SECONDS = 4.0
"""How long one export may take, retries included (a collector that is down holds up no more than that)."""
_SHUTDOWN_SECONDS = 5.0


class Tracing:
    """The server's tracing: off, local (spans in the database), and/or sent to an OTLP/HTTP collector."""

    def __init__(self, config: TracingConfig, db: Database | None, *, version: str = "") -> None:
        self.config = config
        self._db = db
        self._version = version
        self._lock = threading.Lock()
        self._provider: TracerProvider | None = None
        self._tracer: Tracer | None = None
        self._store: BatchSpanProcessor | None = None
        self._store_exporter: StoreExporter | None = None
        self._otlp: Watched | None = None
        self._closed = False

    @property
    def enabled(self) -> bool:
        return self.config.enabled or bool(self.config.otlp_endpoint)

    @property
    def stores(self) -> bool:
        """Spans are kept in the database (`trace/list`, `trace/get` find them)."""
        return self.config.enabled and self._db is not None

    def tracer(self) -> Tracer | None:
        """The tracer every span is started from; None when tracing is off or stopped. Builds the SDK on first use
        (blocking: about 0.1 s of imports, and the OTLP exporter's when configured)."""
        if self._tracer is None and self.enabled and not self._closed:
            with HEAVY_IMPORTS, self._lock:
                if self._tracer is None and not self._closed:
                    self._build()
        return self._tracer

    def _build(self) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ALWAYS_ON

        from ._sdk import Ids, StoreExporter, Watched

        resource = Resource.create({"service.name": "cowork", "service.version": self._version})
        # Every span is kept (no sampling), so the sampler is the cheapest: the default asks the parent first.
        provider = TracerProvider(resource=resource, id_generator=Ids(), sampler=ALWAYS_ON, shutdown_on_exit=False)
        if self.stores:
            assert self._db is not None
            self._store_exporter = StoreExporter(self._db, self.config)
            self._store = BatchSpanProcessor(
                self._store_exporter, schedule_delay_millis=_STORE_DELAY_MS, max_queue_size=8192
            )
            provider.add_span_processor(self._store)
        if self.config.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(
                endpoint=self.config.otlp_endpoint,
                headers=dict(self.config.otlp_headers),
                timeout=_OTLP_TIMEOUT_SECONDS,
            )
            self._otlp = Watched(exporter, self.config.otlp_endpoint)
            provider.add_span_processor(BatchSpanProcessor(self._otlp, schedule_delay_millis=_OTLP_DELAY_MS))
        self._provider = provider
        self._tracer = provider.get_tracer("cowork", self._version)

    def start_root(
        self, name: str, trace_id: str, attributes: Mapping[str, Any], *, start_time: int | None = None
    ) -> Span | None:
        """Start an operation's span: under the current span when that is in the same trace (a sub-agent under its
        `spawnAgent` call), else a root span with the trace id `trace_id` (32 hex digits)."""
        tracer = self.tracer()
        if tracer is None:
            return None
        from opentelemetry import context, trace

        from ._sdk import FORCED_TRACE_ID

        current = trace.get_current_span().get_span_context()
        parent = None if current.is_valid and format(current.trace_id, "032x") == trace_id else context.Context()
        token = FORCED_TRACE_ID.set(int(trace_id, 16))
        try:
            return tracer.start_span(name, context=parent, attributes=dict(attributes), start_time=start_time)
        finally:
            FORCED_TRACE_ID.reset(token)

    def flush(self) -> None:
        """Store every finished span now (blocking: call from a thread), so a query sees the turn that just ended."""
        if self._store is not None:
            self._store.force_flush()

    def prune(self) -> int:
        """Prune stored spans now (blocking); how many went."""
        return self._store_exporter.prune() if self._store_exporter is not None else 0

    def status(self) -> tuple[SubsystemStatus, str | None]:
        """For `health`: `ready`, `degraded` (an OTLP export failed last time) or `disabled`, and why."""
        if not self.enabled:
            return "disabled", "off in the configuration ([tracing] enabled = false)"
        failure = self._otlp.failure if self._otlp is not None else None
        if failure is not None:
            return "degraded", f"{failure}; check the collector and [tracing] otlp_endpoint"
        return "ready", None

    def shutdown(self) -> None:
        """Store (and send) what is left, within a few seconds, then stop (blocking)."""
        with self._lock:
            self._closed = True
            provider, self._provider, self._tracer = self._provider, None, None
        if provider is None:
            return
        done = threading.Event()

        def stop() -> None:
            try:
                provider.shutdown()
            except Exception:
                log.warning("stopping tracing failed", exc_info=True)
            finally:
                done.set()

        threading.Thread(target=stop, name="cowork-tracing-stop", daemon=True).start()
        if not done.wait(_SHUTDOWN_SECONDS):
            log.warning("tracing did not stop within %.0f s (an OTLP collector not answering?)", _SHUTDOWN_SECONDS)
