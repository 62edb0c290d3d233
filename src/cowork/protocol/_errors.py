"""Stable error codes: the `data.code` of every JSON-RPC error, and the exception that carries one."""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any

__all__ = ["ErrorCode", "ErrorSource", "ProtocolError", "RpcCode"]


class RpcCode(IntEnum):
    """The numeric JSON-RPC 2.0 error codes."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_ERROR = -32000


class ErrorCode(StrEnum):
    """Machine-readable error codes clients can rely on. Additive only: never rename or reuse one."""

    PARSE_ERROR = "parse_error"
    INVALID_REQUEST = "invalid_request"
    METHOD_NOT_FOUND = "method_not_found"
    INVALID_PARAMS = "invalid_params"
    INTERNAL_ERROR = "internal_error"
    UNAUTHORIZED = "unauthorized"
    OVERLOADED = "overloaded"
    FRAME_TOO_LARGE = "frame_too_large"
    SESSION_NOT_FOUND = "session_not_found"
    OPERATION_NOT_FOUND = "operation_not_found"
    WORKSPACE_NOT_FOUND = "workspace_not_found"
    BUSY = "busy"
    NO_PROVIDER = "no_provider"
    UNKNOWN_PROVIDER = "unknown_provider"
    PROVIDER_ERROR = "provider_error"
    AUTH_FAILED = "auth_failed"
    RATE_LIMITED = "rate_limited"
    CONTEXT_TOO_LONG = "context_too_long"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    BAD_RESPONSE = "bad_response"
    BUDGET_EXCEEDED = "budget_exceeded"
    MAX_STEPS = "max_steps"
    CANCELLED = "cancelled"
    STUCK = "stuck"
    COST_CAP = "cost_cap"
    CHECKIN = "checkin"
    ERROR_RATE = "error_rate"
    REQUEST_NOT_FOUND = "request_not_found"
    ALREADY_RESOLVED = "already_resolved"
    NOT_RESUMABLE = "not_resumable"
    NOT_RUNNING = "not_running"
    LIMIT_EXCEEDED = "limit_exceeded"
    INTERRUPTED = "interrupted"
    TOOL_NOT_FOUND = "tool_not_found"
    QUOTA_EXCEEDED = "quota_exceeded"
    MODEL_NOT_FOUND = "model_not_found"
    NOTHING_TO_COMPACT = "nothing_to_compact"
    NOT_SUPPORTED = "not_supported"
    CREDENTIALS_ERROR = "credentials_error"
    MCP_SERVER_NOT_FOUND = "mcp_server_not_found"
    MCP_SERVER_EXISTS = "mcp_server_exists"
    MCP_INSTALL_NOT_FOUND = "mcp_install_not_found"
    NOTHING_TO_UNDO = "nothing_to_undo"
    FILES_CHANGED = "files_changed"
    TRACE_NOT_FOUND = "trace_not_found"
    DOCUMENT_NOT_FOUND = "document_not_found"
    PATH_DENIED = "path_denied"
    DOCUMENT_UNREADABLE = "document_unreadable"
    JOB_NOT_FOUND = "job_not_found"
    EMBEDDER_ERROR = "embedder_error"
    MEMORY_NOT_FOUND = "memory_not_found"
    PASSAGE_NOT_FOUND = "passage_not_found"
    AUTOMATION_NOT_FOUND = "automation_not_found"
    AUTOMATION_EXISTS = "automation_exists"
    RUN_NOT_FOUND = "run_not_found"
    NOTIFICATION_NOT_FOUND = "notification_not_found"


class ErrorSource(StrEnum):
    """Which layer produced an error (`data.source`)."""

    PROTOCOL = "protocol"
    SERVER = "server"
    SESSION = "session"
    RUNTIME = "runtime"
    PROVIDER = "provider"
    TOOL = "tool"
    STORE = "store"
    CONFIG = "config"


_RPC_CODE_FOR: dict[ErrorCode, RpcCode] = {
    ErrorCode.PARSE_ERROR: RpcCode.PARSE_ERROR,
    ErrorCode.INVALID_REQUEST: RpcCode.INVALID_REQUEST,
    ErrorCode.FRAME_TOO_LARGE: RpcCode.INVALID_REQUEST,
    ErrorCode.METHOD_NOT_FOUND: RpcCode.METHOD_NOT_FOUND,
    ErrorCode.INVALID_PARAMS: RpcCode.INVALID_PARAMS,
    ErrorCode.INTERNAL_ERROR: RpcCode.INTERNAL_ERROR,
}


class ProtocolError(Exception):
    """An error that reaches the client as a JSON-RPC error object with a stable `data.code`.

    Raised anywhere below the server; the server turns it into the error response and changes nothing else.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: ErrorSource = ErrorSource.SERVER,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.source = source
        self.details = details

    @property
    def rpc_code(self) -> int:
        return int(_RPC_CODE_FOR.get(self.code, RpcCode.SERVER_ERROR))

    def to_error_object(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": str(self.code), "source": str(self.source)}
        if self.details:
            data["details"] = self.details
        return {"code": self.rpc_code, "message": self.message, "data": data}
