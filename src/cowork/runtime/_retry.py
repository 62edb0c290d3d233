"""Try harder: run a session's latest turn again on the next tier up (or the same model), estimate first."""

from __future__ import annotations

from pathlib import Path

from cowork.models import ModelSelector, ModelTarget, estimate_cost
from cowork.protocol import (
    ErrorCode,
    ErrorSource,
    OperationStatus,
    ProtocolError,
    Route,
    TurnRetryParams,
    TurnRetryResult,
)
from cowork.sessions import SessionSettings, new_id, session_not_found
from cowork.store import Connection, MessageRow, OperationRow, SessionRow, repos

from ._loading import read_thread
from ._operations import NewOperation, Operations
from ._routing import Routed, TurnRouter
from ._turns import message_tokens

__all__ = ["Retries"]

S = OperationStatus


def _retry_request(conn: Connection, session_id: str, operation_id: str) -> tuple[MessageRow | None, int]:
    """The user message that started a turn, and the size of the history up to it (in tokens)."""
    thread = read_thread(conn, session_id)
    for index, row in enumerate(thread.rows):
        if row.operation_id == operation_id and row.kind == "request":
            offset = len(thread.messages) - len(thread.rows)
            return row, message_tokens(thread.messages[: offset + index + 1])
    return None, 0


class Retries:
    """`turn/retry`."""

    def __init__(
        self, operations: Operations, settings: SessionSettings, selector: ModelSelector, router: TurnRouter
    ) -> None:
        self._ops = operations
        self._settings = settings
        self._selector = selector
        self._router = router

    async def retry(self, params: TurnRetryParams) -> TurnRetryResult:
        """Run a session's latest turn again, on the next tier up (or the same model): first an estimate, then,
        confirmed, the retry. Both answers share an `askId`; the retry's replaces the original in the history the
        model sees from then on.

        Raises:
            ProtocolError: `session_not_found`; `operation_not_found`; `not_resumable` (not the latest turn, or
                nothing to retry); `busy` (a turn is running); `no_provider`.
        """
        sid = params.session_id
        ops = self._ops
        deps = ops.deps
        async with ops.session_lock(sid):
            session, original, latest, duplicate = await deps.db.read(
                lambda conn: (
                    repos.sessions.get(conn, sid),
                    repos.operations.get(conn, params.operation_id) if params.operation_id else None,
                    repos.operations.latest_active(
                        conn, sid, [S.RUNNING, S.WAITING_FOR_HUMAN, S.INTERRUPTED, S.DONE, S.ERROR, S.CANCELLED]
                    ),
                    repos.operations.find_by_client_message(conn, sid, params.client_message_id)
                    if params.client_message_id
                    else None,
                )
            )
            if session is None:
                raise session_not_found(sid)
            if params.operation_id is None:
                original = latest
            if original is None or original.session_id != sid or original.parent_operation_id is not None:
                raise ProtocolError(
                    ErrorCode.OPERATION_NOT_FOUND if params.operation_id else ErrorCode.NOT_RESUMABLE,
                    "There is no turn to retry in this session."
                    if not params.operation_id
                    else f"No turn {params.operation_id!r} in this session.",
                    source=ErrorSource.RUNTIME,
                )
            ask_id = original.ask_id or original.id
            if duplicate is not None:
                return TurnRetryResult(
                    ask_id=duplicate.ask_id or ask_id,
                    provider=duplicate.provider or "",
                    model=duplicate.model or "",
                    tier=duplicate.tier,
                    from_model=f"{original.provider}:{original.model}",
                    estimated_cost_usd=None,
                    ask_cost_usd=await self._ask_cost(sid, ask_id),
                    started=True,
                    operation_id=duplicate.id,
                    duplicate=True,
                )
            if latest is not None and latest.id != original.id:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE,
                    "Only the session's latest turn can be retried; later turns built on this answer.",
                    source=ErrorSource.RUNTIME,
                )
            handle = ops.get(original.id)
            if OperationStatus(original.status) == S.RUNNING or (handle is not None and handle.running):
                raise ProtocolError(
                    ErrorCode.BUSY, "The turn is still running; cancel it first.", source=ErrorSource.RUNTIME
                )
            # A retry's question is its group's first turn's (the ask id is that turn's id).
            request, history = await deps.db.read(lambda conn: _retry_request(conn, sid, ask_id))
            if request is None:
                raise ProtocolError(
                    ErrorCode.NOT_RESUMABLE, "That turn has no message to retry.", source=ErrorSource.RUNTIME
                )
            provider, model = original.provider or "", original.model or ""
            routed: Routed | None = None
            if params.tier == "up":
                decision = self._router.step_up(
                    provider, model, original.tier, text=request.text, history_tokens=history
                )
                routed = Routed(decision)
                provider, model = decision.tier.provider, decision.tier.model
            target = self._selector.resolve(provider, model)
            # What the original turn used (its whole tool loop), priced for the new model; for a turn that used
            # nothing (it failed), one request of the history plus the usual answer size.
            estimate = estimate_cost(
                target.provider,
                target.model,
                input_tokens=max(history, original.input_tokens),
                output_tokens=max(deps.config.budgets.estimated_output_tokens, original.output_tokens),
                overrides=deps.config.prices,
            )
            result = TurnRetryResult(
                ask_id=ask_id,
                provider=target.provider,
                model=target.model,
                tier=routed.decision.tier.name if routed else original.tier,
                from_model=f"{original.provider}:{original.model}",
                estimated_cost_usd=round(estimate.usd, 6) if estimate.known else None,
                ask_cost_usd=await self._ask_cost(sid, ask_id),
                started=False,
            )
            if not params.confirm:
                return result
            if OperationStatus(original.status) in (S.WAITING_FOR_HUMAN, S.INTERRUPTED):
                await ops.cancel(original.id, reason="Retried on another model.")
            operation_id = await self._start(session, original, request, target, routed, ask_id, params)
            return result.model_copy(update={"started": True, "operation_id": operation_id})

    async def _ask_cost(self, session_id: str, ask_id: str) -> float:
        usage = await self._ops.deps.usage.session_usage(session_id)
        return round(sum(op.totals.cost_usd for op in usage.operations if (op.ask_id or op.operation_id) == ask_id), 6)

    async def _start(
        self,
        session: SessionRow,
        original: OperationRow,
        request: MessageRow,
        target: ModelTarget,
        routed: Routed | None,
        ask_id: str,
        params: TurnRetryParams,
    ) -> str:
        operation_id = new_id("op")
        tier = routed.decision.tier.name if routed else original.tier

        def supersede(conn: Connection) -> None:
            # The original answer leaves the model's history (it stays on screen, grouped by the ask id); the
            # user's message stays, and the retry answers it again.
            repos.messages.supersede(conn, original.id, thread_id=session.id, keep=[request.id])
            repos.operations.set_ask(conn, original.id, ask_id)

        self._ops.threads.drop(session.id)
        route = Route(
            operation_id=operation_id,
            tier=tier or "",
            provider=target.provider,
            model=target.model,
            code=str(routed.decision.code) if routed else "retry",
            reason=routed.decision.reason if routed else f"Retrying on {target.provider}:{target.model}.",
            notify=routed.decision.notify if routed else False,
            estimated_tokens=routed.decision.estimated_tokens if routed else 0,
            ask_id=ask_id,
        )
        self._settings.remember(session)
        await self._ops.new_operation(
            NewOperation(
                session_id=session.id,
                thread_id=session.id,
                origin="chat",
                target=target,
                workspace=Path(session.workspace),
                operation_id=operation_id,
                client_message_id=params.client_message_id,
                ask_id=ask_id,
                tier=tier,
                events=[route],
                mutate=supersede,
            )
        )
        return operation_id
