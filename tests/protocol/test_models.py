"""The wire models: camelCase, tolerant of additions on read, strict on params, round-trippable."""

from __future__ import annotations

import typing
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from cowork.protocol import (
    EVENT_PAYLOADS,
    METHODS,
    NOTIFICATIONS,
    EventPayload,
    SessionEvent,
    ToolCall,
    TurnStartParams,
    UserMessage,
)

from ..clients.samples import one_of_each


def _all_models() -> list[type[BaseModel]]:
    """Every wire model: methods' params and results, notifications, event payloads, and every model nested in
    them (a nested nullable field without a default breaks a client just the same)."""
    roots: list[type[BaseModel]] = []
    for spec in METHODS.values():
        roots += [spec.params, spec.result]
    roots += [m for m, _ in NOTIFICATIONS.values()]
    roots += list(EVENT_PAYLOADS.values())
    seen: dict[type[BaseModel], None] = {}
    stack = list(roots)
    while stack:
        model = stack.pop(0)
        if model in seen:
            continue
        seen[model] = None
        for field in model.model_fields.values():
            for arg in _types_in(field.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    stack.append(arg)
    return list(seen)


def _types_in(annotation: object) -> list[object]:
    found = [annotation]
    for arg in typing.get_args(annotation):
        found += _types_in(arg)
    return found


@pytest.mark.parametrize("model", _all_models(), ids=lambda m: m.__name__)
def test_nullable_fields_have_defaults(model: type[BaseModel]) -> None:
    # Serialisation leaves out None values, so a nullable field without a default could not be read back.
    for name, field in model.model_fields.items():
        if field.is_required():
            assert "None" not in str(field.annotation), f"{model.__name__}.{name} is nullable but required"


def test_params_refuse_unknown_fields_results_ignore_them() -> None:
    with pytest.raises(ValidationError):
        TurnStartParams.model_validate({"sessionId": "s", "text": "t", "clientMessageId": "c", "colour": "red"})
    payload = UserMessage.model_validate(
        {"operationId": "o", "messageId": "m", "text": "t", "clientMessageId": "c", "addedLater": 1}
    )
    assert payload.text == "t"


def test_session_event_round_trip_picks_payload_by_type() -> None:
    event = SessionEvent(
        session_id="s",
        seq=3,
        ts=datetime(2026, 11, 21, tzinfo=UTC),
        type="tool_call",
        payload=ToolCall(operation_id="o", step=1, tool_call_id="t", name="glob", arguments={"pattern": "*"}),
    )
    wire = event.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["sessionId"] == "s" and wire["payload"]["toolCallId"] == "t"
    again = SessionEvent.model_validate(wire)
    assert again == event and isinstance(again.payload, ToolCall)


def test_session_event_type_must_match_payload() -> None:
    with pytest.raises(ValidationError):
        SessionEvent.model_validate(
            {"sessionId": "s", "seq": 1, "ts": "2026-11-21T00:00:00Z", "type": "usage", "payload": {"text": "x"}}
        )


def test_the_event_types_all_derive_from_the_one_union() -> None:
    classes = typing.get_args(EventPayload)
    assert list(EVENT_PAYLOADS.values()) == list(classes)  # the table, in the union's order
    assert list(EVENT_PAYLOADS) == [cls.__dict__["event_type"] for cls in classes]  # each class's own tag, unique
    # The `type` field accepts exactly those names (and the schema, hence docs/protocol.md, lists them).
    assert typing.get_args(SessionEvent.model_fields["type"].annotation) == tuple(EVENT_PAYLOADS)
    schema = SessionEvent.model_json_schema(by_alias=True)
    assert schema["properties"]["type"]["enum"] == list(EVENT_PAYLOADS)


@pytest.mark.parametrize("payload", one_of_each(), ids=lambda p: p.event_type)
def test_the_wire_format_is_the_envelope_with_an_untagged_payload(payload: EventPayload) -> None:
    event = SessionEvent(
        session_id="s", seq=1, ts=datetime(2026, 1, 1, tzinfo=UTC), type=payload.event_type, payload=payload
    )
    wire = event.wire()
    assert list(wire) == ["sessionId", "seq", "ts", "type", "payload"]
    assert wire["type"] == payload.event_type and wire["payload"] == payload.wire()
    assert not {"type", "eventType", "event_type"} & set(wire["payload"])
    assert SessionEvent.model_validate(wire) == event
