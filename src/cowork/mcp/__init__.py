"""MCP: the hypervisor (servers, their status and tools), OAuth and the install state machine."""

from ._config import ConfigFileError, ServerConfig, load_file, merge_layers
from ._hypervisor import McpHypervisor, trust_key
from ._notices import Notices
from ._server import AuthProvider, McpServer, McpUnavailable
from ._signin import start_sign_in
from ._tool import McpTool, tool_name

__all__ = [
    "AuthProvider",
    "ConfigFileError",
    "McpHypervisor",
    "McpServer",
    "McpTool",
    "McpUnavailable",
    "Notices",
    "ServerConfig",
    "load_file",
    "merge_layers",
    "start_sign_in",
    "tool_name",
    "trust_key",
]
