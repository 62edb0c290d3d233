"""Usage and budgets: the per-call usage ledger, spend per request, session, day, week and month, and the budget
caps that refuse a model call before it would go over, and the accounting the runtime calls around each model
call (`admit` before it, `charge` after it)."""

from ._accounting import Charge, ModelCall, admit, charge
from ._budgets import CAPS, Budgets, Cap, Crossing, Refusal, Spend, check, crossings
from ._service import UsageService
from ._tally import Tally
from ._windows import Windows, local_day, windows_at

__all__ = [
    "CAPS",
    "Budgets",
    "Cap",
    "Charge",
    "Crossing",
    "ModelCall",
    "Refusal",
    "Spend",
    "Tally",
    "UsageService",
    "Windows",
    "admit",
    "charge",
    "check",
    "crossings",
    "local_day",
    "windows_at",
]
