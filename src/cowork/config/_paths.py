"""Where Cowork keeps its state: `COWORK_HOME` (default `~/.cowork`) and the files under it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CoworkPaths", "resolve_home"]


def resolve_home(env: Mapping[str, str] | None = None) -> Path:
    """`COWORK_HOME` if set, else `~/.cowork`; made absolute so later `chdir`s cannot move it."""
    env = os.environ if env is None else env
    raw = env.get("COWORK_HOME") or "~/.cowork"
    return Path(raw).expanduser().absolute()


@dataclass(frozen=True)
class CoworkPaths:
    """Every path of Cowork's state directory; nothing writes state outside these."""

    home: Path

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def database(self) -> Path:
        return self.home / "cowork.db"

    @property
    def auth_dir(self) -> Path:
        return self.home / "auth"

    @property
    def token_file(self) -> Path:
        return self.auth_dir / "token"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def server_file(self) -> Path:
        """Written by a running server: its URL and pid, so clients can find it."""
        return self.home / "server.json"

    def ensure(self) -> None:
        """Create the state directories; `auth/` is private to the user."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(exist_ok=True)
        self.auth_dir.mkdir(exist_ok=True)
        os.chmod(self.auth_dir, 0o700)
