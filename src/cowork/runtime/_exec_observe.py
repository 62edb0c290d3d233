"""Observational memory: an `observe` operation turns a conversation's turns not yet observed into dense, dated
observations (seed 002's Observer), indexed for recall (`observations` kind of the folder's index).

Started by hand (`memory/observe`) or by `cowork.memory.ConversationRecall` once a conversation has been idle for a
while. How far a conversation has been observed is kept in the store (`observed:<session>`, the last message
position), so each turn is observed once; an observation that is gone from the index (forgotten by the user) is not
made again.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from pydantic_ai import direct
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.messages import ModelRequest, TextPart, UserPromptPart

from cowork.models import map_provider_error
from cowork.prompts import template_text
from cowork.store import Connection, repos

from ._compress import transcript_text
from ._exec_model import ModelSteps

__all__ = ["OBSERVED", "ObserveSteps", "parse_observations"]

OBSERVED = "observed:"  # the same key `cowork.memory` reads
MAX_OBSERVATIONS = 40
MAX_OBSERVATION_CHARS = 400


def parse_observations(text: str) -> list[str]:
    """The "- " lines of the observer's answer (none for NOTHING), each trimmed to one short line."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith(("- ", "* ")):
            continue
        item = " ".join(stripped[2:].split())
        if item:
            found.append(item[:MAX_OBSERVATION_CHARS])
    return found[:MAX_OBSERVATIONS]


class ObserveSteps(ModelSteps):
    """`observe`: one model request over the unobserved turns, then the observations indexed and the mark moved."""

    async def observe(self) -> None:
        state = self.state
        key = OBSERVED + state.session_id
        mark = await self.deps.db.read(lambda c: repos.settings.get(c, key))
        after = mark if isinstance(mark, int) else -1
        fresh = [m for m, p in zip(state.messages, state.positions, strict=True) if p > after]
        last = max((p for p in state.positions if p >= 0), default=-1)
        if not fresh or last <= after:
            state.summary = "Nothing new to observe in this conversation."
            return
        model = await self.deps.models.get(self.target)
        await self.deps.journal.flush()
        spend = await self.deps.usage.spend(state.root)
        today = datetime.now(UTC).astimezone()
        request = ModelRequest(
            parts=[UserPromptPart(f"The conversation (up to {today:%Y-%m-%d}):\n\n{transcript_text(fresh)}")],
            instructions=template_text("observe"),
        )
        try:
            response = await direct.model_request(model, [request], model_settings=self._settings(), instrument=False)
        except (ModelAPIError, UnexpectedModelBehavior) as exc:
            raise map_provider_error(exc) from exc
        answer = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        observations = parse_observations(answer)
        if observations and self.deps.retrieval is not None:
            text = "\n".join(f"- {today:%Y-%m-%d}: {item}" for item in observations)
            index = self.deps.retrieval.index
            scope = await asyncio.to_thread(lambda: str(Path(self.workspace).resolve()))
            await asyncio.to_thread(
                index.index_text,
                text,
                kind="observations",
                scope=scope,
                uri=f"{state.session_id}/{state.id}",
                title=f"Observations of {today:%Y-%m-%d}",
            )
        bill = self._account(response.usage, spend, datetime.now(UTC))
        account = bill.mutate

        def record(conn: Connection) -> None:
            repos.settings.put(conn, key, last, now=datetime.now(UTC))
            account(conn)

        done = self._emit(None, record, urgent=True)
        for event in bill.events:
            self._emit(event)
        await done
        count = len(observations)
        state.summary = (
            f"Noted {count} observation{'s' if count != 1 else ''} from this conversation for later recall."
            if count
            else "Nothing in this conversation was worth remembering."
        )
