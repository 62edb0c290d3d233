"""Deciding what may run: approval per tool call, shell command classification, path permissions."""

from ._approval import (
    ApprovalMode,
    CallFacts,
    PolicyContext,
    PolicyDecision,
    ServerPolicy,
    ToolOverride,
    decide,
)
from ._commands import Classification, Verdict, classify
from ._paths import DEFAULT_DENY, PathDenied, PathPolicy

__all__ = [
    "DEFAULT_DENY",
    "ApprovalMode",
    "CallFacts",
    "Classification",
    "PathDenied",
    "PathPolicy",
    "PolicyContext",
    "PolicyDecision",
    "ServerPolicy",
    "ToolOverride",
    "Verdict",
    "classify",
    "decide",
]
