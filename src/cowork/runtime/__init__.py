"""Operations: persisted, resumable agent executions.

The runner (`_runner.decide`) is pure decision logic over an operation's state; executors
(`_executors.OperationRunner`) carry its instructions out and persist every step; `Operations` creates
operations (`new_operation`, the one path for turns, retries, sub-agents and automations) and keeps the ones in
play; the runtime (`_runtime.Runtime`) starts, steers, answers, resumes, cancels and recovers them.

The executors, and pydantic-ai's model layer with them, load with the first operation in play (or `preload`),
not with this package.
"""

from ._call_policy import call_facts, path_policy
from ._deps import RunnerDeps, RunnerHooks
from ._history import display_text, dump_message, load_message, repair
from ._leases import FORWARD_CHANNEL, Leases
from ._operations import NewOperation, Operations, Origin, preload
from ._routing import TurnRouter
from ._runner import decide
from ._runtime import Runtime
from ._state import LedgerEntry, Limits, OperationState

__all__ = [
    "FORWARD_CHANNEL",
    "Leases",
    "LedgerEntry",
    "Limits",
    "NewOperation",
    "OperationState",
    "Operations",
    "Origin",
    "RunnerDeps",
    "RunnerHooks",
    "Runtime",
    "TurnRouter",
    "call_facts",
    "decide",
    "display_text",
    "dump_message",
    "load_message",
    "path_policy",
    "preload",
    "repair",
]
