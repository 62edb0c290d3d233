"""Deciding what may run: approval per tool call, shell command classification, path permissions, and the
per-tool overrides the user set.

Classifying a command parses it with bashlex (about 0.1 s to import, with our corrections installed): the names
from `_commands` load it on first use (`cowork.lazy`), so start-up does not.
"""

from typing import TYPE_CHECKING

from ._allow import allowance_key, allowance_matches, describe_allowance, load_allowances
from ._approval import (
    ApprovalMode,
    CallFacts,
    PolicyContext,
    PolicyDecision,
    ServerPolicy,
    ToolOverride,
    decide,
)
from ._braces import BraceError, class_end, expand_braces
from ._overrides import ToolCatalog, ToolPolicies
from ._paths import DEFAULT_DENY, PathDenied, PathPolicy
from ._places import (
    GIT_EXECUTABLE_CONFIG,
    PROTECTED_IN_WORKSPACE,
    SENSITIVE_IN_HOME,
    SENSITIVE_SYSTEM,
    Places,
    git_key_executes,
)

if TYPE_CHECKING:
    from ._commands import Classification, CommandPaths, Verdict, classify
else:
    from cowork.lazy import lazy_exports

    __getattr__ = lazy_exports(
        __name__, dict.fromkeys(("Classification", "CommandPaths", "Verdict", "classify"), "._commands")
    )

__all__ = [
    "DEFAULT_DENY",
    "GIT_EXECUTABLE_CONFIG",
    "PROTECTED_IN_WORKSPACE",
    "SENSITIVE_IN_HOME",
    "SENSITIVE_SYSTEM",
    "ApprovalMode",
    "BraceError",
    "CallFacts",
    "Classification",
    "CommandPaths",
    "PathDenied",
    "PathPolicy",
    "Places",
    "PolicyContext",
    "PolicyDecision",
    "ServerPolicy",
    "ToolCatalog",
    "ToolOverride",
    "ToolPolicies",
    "Verdict",
    "allowance_key",
    "allowance_matches",
    "class_end",
    "classify",
    "decide",
    "describe_allowance",
    "expand_braces",
    "git_key_executes",
    "load_allowances",
]
