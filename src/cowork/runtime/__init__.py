"""Operations: persisted, resumable agent executions.

The runner (`_runner.decide`) is pure decision logic over an operation's state; executors
(`_executors.OperationRunner`) carry its instructions out and persist every step; the runtime
(`_runtime.Runtime`) starts, steers, answers, resumes, cancels and recovers operations.
"""

from ._executors import OperationRunner, RunnerDeps, RunnerHooks
from ._history import display_text, dump_message, load_message, repair
from ._runner import decide
from ._runtime import Runtime
from ._state import LedgerEntry, Limits, OperationState

__all__ = [
    "LedgerEntry",
    "Limits",
    "OperationRunner",
    "OperationState",
    "RunnerDeps",
    "RunnerHooks",
    "Runtime",
    "decide",
    "display_text",
    "dump_message",
    "load_message",
    "repair",
]
