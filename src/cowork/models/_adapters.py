"""pydantic-ai models that do per request only the work that changed since the last one.

On every request pydantic-ai (1) fits each tool's JSON schema to the provider (a deep copy and a walk of every
schema) and (2) maps the whole message history to the provider's wire form again. Cowork sends the same tools
step after step and a history that only grows, so both were repeated for nothing, and (2) made a request's cost
grow with the session's length. Here:

- `SchemasOnce` (in `_schemas`, for every family) keeps the last fitted tool parameters and returns them while the
  request parameters are equal to the last ones; a different tool set, output mode or thinking setting refits them.
- The OpenAI models remember each history message's wire items by the message's identity (`IdentityMemo`:
  messages are never changed once made) and hand out copies. Only what a message maps to on its own is kept;
  what depends on its neighbours (instructions, cache breakpoints, reasoning back-fill) is still worked out per
  request by pydantic-ai from those items. The Responses model remembers only in the plain case (no native or
  revealed tools, no response-scoped call ids), keyed by the request settings its mapping reads.

`tests/models/test_wire_equivalence.py` checks that the bytes on the wire are the same as pydantic-ai's own models send.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from ._memo import IdentityMemo, copy_wire
from ._schemas import SchemasOnce

__all__ = ["ChatModel", "ResponsesModel"]


class ChatModel(SchemasOnce, OpenAIChatModel):
    """`OpenAIChatModel` mapping each history message to Chat Completions messages once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: IdentityMemo[list[Any]] = IdentityMemo()

    async def _map_user_message(self, message: ModelRequest) -> AsyncIterator[Any]:
        items = self._wire.get(message)
        if items is None:
            items = [item async for item in super()._map_user_message(message)]
            self._wire.put(message, items)
        for item in items:
            yield copy_wire(item)

    def _map_model_response(self, message: ModelResponse) -> Any:
        items = self._wire.get(message)
        if items is None:
            items = [super()._map_model_response(message)]
            self._wire.put(message, items)
        return None if items[0] is None else copy_wire(items[0])


class ResponsesModel(SchemasOnce, OpenAIResponsesModel):
    """`OpenAIResponsesModel` mapping each history message to Responses input items once (in the plain case)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: IdentityMemo[tuple[tuple[bool, bool], list[Any]]] = IdentityMemo()
        self._interleaved = bool(self.profile.get("openai_responses_supports_interleaved_function_calls", True))

    def _key(self, context: Any) -> tuple[bool, bool] | None:
        """What the mapping of one message reads from the request, or None when it reads more (then no memo)."""
        params: ModelRequestParameters = context.model_request_parameters
        if (
            context.response_scoped_tool_call_ids
            or context.client_tool_search_active
            or params.native_tools
            or params.revealed_tool_names
            or not self._interleaved
        ):
            return None
        return (bool(context.send_item_ids), bool(context.store_disabled))

    def _remembered(self, message: ModelMessage, context: Any) -> tuple[tuple[bool, bool] | None, list[Any] | None]:
        key = self._key(context)
        if key is None:
            return None, None
        entry = self._wire.get(message)
        if entry is None or entry[0] != key:
            return key, None
        return key, entry[1]

    async def _map_model_request(self, message: ModelRequest, context: Any) -> None:
        key, items = self._remembered(message, context)
        if items is not None:
            context.openai_messages.extend(copy_wire(item) for item in items)
            return
        start = len(context.openai_messages)
        await super()._map_model_request(message, context)
        if key is not None:
            self._wire.put(message, (key, [copy_wire(item) for item in context.openai_messages[start:]]))

    def _map_model_response(self, message_index: int, message: ModelResponse, context: Any) -> None:
        key, items = self._remembered(message, context)
        if items is not None:
            context.openai_messages.extend(copy_wire(item) for item in items)
            context.response_id = None  # what the mapping leaves without response-scoped call ids
            return
        start = len(context.openai_messages)
        super()._map_model_response(message_index, message, context)
        if key is not None:
            self._wire.put(message, (key, [copy_wire(item) for item in context.openai_messages[start:]]))
