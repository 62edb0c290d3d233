"""`parse_event`: a client's reading of `session/event` never raises, whatever a (newer) server sends."""

from __future__ import annotations

from typing import Any

import pytest

from cowork.protocol import SessionEvent, ToolCall, UnknownEvent, UnknownPayload, parse_event

from ..clients.samples import OP, T0, one_of_each, wire


@pytest.mark.parametrize("payload", one_of_each(), ids=lambda p: p.event_type)
def test_every_known_type_is_read_as_its_session_event(payload: Any) -> None:
    params = wire(7, payload.event_type, payload.wire())
    event = parse_event(params)
    assert event == SessionEvent.model_validate(params) and type(event.payload) is type(payload)


def test_a_type_this_client_does_not_know_keeps_its_envelope_and_raw_payload() -> None:
    event = parse_event(wire(8, "hologram", {"operationId": OP, "shape": "cube"}))
    assert event == UnknownEvent(
        session_id="ses_1",
        seq=8,
        ts=T0,
        type="hologram",
        payload=UnknownPayload(type="hologram", data={"operationId": OP, "shape": "cube"}, problem=None),
    )
    assert event.payload.operation_id == OP  # so a client can tell whose it is, as for known payloads


def test_a_known_type_that_does_not_validate_says_why() -> None:
    event = parse_event(wire(9, "tool_call", {"operationId": OP, "step": 1, "toolCallId": "t", "name": "read"}))
    assert isinstance(event, UnknownEvent) and event.seq == 9 and event.type == "tool_call"
    assert event.payload.problem == "arguments: Field required"
    good = ToolCall(operation_id=OP, step=1, tool_call_id="t", name="read", arguments={}).wire()
    assert isinstance(parse_event(wire(9, "tool_call", good)), SessionEvent)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"type": 5, "payload": []},
        {"sessionId": "s", "seq": True, "ts": "yesterday", "type": "usage", "payload": "x"},
        {"sessionId": "s", "seq": 0, "ts": T0.isoformat(), "type": "log", "payload": {"text": "x"}},
    ],
)
def test_a_malformed_envelope_is_unknown_too_never_an_exception(params: dict[str, Any]) -> None:
    event = parse_event(params)
    assert isinstance(event, UnknownEvent) and event.seq == 0  # it cannot be placed in the log
    assert event.payload.data == (params["payload"] if isinstance(params.get("payload"), dict) else {})
