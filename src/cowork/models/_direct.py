"""pydantic-ai's `direct.model_request_stream`, with its one walk of the whole history done per new message.

Before every request `direct.model_request_stream` breaks chat-template special tokens in the history (a
zero-width joiner inside each, so text from a file or a web page cannot become a control token) for the models
whose profile asks for it: every open-weight model, that is every local one. It walks every part of every message
again on each request, a cost that grew with the session. `request_stream` does the same preparation in the same
order, but remembers each message's broken form by the message's identity (`IdentityMemo`), so a message is
walked once. The rest is pydantic-ai's own code, called as `direct` calls it; a history holding a retry part takes
pydantic-ai's full preparation exactly as `direct` does.

`tests/models/test_wire_equivalence.py` checks the request bytes against `direct.model_request_stream`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from pydantic_ai import direct, models
from pydantic_ai._special_tokens import break_special_tokens_in_messages
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryFeedbackPart, RetryPromptPart
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models._batch_model import check_resumable
from pydantic_ai.models._request_timeout import open_request_stream
from pydantic_ai.settings import ModelSettings

from ._memo import IdentityMemo

__all__ = ["request_stream"]

_Broken = tuple[ModelMessage | None]
"""A message's broken form, or `(None,)` when breaking left it as it was (a value must not refer to its key)."""

_BROKEN: IdentityMemo[IdentityMemo[_Broken]] = IdentityMemo()
"""Per model (the break reads the model's profile), per message."""


def request_stream(
    model: Model,
    messages: Sequence[ModelMessage],
    settings: ModelSettings | None,
    params: ModelRequestParameters,
) -> AbstractAsyncContextManager[StreamedResponse]:
    """`direct.model_request_stream(model, messages, ..., instrument=False)`, walking each message once."""
    check_resumable(model, messages)
    params = direct._ensure_instruction_parts(messages, params)
    history = models._without_model_settings_deltas(list(messages))
    if any(
        isinstance(part, RetryFeedbackPart | RetryPromptPart)
        for message in history
        if isinstance(message, ModelRequest)
        for part in message.parts
    ):
        prepared = model.prepare_messages(history, models._with_framing_announcement(params, settings))
    else:
        prepared = _broken(model, history)
    return open_request_stream(model, prepared, settings, params)


def _broken(model: Model, history: list[ModelMessage]) -> list[ModelMessage]:
    try:
        profile = model.profile
    except NotImplementedError:
        return history  # a router prepares the messages for each model it sends them to
    if not profile.get("may_tokenize_special_tokens_in_content", False):
        return history
    memo = _BROKEN.get(model)
    if memo is None:
        memo = IdentityMemo()
        _BROKEN.put(model, memo)
    out = []
    for message in history:
        entry = memo.get(message)
        if entry is None:
            (broken,) = break_special_tokens_in_messages([message], profile, model.accepts_stateless_artifacts)
            entry = (None if broken is message else broken,)
            memo.put(message, entry)
        out.append(message if entry[0] is None else entry[0])
    return out
