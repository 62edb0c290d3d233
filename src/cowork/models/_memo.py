"""Values worked out from a history message once, remembered for as long as the message lives.

History messages (pydantic-ai's `ModelRequest` / `ModelResponse`) are never changed once made: a step appends new
ones, compaction replaces the list. So what is derived from one (its provider wire form, its size) can be kept by
the message's identity and reused on every later request, instead of walking the whole history again each step.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

__all__ = ["IdentityMemo", "copy_wire", "history_chars", "message_chars"]

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """A value per live object, by identity; an entry goes when its object is collected.

    The objects need not be hashable (messages are not), only weak-referenceable. Holding no strong reference to
    the object, a memo never keeps a finished session's history alive. Values must not refer to their object.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], V]] = {}

    def get(self, obj: object) -> V | None:
        entry = self._entries.get(id(obj))
        if entry is None or entry[0]() is not obj:
            return None
        return entry[1]

    def put(self, obj: object, value: V) -> None:
        key = id(obj)
        entries = self._entries

        def forget(ref: weakref.ref[Any]) -> None:
            entry = entries.get(key)
            if entry is not None and entry[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(obj, forget), value)

    def __len__(self) -> int:
        return len(self._entries)


def copy_wire(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of a remembered wire item that a request may adjust in place without changing the remembered one.

    pydantic-ai adjusts a request's items in place: top-level keys (reasoning fields on assistant messages, a string
    body turned into a list of parts) and the last part of a body (a prompt-cache breakpoint), never deeper. So the
    item and its body's parts (`content`, or `output` for a Responses tool result) are copied; the rest is shared.
    """
    out = item.copy()
    for key in ("content", "output"):
        body = out.get(key)
        if type(body) is list:
            out[key] = [part.copy() if type(part) is dict else part for part in body]
    return out


_CHARS: IdentityMemo[int] = IdentityMemo()

_MEDIA_CHARS = 4000
"""An image or other file in a prompt, as characters of text: providers count roughly a thousand tokens for one."""
_PART_CHARS = 12
"""What a part costs besides its text: its role, the call id and the wire format's punctuation."""


def _part_chars(part: Any) -> int:
    kind = getattr(part, "part_kind", None)
    if kind == "user-prompt":
        content = part.content
        if isinstance(content, str):
            return len(content)
        return sum(len(item) if isinstance(item, str) else _MEDIA_CHARS for item in content)
    if kind in ("system-prompt", "text", "thinking"):
        return len(part.content)
    if kind == "tool-call":
        return len(part.tool_name) + len(part.args_as_json_str())
    if kind in ("tool-return", "retry-prompt"):
        return len(part.tool_name or "") + len(part.model_response_str())
    return len(str(part))  # anything else: its text form


def message_chars(message: Any) -> int:
    """About how many characters of text `message` puts in a request: its parts' text, tool calls' arguments and
    results, a fixed amount per image or file. Its `str` (a dataclass repr) is two to three times that for short
    messages, which made compression start well before the history filled the window."""
    parts = getattr(message, "parts", None)
    if parts is None:
        return len(str(message))
    return sum(_part_chars(part) + _PART_CHARS for part in parts)


def history_chars(messages: Iterable[object]) -> int:
    """The messages' size in characters of text (`message_chars`), for size estimates; each is measured once."""
    total = 0
    for message in messages:
        size = _CHARS.get(message)
        if size is None:
            size = message_chars(message)
            _CHARS.put(message, size)
        total += size
    return total
