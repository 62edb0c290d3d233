"""The server: JSON-RPC over WebSocket and HTTP in front of the core."""

from ._app import ServerState, create_app
from ._main import ServeOptions, read_server_file, serve

__all__ = ["ServeOptions", "ServerState", "create_app", "read_server_file", "serve"]
