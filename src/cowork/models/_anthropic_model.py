"""pydantic-ai's `AnthropicModel`, mapping each plain history message to Messages API turns once (see `_adapters`).

`AnthropicModel._map_message` maps the whole history on every request, each message against a context of the
request (whether documents carry citations, whether tools are deferred, the declared tools) and sometimes against
its neighbours (a `CachePoint` marks the block before it, a system prompt joins the top-level `system`, reasoning
from another provider may move in front of system entries). `AnthropicModel` here remembers, by the message's
identity, the turns a message appends in the plain case, the one a long session is made of:

- a request of user prompts (text, `TextContent`, `BinaryContent`) and tool results (with no `FileUrl`, which would
  be downloaded again); no system prompt, `CachePoint`, retry, settings or tool-availability part;
- a response of text, tool calls and reasoning;

keyed by what their mapping reads from the request (citations, deferred tools), and only when the mapping appended
turns without touching earlier ones. Anything else is mapped by pydantic-ai on every request, as before. The turns
are handed out as copies (`copy_wire`): the request's later passes add cache breakpoints to the last blocks and may
rewrite a turn's content, in place.

`tests/models/test_wire_equivalence.py` checks the request bodies against the stock model.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    FileUrl,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.anthropic import AnthropicModel as StockAnthropicModel

from ._memo import IdentityMemo, copy_wire
from ._schemas import SchemasOnce

__all__ = ["AnthropicModel"]

_Key = tuple[bool, bool]
_PROMPT_ITEMS = (str, TextContent, BinaryContent)
_RESPONSE_PARTS = (TextPart, ToolCallPart, ThinkingPart)


def _plain_request(message: ModelRequest) -> bool:
    for part in message.parts:
        if type(part) is UserPromptPart:
            if not isinstance(part.content, str) and not all(type(item) in _PROMPT_ITEMS for item in part.content):
                return False
        elif type(part) is ToolReturnPart:
            if any(isinstance(file, FileUrl) for file in part.files):
                return False
        else:
            return False
    return True


def _plain_response(message: ModelResponse) -> bool:
    return all(type(part) in _RESPONSE_PARTS for part in message.parts)


class AnthropicModel(SchemasOnce, StockAnthropicModel):
    """`AnthropicModel` mapping each plain history message to Messages API turns once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: IdentityMemo[tuple[_Key, list[Any]]] = IdentityMemo()

    def _remembered(self, message: ModelRequest | ModelResponse, key: _Key, map_context: Any) -> bool:
        """Append `message`'s remembered turns for `key`, if any; whether it did."""
        entry = self._wire.get(message)
        if entry is None or entry[0] != key:
            return False
        map_context.anthropic_messages.extend(copy_wire(item) for item in entry[1])
        return True

    def _remember(
        self, message: ModelRequest | ModelResponse, key: _Key, turns: list[Any], start: int, last: Any
    ) -> None:
        """Remember what the mapping of `message` appended from `start`, if it changed nothing before."""
        if len(turns) >= start and (start == 0 or turns[start - 1] is last):
            self._wire.put(message, (key, [copy_wire(item) for item in turns[start:]]))

    async def _map_model_request(self, message: ModelRequest, standing_prompt_count: int, map_context: Any) -> None:
        key: _Key = (bool(map_context.include_citations), bool(map_context.deferred_tools_active))
        if self._remembered(message, key, map_context):
            return
        turns: list[Any] = map_context.anthropic_messages
        start, last = len(turns), turns[-1] if turns else None
        await super()._map_model_request(message, standing_prompt_count, map_context)
        if _plain_request(message):
            self._remember(message, key, turns, start, last)

    def _map_model_response(self, message: ModelResponse, map_context: Any) -> None:
        key: _Key = (bool(map_context.include_citations), bool(map_context.deferred_tools_active))
        if self._remembered(message, key, map_context):
            return
        turns: list[Any] = map_context.anthropic_messages
        start, last = len(turns), turns[-1] if turns else None
        super()._map_model_response(message, map_context)
        if _plain_response(message):
            self._remember(message, key, turns, start, last)
