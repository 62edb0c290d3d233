"""Executors: carry out the runner's instructions for one operation, persisting every step as it happens.

`OperationRunner.run` loops: ask the runner (`decide`) what to do, execute it, repeat, until the operation
waits for a person, ends, or is cancelled. Every change is written through the journal together with the
event that announces it, and a tool with side effects is on record as started before it runs.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from datetime import UTC, datetime
from typing import Any, assert_never

from cowork.memory import ProfileError
from cowork.policy import (
    PathPolicy,
    PolicyContext,
    PolicyDecision,
)
from cowork.policy import decide as decide_approval
from cowork.prompts import gather_prompt_extras
from cowork.protocol import (
    Citation,
    Citations,
    ErrorCode,
    ErrorSource,
    LogLine,
    OperationStatus,
    ProtocolError,
    ToolCallStatus,
    ToolResult,
)
from cowork.retrieval import Hit, SearchAnswer
from cowork.sessions import Pending, SessionFlags
from cowork.store import Connection, repos
from cowork.tools import ToolContext, ToolError, run_tool
from cowork.tools._diffs import DIFF_TOOLS, change_diff, preview_change, snapshot
from cowork.tools._fsutil import run_blocking

from ._call_policy import call_facts, path_policy
from ._exec_context import ContextSteps
from ._exec_human import HumanSteps
from ._exec_model import ModelSteps
from ._exec_observe import ObserveSteps
from ._runner import (
    ApplySteering,
    AskHuman,
    AwaitRunning,
    CallLLM,
    CallTool,
    CallToolsBatch,
    CompressContext,
    Finish,
    Instruction,
    Observe,
    Pause,
    RecordToolResults,
    RequestHumanApprove,
    Stop,
    Wait,
    decide,
)
from ._state import LedgerEntry, transition_call

__all__ = ["OperationRunner"]

log = logging.getLogger(__name__)

_PLAN_MODE = "planMode"
"""Set in a call's `meta` when plan mode refuses it."""
PLAN_MODE_REFUSAL = (
    "Plan mode is on: only tools that change nothing run (reading, searching, read-only commands). Finish the plan "
    "(todoWrite), present it, and ask the user to approve it; they turn plan mode off (/plan off) to let you act."
)

C = ToolCallStatus
S = OperationStatus


async def _finished(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for the calls' tasks. One that failed (its start could not be committed, or something around the tool
    broke; a tool's own errors are results) fails the operation with its error, not with a started call left over."""
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and (failure := task.exception()) is not None:
            raise failure


class OperationRunner(ContextSteps, ObserveSteps, ModelSteps, HumanSteps):
    """Advances one operation: decide, execute, persist, repeat."""

    # -- the loop ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Advance until the operation waits for a person, ends, or is cancelled (then re-raises)."""
        try:
            self.trace.begin()
            refusal = None
            if self._prompt_extras is None:
                workspace, home, skills = self.workspace, self.deps.home, self.state.agent_type is None
                extras = await run_blocking(lambda: gather_prompt_extras(workspace, home, with_skills=skills))
                passages, refusal = await self.document_context()
                profile, recalled = await self.working_memory_section(), await self.recall_section()
                self._prompt_extras = extras + profile + passages + recalled
            if self.state.status != S.RUNNING:
                await self._set_status(S.RUNNING)
            if refusal is not None:
                await self.refuse_grounded(refusal)
            while True:
                for instruction in decide(self.state, self.limits, self._policy, now=time.monotonic()):
                    if not await self._execute(instruction):
                        return
        except asyncio.CancelledError:
            await self._cancel_inflight()
            if self.interrupted_by_shutdown:
                await self._interrupt()
            else:
                await self.cancel_in_place()
            raise
        except ProtocolError as exc:
            await self._fail(exc.code, exc.message, exc.source)
        except Exception as exc:
            log.exception("operation %s failed", self.state.id)
            await self._fail(
                ErrorCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}", ErrorSource.RUNTIME
            )

    def _policy(self, entry: LedgerEntry) -> PolicyDecision:
        tool = self.tools.get(entry.name)
        if tool is None or entry.invalid_arguments is not None or (tool.always_asks and tool.refuses(entry.arguments)):
            return PolicyDecision(
                "run", "fails without running"
            )  # the call returns an error to the model; nothing to approve
        config = self.deps.config.tools
        facts, server = call_facts(
            tool, entry.arguments, workspace=self.workspace, home=self.deps.home, config=self.deps.config
        )
        flags = self.hooks.session_flags(self.state.session_id)
        context = PolicyContext(
            mode=config.approval_mode,
            allow_list=frozenset(config.auto_approve),
            overrides=self.hooks.overrides(),
            automation=self.state.origin == "automation",
            yolo=flags.yolo,
            sandboxed=self._bwrap(flags) is not None,
            network=flags.network,
            server_policies=dict([server]) if server else {},
            allowances=flags.allowances,
        )
        if flags.plan and (facts.risky or facts.protected is not None):
            # Plan mode: what would change something is refused when it runs, without asking first.
            entry.meta[_PLAN_MODE] = True
            return PolicyDecision("run", "plan mode: refused, not asked about", "plan")
        decision = decide_approval(facts, context)
        if decision.decision == "question" and self.state.parent_id is not None:
            return PolicyDecision("run", "a sub-agent cannot ask the user")  # the tool itself then says so
        return decision

    def _approval_preview(self, entry: LedgerEntry) -> str | None:
        if entry.invalid_arguments is not None:
            return None
        if entry.name not in DIFF_TOOLS:
            tool = self.tools.get(entry.name)
            return tool.preview(entry.arguments) if tool is not None else None
        change = preview_change(entry.name, entry.arguments, self._tool_context(entry))
        return change[1] if change else None

    def _bwrap(self, flags: SessionFlags) -> str | None:
        return None if flags.yolo else self.deps.bwrap

    async def _execute(self, instruction: Instruction) -> bool:
        """Carry out one instruction; False when the loop should stop (waiting, paused, or ended)."""
        if isinstance(instruction, CallLLM):
            return await self._call_llm()
        elif isinstance(instruction, CallTool):
            await self._call_tools([instruction.tool_call_id])
        elif isinstance(instruction, CallToolsBatch):
            await self._call_tools(list(instruction.tool_call_ids))
        elif isinstance(instruction, AwaitRunning):
            await _finished(list(self._inflight.values()))
        elif isinstance(instruction, RequestHumanApprove):
            await self._request_approvals(instruction)
        elif isinstance(instruction, AskHuman):
            self._ask(instruction.tool_call_id)
        elif isinstance(instruction, RecordToolResults):
            self._record_tool_results()
        elif isinstance(instruction, ApplySteering):
            self._apply_steering()
        elif isinstance(instruction, CompressContext):
            await self._compress()
        elif isinstance(instruction, Observe):
            await self.observe()
        elif isinstance(instruction, Pause):
            await self._pause(instruction)
            return False
        elif isinstance(instruction, Stop):
            await self._stop(instruction)
            return False
        elif isinstance(instruction, Finish):
            await self._finish()
            return False
        elif isinstance(instruction, Wait):
            await self._set_status(S.WAITING_FOR_HUMAN)
            return False
        else:
            assert_never(instruction)
        return True

    # -- call_tool / call_tools_batch -------------------------------------------------------------------------

    async def _call_tools(self, call_ids: list[str]) -> None:
        await _finished(self.start_calls(call_ids))

    def start_calls(self, call_ids: list[str]) -> list[asyncio.Task[None]]:
        """Mark calls started and start each in its own task (its own cancel scope); returns the tasks.

        Also used for a call approved while others of its step are still running, so it starts at once. A call is
        in `_inflight` from the moment it is marked started, with no wait between: the loop, deciding meanwhile,
        waits for it (`AwaitRunning`) rather than finding a started call with nothing running it.
        """
        entries = [self.state.calls[i] for i in call_ids]
        mutations = []
        for entry in entries:
            transition_call(entry, C.STARTED)
            mutations.append(self.ledger_update(entry))

        def mark_started(conn: Connection) -> None:
            for mutate in mutations:
                mutate(conn)

        side_effects = any(e.side_effects for e in entries)
        started = self._emit(None, mark_started, urgent=side_effects)
        loop = asyncio.get_running_loop()
        tasks = []
        for entry in entries:
            run = self._run_one(entry, persisted=started if side_effects else None)
            task = loop.create_task(run, name=f"tool-{entry.name}-{entry.tool_call_id}")
            self._inflight[entry.tool_call_id] = task
            task.add_done_callback(functools.partial(self._forget, entry.tool_call_id))
            tasks.append(task)
        return tasks

    def _forget(self, call_id: str, _task: asyncio.Task[None]) -> None:
        self._inflight.pop(call_id, None)

    async def _cancel_inflight(self) -> None:
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _run_one(self, entry: LedgerEntry, *, persisted: asyncio.Future[Any] | None) -> None:
        if persisted is not None:
            # Persist before side effects: after a crash this call shows as started, and is never silently re-run.
            await asyncio.shield(persisted)
        before = None
        if entry.name in DIFF_TOOLS and entry.invalid_arguments is None:
            ctx = self._tool_context(entry)
            before = await run_blocking(lambda: snapshot(entry.name, entry.arguments, ctx))
            if before is not None:
                # The file's text before the session's first change to it, for `session/diff`: kept first.
                sid, path, text, now = self.state.session_id, str(before[0]), before[1], datetime.now(UTC)
                await self._emit(
                    None, lambda conn: repos.session_files.remember(conn, sid, path, text, now=now), urgent=True
                )
        checkpoints, checkpoint = self.deps.checkpoints, await self._checkpoint_before(entry)
        changed: list[str] = []
        try:
            with self.trace.tool_call(entry) as span:
                content, is_error = await self._invoke(entry)
                self.trace.tool_result(span, content, is_error)
        finally:
            if checkpoints is not None and checkpoint is not None:
                # Also when the call is cancelled: what a command changed before it was stopped can be taken back.
                recorded = await asyncio.shield(
                    checkpoints.after(
                        checkpoint,
                        session_id=self.state.session_id,
                        operation_id=self.state.id,
                        tool_call_id=entry.tool_call_id,
                        tool=entry.name,
                    )
                )
                if recorded is not None:
                    changed = [f.path for f in recorded.files if f.after_mode]
        diff = None
        if before is not None and not is_error:
            diff = await run_blocking(lambda: change_diff(before, ctx))
        entry.result, entry.is_error = content, is_error
        transition_call(entry, C.FINISHED)
        self.state.outcomes.append(is_error)
        self.state.signatures.append(entry.signature)
        self._emit(
            ToolResult(
                operation_id=self.state.id,
                step=entry.step,
                tool_call_id=entry.tool_call_id,
                name=entry.name,
                is_error=is_error,
                content=content,
                diff=diff,
                files=changed,
            ),
            self.ledger_update(entry, result=content),
        )

    async def _checkpoint_before(self, entry: LedgerEntry) -> Pending | None:
        """Keep what a call that changes the folder may change: the files a file tool names, or for a shell
        command the policy does not know to be read-only, the whole folder (see `cowork.sessions.Checkpoints`)."""
        checkpoints = self.deps.checkpoints
        if (
            checkpoints is None
            or not checkpoints.enabled
            or not entry.side_effects
            or entry.invalid_arguments is not None
            or entry.meta.get(_PLAN_MODE)
        ):
            return None
        tool = self.tools.get(entry.name)
        if tool is None:
            return None
        facts = tool.facts(entry.arguments)
        if facts.changes_named_files:
            ctx = self._tool_context(entry)
            files = []
            for raw in facts.paths:
                try:
                    files.append(ctx.write_path(raw))
                except ToolError:
                    continue  # the tool refuses it when it runs
            return await checkpoints.before(self.workspace, files) if files else None
        if facts.shell_command is not None:
            return await checkpoints.before(self.workspace, None)
        return None

    async def _invoke(self, entry: LedgerEntry) -> tuple[str, bool]:
        state = self.state
        tool = self.tools.get(entry.name)
        try:
            if tool is None:
                raise ToolError(
                    f"There is no tool named {entry.name!r}. Available tools: {', '.join(self.tools.names())}."
                )
            if entry.invalid_arguments is not None:
                raise ToolError(
                    f"The arguments for {entry.name} are not a valid JSON object: {entry.invalid_arguments!r}"
                )
            if entry.meta.get(_PLAN_MODE):  # decided in plan mode: refused even if plan mode ended since
                raise ToolError(PLAN_MODE_REFUSAL)
            return await run_tool(tool, entry.arguments, self._tool_context(entry)), False
        except ToolError as exc:
            return f"Error: {exc}", True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s failed in operation %s", entry.name, state.id)
            return f"Error: the {entry.name} tool failed unexpectedly ({type(exc).__name__}: {exc}).", True

    def _path_policy(self) -> PathPolicy:
        """The operation's path policy (shared by operations of one configuration, see `path_policy`)."""
        return path_policy(self.workspace, self.deps.home, self.deps.config)

    def _tool_context(self, entry: LedgerEntry) -> ToolContext:
        state, hooks = self.state, self.hooks

        async def emit_log(text: str) -> None:
            self._emit(LogLine(operation_id=state.id, tool_call_id=entry.tool_call_id, text=text))

        async def set_todos(todos: list[dict[str, str]]) -> None:
            assert hooks.set_todos is not None
            await hooks.set_todos(state, todos)

        async def spawn(agent_type: str, task: str, model: str | None) -> str:
            assert hooks.spawn_agent is not None
            return await hooks.spawn_agent(state, entry, agent_type, task, model)

        config = self.deps.config
        flags = hooks.session_flags(state.session_id)
        home = self.deps.home
        retrieval = self.deps.retrieval
        workspace = self.workspace

        working_memory = self.deps.working_memory
        recall = self.deps.recall

        async def recall_turns(query: str, limit: int) -> list[Hit]:
            assert recall is not None
            return await recall.search(
                workspace, query, limit=limit, exclude_session=state.session_id, min_similarity=None
            )

        async def update_profile(set_: dict[str, str], remove: list[str]) -> str:
            assert working_memory is not None
            try:
                entries = await working_memory.change(set_, remove, source="agent")
            except ProfileError as error:
                raise ToolError(str(error)) from None
            changed = [f"set {k}" for k in set_] + [f"removed {k}" for k in remove]
            return f"Profile updated ({', '.join(changed)}). It now holds:\n" + "\n".join(
                f"- {e.key}: {e.value}" for e in entries
            )

        capture = self.deps.capture

        async def search_documents(query: str, limit: int) -> SearchAnswer:
            assert retrieval is not None
            answer = await retrieval.search(workspace, query, limit=limit, auto_index=True)
            await retrieval.cite(state.session_id, state.id, answer.hits)  # what later turns' backfill re-offers
            if answer.hits:
                found = [
                    Citation(
                        chunk_id=h.chunk_id, path=h.uri, title=h.title, heading=h.heading, similarity=h.similarity,
                        origin="tool",
                    )
                    for h in answer.hits
                ]  # fmt: skip
                self._emit(Citations(operation_id=state.id, step=state.step, citations=found))
            return answer

        return ToolContext(
            workspace=self.workspace,
            paths=self._path_policy(),
            settings=config.tools,
            network=flags.network or flags.yolo,
            output_dir=home / "tool-output" / state.session_id,
            home=home,
            bwrap=self._bwrap(flags),
            session_id=state.session_id,
            operation_id=state.id,
            tool_call_id=entry.tool_call_id,
            log=emit_log,
            set_todos=set_todos if hooks.set_todos is not None else None,
            spawn_agent=spawn if hooks.spawn_agent is not None else None,
            search_documents=search_documents if retrieval is not None else None,
            update_profile=update_profile if working_memory is not None and state.agent_type is None else None,
            recall=recall_turns if recall is not None and recall.enabled else None,
            query_activity=capture.lookup if capture is not None else None,
        )
