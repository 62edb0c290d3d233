"""A real Cowork server process for end-to-end tests: start, stop, SIGKILL, restart on the same home."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

from cowork.clients.connection import ServerAddress
from cowork.models import presets

__all__ = ["ServerProcess", "provider_env"]

_LISTENING = re.compile(r"listening on (http://\S+)")

PROVIDER_VARIABLES: tuple[str, ...] = (
    *sorted({name for preset in presets().values() for name in (*preset.key_env, *preset.base_url_env)}),
    "COWORK_PROVIDER",
    "COWORK_MODEL",
    "COWORK_TOKEN",
)
"""Every variable that could point Cowork at a real provider: scrubbed from tests' environments."""


def provider_env(kind: str, base_url: str, *, model: str = "mock-model") -> dict[str, str]:
    """Environment that points Cowork at a mock server, by wire format.

    `kind` is `openai` (Chat Completions; `base_url` is the mock's `openai_base_url`), `responses` (the OpenAI
    Responses API; `openai_base_url`), `anthropic` (`anthropic_base_url`) or `google` (`google_base_url`).
    """
    if kind == "openai":
        return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": base_url, "COWORK_MODEL": model}
    if kind == "responses":
        return {
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": base_url,
            "COWORK_PROVIDERS": '{"openai": {"api": "responses"}}',
            "COWORK_PROVIDER": "openai",
            "COWORK_MODEL": model,
        }
    if kind == "anthropic":
        return {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": base_url,
            "COWORK_PROVIDER": "anthropic",
            "COWORK_MODEL": model,
        }
    if kind == "google":
        return {
            "GOOGLE_API_KEY": "test-key",
            "GOOGLE_GEMINI_BASE_URL": base_url,
            "COWORK_PROVIDER": "google",
            "COWORK_MODEL": model,
        }
    raise ValueError(f"unknown mock wire format {kind!r}: openai, responses, anthropic or google")


class ServerProcess:
    """`python -m cowork serve` as a child process with a given home, workspace and environment."""

    def __init__(
        self,
        home: Path,
        workspace: Path,
        *,
        env: Mapping[str, str] | None = None,
        args: tuple[str, ...] = (),
        port: int = 0,
        umask: int | None = None,
    ) -> None:
        """`umask`, when given, is the child's umask (so a test can check modes against a known one)."""
        self.home = home
        self.workspace = workspace
        self.extra_env = dict(env or {})
        self.args = args
        self.port = port
        self.umask = umask
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self.url: str | None = None
        self._reader: threading.Thread | None = None

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
        env.update(
            {
                "COWORK_HOME": str(self.home),
                "COWORK_AGENT__PROVIDER_MAX_RETRIES": "0",
                "PYTHONUNBUFFERED": "1",
                # Saved keys go to the test home's 0600 file, never the machine's keyring.
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            }
        )
        env.update(self.extra_env)
        return env

    def start(self, timeout: float = 30.0) -> Self:
        self.output = []
        self.url = None
        cmd = [sys.executable, "-m", "cowork", "serve", "--workspace", str(self.workspace), "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*cmd, *self.args],
            env=self.environment(),
            cwd=self.workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            umask=-1 if self.umask is None else self.umask,
        )
        ready = threading.Event()

        process = self.process

        def read() -> None:
            assert process.stdout is not None
            with process.stdout:
                for line in process.stdout:
                    self.output.append(line)
                    match = _LISTENING.search(line)
                    if match:
                        self.url = match.group(1)
                        ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        ready.wait(timeout)
        url = self._listening_url()
        if url is None:
            self.kill()
            raise RuntimeError("Cowork server did not start:\n" + "".join(self.output))
        # Remember the port so a restart comes back on the same address (clients reconnect to it).
        self.port = int(url.rsplit(":", 1)[1])
        return self

    def _listening_url(self) -> str | None:
        return self.url

    @property
    def token(self) -> str:
        return (self.home / "auth" / "token").read_text(encoding="utf-8").strip()

    @property
    def address(self) -> ServerAddress:
        assert self.url is not None, "server not started"
        return ServerAddress(self.url, self.token)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def wait_exit(self, timeout: float = 15.0) -> int:
        assert self.process is not None
        code = self.process.wait(timeout)
        if self._reader is not None:
            self._reader.join(timeout=5)
        return code

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait: a graceful shutdown."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.wait_exit(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        """SIGKILL: a crash, as far as the server can tell."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if self._reader is not None:
            self._reader.join(timeout=5)

    def restart(self) -> Self:
        self.stop()
        return self.start()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def wait_until(predicate: object, timeout: float = 10.0, interval: float = 0.02) -> bool:
    """Poll `predicate()` until it is true or the timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(interval)
    return False
