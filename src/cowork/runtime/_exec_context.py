"""Document context for a turn (`memory.context = "auto"`) and grounded refusals (`memory.grounded = "no-context"`).

Before a chat turn's first model request, the files the user pinned in the folder and (with `memory.context =
"auto"`) the folder's index searched for the user's message (with backfill from earlier answers' passages; see
`cowork.retrieval._assembly`) go into that turn's system prompt. In
grounded mode, a turn whose folder has nothing indexed, or for which nothing relevant is found, is answered with the
configured refusal instead — no model request is made — and the question and the refusal are kept out of the
model's context for later turns (`messages.excluded`), though people still see them.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from cowork.protocol import AssistantMessage, Citation, Citations
from cowork.store import Connection, repos

from ._runner_base import RunnerBase

__all__ = ["ContextSteps"]

log = logging.getLogger(__name__)


def latest_user_text(messages: list[object]) -> str:
    """The text of the last user prompt in the history ("" when there is none)."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in reversed(message.parts):
            if isinstance(part, UserPromptPart):
                content = part.content
                if isinstance(content, str):
                    return content
                return " ".join(item for item in content if isinstance(item, str))
    return ""


class ContextSteps(RunnerBase):
    """`document_context` (run once per run of an operation) and the grounded refusal."""

    async def document_context(self) -> tuple[str, str | None]:
        """The system prompt's passages section, and the refusal to answer with instead (grounded mode, first run
        of the turn, nothing found); both empty for operations this does not apply to."""
        retrieval = self.deps.retrieval
        memory = self.deps.config.memory
        state = self.state
        grounded = memory.grounded == "no-context"
        if retrieval is None or state.agent_type is not None or state.origin != "chat":
            return "", None
        search = memory.context == "auto" or grounded  # otherwise only the files the user pinned
        query = latest_user_text(list(state.messages))
        if search and not query.strip():
            return "", None
        from cowork.retrieval._assembly import render

        try:
            assembly = await retrieval.assemble(
                self.workspace, query, session_id=state.session_id, operation_id=state.id, search=search
            )
        except Exception:
            # The turn goes on without passages (the embedder's failure shows in `health`); a grounded turn refuses.
            log.warning("context assembly failed for operation %s", state.id, exc_info=True)
            return "", memory.refusal if grounded and state.step == 0 else None
        self.trace.note_context(len(assembly.passages), assembly.backfilled)
        if assembly.passages and state.step == 0:  # once per turn: a resumed run re-assembles, but shows nothing new
            cited = [
                Citation(
                    chunk_id=p.chunk_id, path=p.uri, title=p.title, heading=p.heading, similarity=p.score,
                    origin=p.origin,
                )
                for p in assembly.passages
            ]  # fmt: skip
            self._emit(Citations(operation_id=state.id, step=state.step, citations=cited))
        refusal = memory.refusal if grounded and state.step == 0 and not assembly.passages else None
        return render(assembly.passages), refusal

    async def working_memory_section(self) -> str:
        """The user's profile for the system prompt: the main agent's alone (sub-agents work on a task)."""
        working = self.deps.working_memory
        if working is None or self.state.agent_type is not None or not self.deps.config.memory.working:
            return ""
        return await working.render()

    async def recall_section(self) -> str:
        """With `memory.recall = "auto"`, the chat turn's prompt gets the most similar turns of the folder's other
        conversations (semantic recall; see `cowork.memory`)."""
        recall, memory, state = self.deps.recall, self.deps.config.memory, self.state
        if recall is None or memory.recall != "auto" or state.agent_type is not None or state.origin != "chat":
            return ""
        query = latest_user_text(list(state.messages))
        if not query.strip():
            return ""
        from cowork.memory import render_recall

        try:
            hits = await recall.search(
                self.workspace,
                query,
                limit=memory.recall_passages,
                exclude_session=state.session_id,
                min_similarity=memory.recall_min_similarity,
            )
        except Exception:
            log.warning("recall failed for operation %s", state.id, exc_info=True)
            return ""
        return render_recall(hits)

    async def refuse_grounded(self, text: str) -> None:
        """Answer with `text` without a model request; the question and the answer leave the model's context."""
        state = self.state
        state.step += 1
        state.excluded = True
        response = ModelResponse(
            parts=[TextPart(text)], model_name="cowork-grounded-refusal", timestamp=datetime.now(UTC)
        )
        message_id, store_message = self._message_mutation(response)
        operation_id, thread_id = state.id, state.thread_id

        def mutate(conn: Connection) -> None:
            store_message(conn)
            repos.messages.exclude(conn, operation_id, thread_id=thread_id)

        await self._emit(
            AssistantMessage(operation_id=state.id, step=state.step, message_id=message_id, text=text), mutate
        )
