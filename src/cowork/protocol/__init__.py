"""The wire contract between the Cowork server and every client.

Every JSON-RPC params/result model, every event payload, the error codes and the framing live here and nowhere
else. Clients import only this package (plus their transport and UI libraries).
"""

from ._automations import *  # noqa: F403
from ._automations import __all__ as _automations_all
from ._base import Params, WireModel
from ._capture import *  # noqa: F403
from ._capture import __all__ as _capture_all
from ._commands import SLASH_COMMANDS, ClientKind, SlashCommand, slash_command
from ._docs import render_protocol_markdown
from ._documents import *  # noqa: F403
from ._documents import __all__ as _documents_all
from ._environment import environment_fingerprint, provider_variables
from ._errors import ErrorCode, ErrorSource, ProtocolError, RpcCode
from ._events import (
    DELTA_EVENT_TYPES,
    EVENT_PAYLOADS,
    AgentSpawned,
    ApprovalRequested,
    ApprovalResolved,
    Ask,
    AskResolved,
    AssistantMessage,
    BudgetWarning,
    Citation,
    Citations,
    ContextCompressed,
    ErrorEvent,
    EventPayload,
    EventType,
    Guardrail,
    LogLine,
    ModelRetry,
    ModelStreamChunk,
    OperationStatusChanged,
    Reasoning,
    Route,
    SessionEvent,
    SessionUpdated,
    Todos,
    ToolCall,
    ToolInterrupted,
    ToolResult,
    Usage,
    UserMessage,
)
from ._health import *  # noqa: F403
from ._health import __all__ as _health_all
from ._jsonrpc import (
    Frame,
    Incoming,
    Invalid,
    Request,
    RequestId,
    error_response,
    notification,
    parse_frame,
    request,
    success_response,
)
from ._mcp import *  # noqa: F403
from ._mcp import __all__ as _mcp_all
from ._mcp_install import *  # noqa: F403
from ._mcp_install import __all__ as _mcp_install_all
from ._memories import *  # noqa: F403
from ._memories import __all__ as _memories_all
from ._methods import *  # noqa: F403
from ._methods import __all__ as _methods_all
from ._providers import *  # noqa: F403
from ._providers import __all__ as _providers_all
from ._received import ReceivedEvent, ReceivedPayload, UnknownEvent, UnknownPayload, parse_event
from ._retrieval import *  # noqa: F403
from ._retrieval import __all__ as _retrieval_all
from ._traces import *  # noqa: F403
from ._traces import __all__ as _traces_all
from ._urls import is_url, web_url
from ._usage import *  # noqa: F403
from ._usage import __all__ as _usage_all
from ._values import *  # noqa: F403
from ._values import __all__ as _values_all

__all__ = [
    "DELTA_EVENT_TYPES",
    "SLASH_COMMANDS",
    "ClientKind",
    "SlashCommand",
    "slash_command",
    "environment_fingerprint",
    "provider_variables",
    "EVENT_PAYLOADS",
    "AgentSpawned",
    "ApprovalRequested",
    "ApprovalResolved",
    "Ask",
    "AskResolved",
    "AssistantMessage",
    "BudgetWarning",
    "Citation",
    "Citations",
    "ContextCompressed",
    "Guardrail",
    "ErrorCode",
    "ErrorEvent",
    "ErrorSource",
    "EventPayload",
    "EventType",
    "Frame",
    "Incoming",
    "Invalid",
    "LogLine",
    "ModelRetry",
    "ModelStreamChunk",
    "OperationStatusChanged",
    "Params",
    "ProtocolError",
    "Reasoning",
    "ReceivedEvent",
    "ReceivedPayload",
    "Request",
    "Route",
    "RequestId",
    "RpcCode",
    "SessionEvent",
    "SessionUpdated",
    "Todos",
    "ToolCall",
    "ToolInterrupted",
    "ToolResult",
    "UnknownEvent",
    "UnknownPayload",
    "Usage",
    "UserMessage",
    "WireModel",
    "error_response",
    "notification",
    "parse_event",
    "parse_frame",
    "render_protocol_markdown",
    "request",
    "success_response",
    *_health_all,
    *_traces_all,
    *_retrieval_all,
    *_capture_all,
    *_automations_all,
    *_memories_all,
    *_documents_all,
    *_mcp_all,
    *_mcp_install_all,
    *_methods_all,
    *_providers_all,
    *_usage_all,
    *_values_all,
    "is_url",
    "web_url",
]
