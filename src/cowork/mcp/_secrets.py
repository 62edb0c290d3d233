"""Secrets in saved server configs: `${credential:<name>}` references, filled from the credential store at start."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["SecretLookup", "credential_reference", "expand_credentials"]

SecretLookup = Callable[[str], "str | None"]
"""A blocking lookup of one secret by name, e.g. `CredentialStore.get`."""

_REFERENCE = re.compile(r"\$\{credential:([^}\s]+)\}")


def credential_reference(name: str) -> str:
    """How a saved server config points at a secret: the hypervisor expands it when it starts the server."""
    return "${credential:" + name + "}"


def expand_credentials(text: str, lookup: SecretLookup) -> str:
    """Replace each `${credential:<name>}` with the secret (an unknown one becomes empty)."""
    return _REFERENCE.sub(lambda m: lookup(m.group(1)) or "", text)
