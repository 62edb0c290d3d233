"""Proactive notifications: the throttling core (DESIGN §9). Candidates in, gates, deliveries out.

Triggers (calendar proximity, MCP signals, activity patterns) will offer `Candidate`s; the `Throttle` puts each
through the six gates of seed 002 and says why in a `Decision`; `Delivery`s go to a client or the desktop, and the
user's answers come back through `Throttle.respond`. `NotificationService` is the server's side: it offers
candidates, stores and sends deliveries (`notification/delivered`) and takes the answers. `DesktopNotifier` also shows
a delivery as a desktop notification where the desktop offers one (the freedesktop notification interface on D-Bus,
Linux; best-effort, it never raises).
"""

from ._desktop import DesktopNotifier
from ._gates import DeepWork, Lowered, Throttle
from ._history import DismissalHistory, MemoryHistory
from ._service import Desktop, NotificationService, StoreHistory
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
    "Desktop",
    "DesktopNotifier",
    "DismissalHistory",
    "Gate",
    "GateSettings",
    "Lowered",
    "MemoryHistory",
    "NotificationService",
    "Outcome",
    "Response",
    "StoreHistory",
    "Throttle",
    "Tier",
    "TierRule",
    "UnknownDelivery",
    "Verdict",
]
