"""Deciding what may run: approval per tool call, shell command classification, path permissions, and the
per-tool overrides the user set."""

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
from ._commands import Classification, Verdict, classify
from ._overrides import ToolCatalog, ToolPolicies
from ._paths import DEFAULT_DENY, PathDenied, PathPolicy

__all__ = [
    "DEFAULT_DENY",
    "ApprovalMode",
    "BraceError",
    "CallFacts",
    "Classification",
    "PathDenied",
    "PathPolicy",
    "PolicyContext",
    "PolicyDecision",
    "ServerPolicy",
    "ToolCatalog",
    "ToolOverride",
    "ToolPolicies",
    "Verdict",
    "class_end",
    "classify",
    "decide",
    "expand_braces",
]
