"""Proactive notifications: the throttling core (DESIGN §9). Candidates in, gates, deliveries out.

Triggers (calendar proximity, MCP signals, activity patterns) will offer `Candidate`s; the `Throttle` puts each
through the six gates of seed 002 and says why in a `Decision`; `Delivery`s go to a client or the desktop, and the
user's answers come back through `Throttle.respond`. Nothing here is wired to triggers or clients yet.
"""

from ._gates import DeepWork, Lowered, Throttle
from ._history import DismissalHistory, MemoryHistory
from ._settings import GateSettings
from ._tiers import TIER_RULES, TIERS, Tier, TierRule
from ._values import Candidate, Decision, Delivery, Gate, Outcome, Response, UnknownDelivery, Verdict

__all__ = [
    "TIERS",
    "TIER_RULES",
    "Candidate",
    "Decision",
    "DeepWork",
    "Delivery",
    "DismissalHistory",
    "Gate",
    "GateSettings",
    "Lowered",
    "MemoryHistory",
    "Outcome",
    "Response",
    "Throttle",
    "Tier",
    "TierRule",
    "UnknownDelivery",
    "Verdict",
]
