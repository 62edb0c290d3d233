"""The environment a command or a stdio MCP server gets: an allow-list, never the server's own environment.

Cowork's process holds secrets (provider keys, `COWORK_TOKEN`, whatever the user exported: cloud keys, database
URLs with passwords). A deny-list of secret-looking names always misses one, and `env` runs without approval, so
commands get only what is named here or by the user (`tools.environment`).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from cowork.config import EnvironmentConfig

__all__ = ["MINIMAL_ENVIRONMENT", "command_environment"]

MINIMAL_ENVIRONMENT: tuple[str, ...] = (
    # Finding programs and the user's files, and who the user is (git, ssh config lookup, `~` expansion).
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    # How text is encoded and shown: without the locale, tools fall back to ASCII and mangle non-ASCII output.
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    # Dates in the user's time zone, temporary files where the user keeps them.
    "TZ",
    "TMPDIR",
)
"""Passed through when set: nothing here grants access to anything or carries a secret.

Left out on purpose: `PWD`/`OLDPWD` (the command's working directory is set when it starts; an inherited one would
be wrong), `EDITOR`/`VISUAL`/`PAGER` (there is no terminal: a command that opens one would hang until its timeout),
`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`, `DISPLAY` (each hands over a
socket that acts as the user: signing, unlocking keys, driving the desktop), and proxy settings (their URLs often
carry a password). A user who needs any of them lists it in `tools.environment.allow`.
"""


def command_environment(settings: EnvironmentConfig, source: Mapping[str, str]) -> dict[str, str]:
    """The variables of `source` a command may see: the minimal set and `settings.allow`, then `settings.set`.

    `allow` entries are exact names or `fnmatch` globs (`NODE_*`), matched case-sensitively like the environment
    itself. Values that are exported shell functions (`() { ...`) are never passed on.
    """
    patterns = (*MINIMAL_ENVIRONMENT, *settings.allow)
    env = {
        name: value
        for name, value in source.items()
        if not value.startswith("()") and any(fnmatchcase(name, pattern) for pattern in patterns)
    }
    env.update(settings.set)
    return env
