"""Which provider settings a process was started with, as a fingerprint a client can compare with its own.

A background server keeps the environment it was started with. A client started later with other settings (another
`OPENAI_BASE_URL`, a new key) would otherwise attach to it and silently use the old ones. Both sides compute this
fingerprint from their environment; values are hashed, never sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

__all__ = ["environment_fingerprint", "provider_variables"]

_CLIENT_ONLY = frozenset({"COWORK_HOME", "COWORK_TOKEN", "COWORK_URL"})
_SUFFIXES = ("_API_KEY", "_BASE_URL", "_API_BASE", "_ENDPOINT")
_NAMES = frozenset({"OLLAMA_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "HTTPS_PROXY"})


def provider_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that change what a server does: Cowork's own settings and every provider's key and URL."""
    return {
        name: value
        for name, value in env.items()
        if (name.startswith("COWORK_") and name not in _CLIENT_ONLY) or name.endswith(_SUFFIXES) or name in _NAMES
    }


def environment_fingerprint(env: Mapping[str, str]) -> str:
    """A short stable hash of `provider_variables(env)` (names and values)."""
    digest = hashlib.sha256()
    for name, value in sorted(provider_variables(env).items()):
        digest.update(f"{name}\0{value}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]
