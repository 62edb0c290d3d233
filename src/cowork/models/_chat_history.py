"""A conversation's Chat Completions items, kept per thread, so a request maps only the messages new since the last.

pydantic-ai's `OpenAIChatModel._map_messages` walks the whole history on every request: an async generator per
request message, a memo lookup and copy per message (`ChatModel`'s per-message memo), a scan for reasoning fields,
a scan for cache breakpoints. At 800 messages that was 3-4 ms a request, four requests a turn, and it grew with the
session. `ThreadItems` keeps, per thread, the items the last request's messages mapped to (what pydantic-ai's loop
over the messages produces, before its per-request adjustments), keyed by the thread's first message. The next
request reuses them for the messages it shares with the last one (the same objects: history messages are never
changed once made) and maps only the rest, each message once (`IdentityMemo`).

What pydantic-ai then does per request is done by `ChatModel._map_messages` on copies of the items, in the same
order and with the same helpers: the reasoning back-fill of `openai_chat_send_back_thinking_parts = 'auto'`, and
the instructions put after the leading system messages. Requests this does not cover fall back to pydantic-ai's own
mapping: a `'field'` back-fill profile, `openai_cache_instructions`, a profile that merges system messages, or an
item carrying a leading prompt-cache breakpoint. `tests/models/test_wire_equivalence.py` compares the result with
stock pydantic-ai over growing, forked and compacted histories.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.openai._caching import leading_cache_breakpoint

from ._memo import IdentityMemo

__all__ = ["Mapped", "ThreadItems"]

Item = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Mapped:
    """The items a history maps to, with what the per-request adjustments need to know about them."""

    items: list[Item]
    """Shared with the memo: copy before changing any."""
    fields: frozenset[str]
    """The reasoning field names (of those asked about) that assistant items carry."""
    breakpoints: bool
    """Whether an item opens with a leading prompt-cache breakpoint (then pydantic-ai's own mapping is used)."""


@dataclass(frozen=True, slots=True)
class _One:
    items: list[Item]
    fields: frozenset[str]
    breakpoints: bool


@dataclass(frozen=True, slots=True)
class _Thread:
    rest: list[ModelMessage]
    """The last request's messages after the first (the first is the key: a value must not refer to its key)."""
    items: list[Item]
    ends: list[int]
    """`ends[i]`: how many items messages `0..i` map to."""
    fields: list[frozenset[str]]
    """`fields[i]`: the reasoning fields on the items of messages `0..i`."""
    breakpoints: list[bool]
    """`breakpoints[i]`: whether an item of messages `0..i` opens with a prompt-cache breakpoint."""


def _common_prefix(rest: list[ModelMessage], messages: Sequence[ModelMessage]) -> int:
    """How many of `rest` are, in order, the same objects as `messages[1:]`."""
    n = min(len(rest), len(messages) - 1)
    tail = messages[1 : n + 1]
    if all(map(operator.is_, rest[:n], tail)):
        return n
    # Usually only the last differs: the previous request's newest message carried that request's instructions.
    if n > 1 and all(map(operator.is_, rest[: n - 1], tail[: n - 1])):
        return n - 1
    return next(i for i in range(n) if rest[i] is not tail[i])


class ThreadItems:
    """The mapped items of each live thread's last request (see the module's docstring)."""

    def __init__(self, map_one: Callable[[ModelMessage], Awaitable[list[Item]]], field_names: Sequence[str]) -> None:
        """`map_one` maps one history message to its items as pydantic-ai's loop would; `field_names` are the
        reasoning fields the back-fill looks for."""
        self._map_one = map_one
        self._field_names = tuple(field_names)
        self._messages: IdentityMemo[_One] = IdentityMemo()
        self._threads: IdentityMemo[_Thread] = IdentityMemo()

    async def _one(self, message: ModelMessage) -> _One:
        one = self._messages.get(message)
        if one is None:
            items = await self._map_one(message)
            fields = frozenset(
                name for item in items if item.get("role") == "assistant" for name in self._field_names if name in item
            )
            breakpoints = any(leading_cache_breakpoint(item) is not None for item in items)
            one = _One(items, fields, breakpoints)
            self._messages.put(message, one)
        return one

    async def map(self, messages: Sequence[ModelMessage]) -> Mapped:
        """The items `messages` map to (at least one message), reusing the thread's last request's."""
        head = messages[0]
        last = self._threads.get(head)
        if last is None:
            kept = 0
            items: list[Item] = []
            ends: list[int] = []
            fields: list[frozenset[str]] = []
            breakpoints: list[bool] = []
        else:
            kept = 1 + _common_prefix(last.rest, messages)
            items = last.items[: last.ends[kept - 1]]
            ends, fields, breakpoints = last.ends[:kept], last.fields[:kept], last.breakpoints[:kept]
        for message in messages[kept:]:
            one = await self._one(message)
            items += one.items
            ends.append(len(items))
            fields.append(fields[-1] | one.fields if fields and one.fields else (fields[-1] if fields else one.fields))
            breakpoints.append((breakpoints[-1] if breakpoints else False) or one.breakpoints)
        self._threads.put(head, _Thread(list(messages[1:]), items, ends, fields, breakpoints))
        return Mapped(items, fields[-1], breakpoints[-1])

    def __len__(self) -> int:
        """Threads remembered."""
        return len(self._threads)
