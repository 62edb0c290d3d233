"""Every JSON-RPC method and the handler that answers it: one explicit table, read by the dispatcher.

A handler is `async (core, peer, params) -> result`, with `params` already validated against the method's params
model. `tests/server/test_registry.py` checks the table against `cowork.protocol.METHODS` both ways, and each
handler's annotated params and result types against the method's models.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

from cowork.core import Core
from cowork.protocol import WireModel

from ._handlers import (
    automations,
    capture,
    documents,
    mcp_install,
    mcp_servers,
    models,
    operations,
    retrieval,
    server,
    sessions,
    tools,
)
from ._peer import Peer

__all__ = ["HANDLERS", "Handler"]

Handler: TypeAlias = Callable[[Core, Peer | None, Any], Awaitable[WireModel]]

HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "initialize": server.initialize,
        "ping": server.ping,
        "health": server.health,
        "capture/status": capture.capture_status,
        "capture/configure": capture.capture_configure,
        "context/query": capture.context_query,
        "context/delete": capture.context_delete,
        "automation/list": automations.automation_list,
        "automation/get": automations.automation_get,
        "automation/create": automations.automation_create,
        "automation/update": automations.automation_update,
        "automation/delete": automations.automation_delete,
        "automation/enable": automations.automation_enable,
        "automation/disable": automations.automation_disable,
        "automation/run": automations.automation_run,
        "automation/runs": automations.automation_runs,
        "automation/cancel": automations.automation_cancel,
        "automation/resume": automations.automation_resume,
        "automation/respond": automations.automation_respond,
        "notification/list": automations.notification_list,
        "notification/respond": automations.notification_respond,
        "trace/list": server.trace_list,
        "trace/get": server.trace_get,
        "document/preview": documents.document_preview,
        "document/content": documents.document_content,
        "ingest/add": retrieval.ingest_add,
        "ingest/status": retrieval.ingest_status,
        "ingest/pause": retrieval.ingest_pause,
        "ingest/resume": retrieval.ingest_resume,
        "ingest/cancel": retrieval.ingest_cancel,
        "memory/search": retrieval.memory_search,
        "memory/passage": retrieval.memory_passage,
        "memory/pins": retrieval.memory_pins,
        "memory/pin": retrieval.memory_pin,
        "memory/unpin": retrieval.memory_unpin,
        "memory/list": retrieval.memory_list,
        "memory/get": retrieval.memory_get,
        "memory/update": retrieval.memory_update,
        "memory/delete": retrieval.memory_delete,
        "memory/profile": retrieval.memory_profile,
        "memory/observations": retrieval.memory_observations,
        "memory/observations/delete": retrieval.memory_observations_delete,
        "memory/observe": retrieval.memory_observe,
        "memory/profile/set": retrieval.memory_profile_set,
        "memory/profile/delete": retrieval.memory_profile_delete,
        "session/create": sessions.session_create,
        "session/compact": sessions.session_compact,
        "session/diff": sessions.session_diff,
        "session/delete": sessions.session_delete,
        "session/fork": sessions.session_fork,
        "checkpoint/list": sessions.checkpoint_list,
        "session/undo": sessions.session_undo,
        "session/rewind": sessions.session_rewind,
        "session/import": sessions.session_import,
        "session/search": sessions.session_search,
        "session/export": sessions.session_export,
        "session/list": sessions.session_list,
        "session/update": sessions.session_update,
        "session/get": sessions.session_get,
        "session/subscribe": sessions.session_subscribe,
        "session/unsubscribe": sessions.session_unsubscribe,
        "events/replay": sessions.events_replay,
        "turn/start": sessions.turn_start,
        "turn/cancel": sessions.turn_cancel,
        "turn/steer": sessions.turn_steer,
        "turn/retry": sessions.turn_retry,
        "approval/respond": sessions.approval_respond,
        "ask/respond": sessions.ask_respond,
        "operation/get": operations.operation_get,
        "operation/resume": operations.operation_resume,
        "agent/list": operations.agent_list,
        "agent/wait": operations.agent_wait,
        "agent/cancel": operations.agent_cancel,
        "tool/list": tools.tool_list,
        "tool/setPolicy": tools.tool_set_policy,
        "model/list": models.model_list,
        "model/set": models.model_set,
        "provider/connect": models.provider_connect,
        "provider/disconnect": models.provider_disconnect,
        "provider/status": models.provider_status,
        "session/usage": models.session_usage,
        "usage/summary": models.usage_summary,
        "budget/set": models.budget_set,
        "mcp/list": mcp_servers.mcp_list,
        "mcp/add": mcp_servers.mcp_add,
        "mcp/update": mcp_servers.mcp_update,
        "mcp/remove": mcp_servers.mcp_remove,
        "mcp/enable": mcp_servers.mcp_enable,
        "mcp/disable": mcp_servers.mcp_disable,
        "mcp/restart": mcp_servers.mcp_restart,
        "mcp/validate": mcp_servers.mcp_validate,
        "mcp/trust": mcp_servers.mcp_trust,
        "mcp/install/start": mcp_install.install_start,
        "mcp/install/continue": mcp_install.install_continue,
        "mcp/install/cancel": mcp_install.install_cancel,
        "mcp/install/get": mcp_install.install_get,
        "mcp/install/list": mcp_install.install_list,
        "mcp/auth/start": mcp_install.auth_start,
    }
)
