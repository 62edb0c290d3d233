"""Transcript helpers: typed payloads, stable names for generated ids, default fields left out."""

from __future__ import annotations

from datetime import UTC, datetime

from cowork.protocol import ModelStreamChunk, OperationStatus, OperationStatusChanged, SessionEvent, UserMessage
from cowork.testing.transcripts import payloads, transcript

OP = "op_0123456789abcdef0123"
OTHER = "op_fedcba9876543210fedc"


def event(seq: int, payload: UserMessage | OperationStatusChanged | ModelStreamChunk) -> SessionEvent:
    return SessionEvent.model_validate(
        {"sessionId": "s", "seq": seq, "ts": datetime.now(UTC), "type": payload.event_type, "payload": payload.wire()}
    )


EVENTS = [
    event(1, UserMessage(operation_id=OP, message_id="msg_0123456789abcdef0123", text="hi", client_message_id="c")),
    event(2, OperationStatusChanged(operation_id=OTHER, status=OperationStatus.RUNNING)),
    event(3, OperationStatusChanged(operation_id=OP, status=OperationStatus.DONE)),
]


def test_payloads_are_typed_and_filtered() -> None:
    statuses = payloads(EVENTS, OperationStatusChanged)
    assert [s.status for s in statuses] == [OperationStatus.RUNNING, OperationStatus.DONE]


def test_transcript_names_ids_in_order_of_appearance_and_skips() -> None:
    assert transcript(EVENTS) == [
        ("user_message", {"operation_id": "op1", "text": "hi"}),
        ("operation_status", {"operation_id": "op2", "status": "running"}),
        ("operation_status", {"operation_id": "op1", "status": "done"}),
    ]
    assert [t for t, _ in transcript(EVENTS, skip=["user_message"])] == ["operation_status", "operation_status"]


def test_consecutive_stream_chunks_of_one_step_show_as_one() -> None:
    chunks = [
        event(1, ModelStreamChunk(operation_id=OP, step=1, text="Hel")),
        event(2, ModelStreamChunk(operation_id=OP, step=1, text="lo")),
        event(3, ModelStreamChunk(operation_id=OP, step=2, text="Next")),
        event(4, OperationStatusChanged(operation_id=OP, status=OperationStatus.DONE)),
        event(5, ModelStreamChunk(operation_id=OP, step=2, text="After")),
    ]
    assert transcript(chunks) == [
        ("model_stream_chunk", {"operation_id": "op1", "step": 1, "text": "Hello"}),
        ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "Next"}),
        ("operation_status", {"operation_id": "op1", "status": "done"}),
        ("model_stream_chunk", {"operation_id": "op1", "step": 2, "text": "After"}),
    ]
