"""Start-up: `initialize` is answered without loading what only a turn needs; the port opens when the app can answer;
the warm-up that follows runs in the background and never holds up a stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from cowork.testing.server import ServerProcess, provider_env, wait_until

PROBE = Path(__file__).with_name("initialize_probe.py")

TURN_ONLY = [
    "pydantic_ai",
    "pydantic_ai.models.openai",
    "openai",
    "anthropic",
    "google.genai",
    "mcp",
    "mcp_types",
    "bashlex",
    "httpx",
    "trafilatura",
    "nbformat",
    "jsonschema",
    "genai_prices",
    "keyring",
    "yaml",
    "cowork.runtime._executors",
    "cowork.models._stream",
    "numpy",
    "tokenizers",
    "safetensors",
    "cowork.embeddings",
    "cowork.retrieval._index",
]
"""What a turn (or a tool, an MCP server, a sign-in) loads, and `initialize` must not wait for."""

CLIENT_ONLY = ["textual", "rich", "prompt_toolkit", "cowork.clients.cli.repl", "cowork.clients.cli.run"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_initialize_is_answered_without_loading_the_turn_stack(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # A provider is configured: resolving it for `initialize` must still not load its SDK.
    env = {**os.environ, "COWORK_HOME": str(tmp_path / "home"), **provider_env("openai", "http://127.0.0.1:9/v1")}
    result = subprocess.run(
        [sys.executable, str(PROBE), str(workspace)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    answer = report["initialize"]["result"]
    assert answer["config"]["provider"] == "openai" and "bash" in answer["capabilities"]["tools"]
    modules = set(report["modules"])
    assert {"cowork.server._app", "cowork.core", "uvicorn"} <= modules  # the probe did take the serve path
    loaded = [name for name in TURN_ONLY + CLIENT_ONLY if name in modules]
    assert loaded == [], f"loaded before the first initialize was answered: {loaded}"


def test_a_database_already_migrated_starts_without_alembic(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {**os.environ, "COWORK_HOME": str(tmp_path / "home")}
    loaded = []
    for _start in range(2):
        result = subprocess.run(
            [sys.executable, str(PROBE), str(workspace)], capture_output=True, text=True, env=env, timeout=120
        )
        assert result.returncode == 0, result.stderr
        loaded.append("alembic" in json.loads(result.stdout)["modules"])
    assert loaded == [True, False]  # the first start migrates a blank database; the second has nothing to do


def test_a_client_connecting_the_moment_the_port_accepts_is_answered(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = free_port()
    server = ServerProcess(tmp_path / "home", workspace, port=port)
    command = [sys.executable, "-m", "cowork", "serve", "--workspace", str(workspace), "--port", str(port)]
    with subprocess.Popen(
        command, env=server.environment(), cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    ) as process:
        try:
            deadline = time.monotonic() + 60
            connection: socket.socket | None = None
            while connection is None:
                assert process.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the port never accepted a connection"
                try:
                    connection = socket.create_connection(("127.0.0.1", port), timeout=60)
                except ConnectionRefusedError:
                    time.sleep(0.002)
            # The first connection the port accepted carries the request, at once.
            with connection:
                body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
                request = (
                    f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {server.token}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                ).encode() + body
                connection.sendall(request)
                response = b""
                while chunk := connection.recv(65536):
                    response += chunk
        finally:
            process.terminate()
            process.wait(30)
    head, _, payload = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), response[:300]
    assert json.loads(payload)["result"]["serverInfo"]["name"] == "cowork"


def test_the_server_warms_up_once_it_listens(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    with ServerProcess(home, workspace, env=provider_env("openai", "http://127.0.0.1:9/v1")):
        log = home / "logs" / "server.log"
        assert wait_until(lambda: "provider stack warmed" in log.read_text(encoding="utf-8"), timeout=60)
    assert "(openai:mock-model)" in log.read_text(encoding="utf-8")


def test_a_server_stopped_while_it_warms_up_exits_cleanly(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = ServerProcess(tmp_path / "home", workspace, env=provider_env("openai", "http://127.0.0.1:9/v1"))
    server.start()
    # Stopped the moment it listens: the warm-up has just begun (its thread imports for a while yet). A graceful
    # stop ends with uvicorn raising the SIGTERM again; None would mean it had to be killed.
    assert server.stop() == -signal.SIGTERM, "".join(server.output)
    assert "Traceback" not in "".join(server.output)
