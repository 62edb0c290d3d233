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
  request from those items. The Responses model remembers only in the plain case (no native or revealed tools, no
  response-scoped call ids), keyed by the request settings its mapping reads.
- The Chat model also keeps each thread's items from its last request (`_chat_history.ThreadItems`), so a request
  does not even loop over the messages it shares with the last one, and does the per-request adjustments itself
  where they are simple (otherwise pydantic-ai's own mapping runs, over the per-message memo).

`tests/models/test_wire_equivalence.py` checks that the bytes on the wire are the same as pydantic-ai's own models send.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.models.openai._caching import leading_system_message_count
from pydantic_ai.settings import ModelSettings

from ._chat_history import ThreadItems
from ._memo import IdentityMemo, copy_wire
from ._schemas import SchemasOnce

__all__ = ["ChatModel", "ResponsesModel"]


class ChatModel(SchemasOnce, OpenAIChatModel):
    """`OpenAIChatModel` mapping each history message to Chat Completions messages once, and a request only the
    messages its thread did not send before (`ThreadItems`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: IdentityMemo[list[Any]] = IdentityMemo()
        custom = self.profile.get("openai_chat_thinking_field", None)
        fields = [name for name in (custom, "reasoning", "reasoning_content") if name]  # what the back-fill reads
        self._threads = ThreadItems(self._loop_items, fields)

    async def _loop_items(self, message: ModelMessage) -> list[Any]:
        """What pydantic-ai's loop over the history appends for `message` (before its per-request adjustments)."""
        if isinstance(message, ModelRequest):
            return [item async for item in super()._map_user_message(message)]
        items: list[Any] = []
        if (carried := self._map_carried_thinking(message)) is not None:
            items.append(carried)
        if (mapped := super()._map_model_response(message)) is not None:
            items.append(mapped)
        return items

    async def _map_messages(
        self,
        messages: Sequence[ModelMessage],
        model_request_parameters: ModelRequestParameters,
        *,
        model_settings: ModelSettings | None = None,
    ) -> list[Any]:
        """pydantic-ai's mapping, for the requests `ThreadItems` covers, from the thread's remembered items."""
        profile = self.profile
        send_back_thinking = profile.get("openai_chat_send_back_thinking_parts", "auto")
        if (
            not messages
            or send_back_thinking == "field"
            or (model_settings and model_settings.get("openai_cache_instructions"))
            or not profile.get("openai_chat_supports_multiple_system_messages", True)
        ):
            return await super()._map_messages(messages, model_request_parameters, model_settings=model_settings)
        mapped = await self._threads.map(messages)
        if mapped.breakpoints:
            return await super()._map_messages(messages, model_request_parameters, model_settings=model_settings)
        out = [copy_wire(item) for item in mapped.items]
        # From here on as `OpenAIChatModel._map_messages` does once its loop is done (the cache-breakpoint steps
        # are left out: they do nothing without `openai_cache_instructions` or a leading breakpoint).
        if send_back_thinking == "auto" and len(mapped.fields) == 1:
            (sent_field,) = mapped.fields
            last_user = next((i for i in range(len(out) - 1, -1, -1) if out[i]["role"] == "user"), -1)
            for item in out[last_user + 1 :]:
                if item["role"] == "assistant" and item.get("tool_calls") and sent_field not in item:
                    item[sent_field] = ""
        role = profile.get("openai_system_prompt_role", None) or "system"
        instruction_parts = self._get_instruction_parts(messages, model_request_parameters) or []
        if instruction_parts:
            at = leading_system_message_count(out, role)
            out[at:at] = [{"role": role, "content": part.content} for part in instruction_parts]
        return out

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
