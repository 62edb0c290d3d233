"""Allow for this session: the user answers an approval with "allow for the session", and later calls of the same
kind run without asking until the session ends (or the user clears them).

What "the same kind" means is a key: `tool:<name>` for any tool but the shell, `command:<prefix>` for a shell
command. The prefix is the command's first word, or its first two for programs that are really many commands
(`git status`, `npm test`, `uv run`): allowing `git status` must not allow `git push`. A command with anything that
could run another program past the prefix (`;`, `&&`, pipes, redirections, `$(…)`, backticks, a newline…) gets no
key, so it is never offered and never matched; it asks every time. The security phase of the policy runs before
allowances, so a dangerous call asks whatever the user allowed.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable

__all__ = ["allowance_key", "allowance_matches", "describe_allowance", "load_allowances"]

_MULTI_COMMAND_PROGRAMS = frozenset(
    {
        "apt",
        "brew",
        "bun",
        "bundle",
        "cargo",
        "composer",
        "conda",
        "deno",
        "docker",
        "dotnet",
        "gh",
        "git",
        "go",
        "gradle",
        "helm",
        "kubectl",
        "make",
        "mvn",
        "npm",
        "npx",
        "pip",
        "pip3",
        "pnpm",
        "poetry",
        "rustup",
        "swift",
        "terraform",
        "uv",
        "yarn",
    }
)
"""Programs whose first argument names what they do; their prefix is two words."""

_SHELL_SYNTAX = frozenset(";&|<>$`(){}\n\r\\*?[]~!#")
"""Characters that could make a command do more than its prefix says (chaining, substitution, redirection, globs)."""


def _words(command: str) -> list[str] | None:
    """The command's words, or None when it has shell syntax beyond plain words and quotes."""
    if any(char in _SHELL_SYNTAX for char in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or "=" in words[0]:  # `FOO=bar cmd` changes the environment of what runs
        return None
    return words


def _prefix(words: list[str]) -> list[str]:
    if words[0] in _MULTI_COMMAND_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
        return words[:2]
    return words[:1]


def allowance_key(tool: str, shell_command: str | None) -> str | None:
    """The key "allow for this session" would store for this call; None when it cannot be allowed that way."""
    if shell_command is None:
        return f"tool:{tool}"
    words = _words(shell_command)
    return None if words is None else "command:" + " ".join(_prefix(words))


def allowance_matches(allowances: Iterable[str], tool: str, shell_command: str | None) -> bool:
    """Whether the session's allowances cover this call."""
    if shell_command is None:
        return f"tool:{tool}" in allowances
    words = _words(shell_command)
    if words is None:
        return False
    for key in allowances:
        if key.startswith("command:"):
            prefix = key.removeprefix("command:").split(" ")
            if words[: len(prefix)] == prefix:
                return True
    return False


def describe_allowance(key: str) -> str:
    """The key in words: `edit`, `commands starting with git status`."""
    if key.startswith("command:"):
        return f"commands starting with {key.removeprefix('command:')}"
    return key.removeprefix("tool:")


def load_allowances(text: str) -> tuple[str, ...]:
    """The keys stored on a session (a JSON list); nothing for anything unreadable."""
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    return tuple(k for k in value if isinstance(k, str)) if isinstance(value, list) else ()
