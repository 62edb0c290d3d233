"""pydantic-ai's `GoogleModel`, mapping each history message to Gemini contents once (see `_adapters` for the why).

pydantic-ai maps the whole history on every request (`GoogleModel._map_messages`): each request to its user
contents and system parts, each response to a model content. Both depend on the message and on the model alone
(its profile, its transport, the systems whose thought signatures it accepts), never on the request's settings or
tools, so `GoogleModel` here remembers them by the message's identity (`IdentityMemo`) and works out per request
only what depends on the whole history: the empty user turn a history must open with, and the instructions.

The contents are handed out as `WireContent`s, the same objects on every request: pydantic-ai passes them to the
SDK unchanged (it inserts into the list, never into a content), and `_raw_google`'s client converts each to its
wire form once. A request holding a `FileUrl` that pydantic-ai downloads is mapped afresh on every request, as
before, since what it maps to is not the message's alone.

`tests/models/test_wire_equivalence.py` checks the request bodies against the stock model and client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from google.genai.types import ContentDict, ContentUnionDict, PartDict
from pydantic_ai.messages import FileUrl, ModelMessage, ModelRequest, ModelResponse, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.google import GoogleModel as StockGoogleModel
from pydantic_ai.models.google import _content_model_response

from ._memo import IdentityMemo
from ._raw_google import WireContent
from ._schemas import SchemasOnce

__all__ = ["GoogleModel"]

_OPENING = WireContent(role="user", parts=[{"text": ""}])
"""The user turn pydantic-ai puts before a history that starts with the model's (never changed: shared)."""


@dataclass(frozen=True, slots=True)
class _Mapped:
    """What one message maps to: the system parts it adds and its contents."""

    system_parts: tuple[PartDict, ...]
    contents: tuple[WireContent, ...]


def _fetched(message: ModelRequest) -> bool:
    """Whether mapping `message` may download a file (a `FileUrl` anywhere in it)."""
    for part in message.parts:
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            if any(isinstance(item, FileUrl) for item in part.content):
                return True
        elif isinstance(part, ToolReturnPart) and any(isinstance(file, FileUrl) for file in part.files):
            return True
    return False


class GoogleModel(SchemasOnce, StockGoogleModel):
    """`GoogleModel` mapping each history message to Gemini contents once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: IdentityMemo[_Mapped] = IdentityMemo()

    async def _map_message(self, message: ModelMessage, supports_tool_combination: bool) -> _Mapped:
        if isinstance(message, ModelRequest):
            system_parts: list[PartDict] = []
            contents = await self._map_model_request(message, system_parts)
            return _Mapped(tuple(system_parts), tuple(WireContent(content) for content in contents))
        content = _content_model_response(
            message, self.accepts_stateless_artifacts, supports_tool_combination=supports_tool_combination
        )
        return _Mapped((), (WireContent(content),) if content else ())

    async def _map_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters
    ) -> tuple[ContentDict | None, list[ContentUnionDict]]:
        # pydantic-ai's `GoogleModel._map_messages`, each message's mapping remembered.
        supports_tool_combination = bool(self.profile.get("google_supports_tool_combination", False)) and not (
            self._is_google_cloud
        )
        contents: list[WireContent] = []
        system_parts: list[PartDict] = []
        for message in messages:
            mapped = self._wire.get(message)
            if mapped is None:
                if not isinstance(message, ModelRequest | ModelResponse):
                    raise TypeError(f"not a model message: {message!r}")
                mapped = await self._map_message(message, supports_tool_combination)
                if not (isinstance(message, ModelRequest) and _fetched(message)):
                    self._wire.put(message, mapped)
            system_parts.extend(mapped.system_parts)
            contents.extend(mapped.contents)

        # Google GenAI requires at least one user part in the message, and that function call turns
        # come immediately after a user turn or after a function response turn.
        if not contents or contents[0].get("role") == "model":
            contents.insert(0, _OPENING)

        if instruction_parts := self._get_instruction_parts(messages, model_request_parameters):
            for part in instruction_parts:
                system_parts.append({"text": part.content})
        system_instruction = ContentDict(role="user", parts=system_parts) if system_parts else None
        return system_instruction, cast(list[ContentUnionDict], contents)
