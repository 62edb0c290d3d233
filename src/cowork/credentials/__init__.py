"""Secrets (provider keys, MCP server secrets, OAuth tokens): the OS keyring where usable, else a 0600 file.

Secrets never go into project config. Everything here blocks; callers run it in a worker thread.
"""

from ._file import CredentialError
from ._store import MAX_NAME_LENGTH, MAX_SECRET_BYTES, CredentialInfo, CredentialStore

__all__ = ["MAX_NAME_LENGTH", "MAX_SECRET_BYTES", "CredentialError", "CredentialInfo", "CredentialStore"]
