"""Installing an MCP server: a persisted state machine from manifest to a saved, working server.

`_manifest` parses manifests and the configuration form, `_deps` checks the programs a server needs, `_probe`
starts a server once to list its tools, `_states` is the transition table over `cowork.protocol.InstallState`, `_service` drives installs.
"""

from ._deps import KNOWN_PROGRAMS, check_dependencies, check_dependency, platform_key, satisfies
from ._manifest import DependencySpec, Manifest, config_problems, credential_name, load_manifest, render, secret_fields
from ._probe import ProbeFailed, ServerSpec, list_tools
from ._service import (
    AuthFactory,
    ExistsFn,
    InstallListener,
    InstallService,
    RemoveFn,
    SaveFn,
    credential_reference,
    expand_credentials,
)
from ._states import INSTALL_MACHINE, PROGRESS

__all__ = [
    "INSTALL_MACHINE",
    "KNOWN_PROGRAMS",
    "PROGRESS",
    "AuthFactory",
    "DependencySpec",
    "ExistsFn",
    "InstallListener",
    "InstallService",
    "Manifest",
    "ProbeFailed",
    "RemoveFn",
    "SaveFn",
    "ServerSpec",
    "check_dependencies",
    "check_dependency",
    "config_problems",
    "credential_name",
    "credential_reference",
    "expand_credentials",
    "list_tools",
    "load_manifest",
    "platform_key",
    "render",
    "satisfies",
    "secret_fields",
]
