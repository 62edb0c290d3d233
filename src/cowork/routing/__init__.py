"""The complexity router: picks the model tier for a turn by rules (local vs cloud, "try harder") and says why."""

from ._router import RouteCode, RouteDecision, Router, RouteRequest, Tier
from ._signals import estimate_tokens, tool_signals

__all__ = [
    "RouteCode",
    "RouteDecision",
    "RouteRequest",
    "Router",
    "Tier",
    "estimate_tokens",
    "tool_signals",
]
