"""JSON-RPC 2.0 framing."""

from __future__ import annotations

import pytest

from cowork.protocol import ErrorCode, Invalid, ProtocolError, Request, error_response, parse_frame


def test_single_request_and_notification() -> None:
    frame = parse_frame('{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}')
    assert not frame.is_batch
    assert frame.items == [Request(method="ping", params={}, id="a", is_notification=False)]
    note = parse_frame('{"jsonrpc":"2.0","method":"ping"}').items[0]
    assert isinstance(note, Request) and note.is_notification and note.id is None


def test_null_id_is_a_request_not_a_notification() -> None:
    item = parse_frame('{"jsonrpc":"2.0","id":null,"method":"ping"}').items[0]
    assert isinstance(item, Request) and not item.is_notification


@pytest.mark.parametrize(
    "frame",
    [
        '{"id":1,"method":"ping"}',
        '{"jsonrpc":"1.0","id":1,"method":"ping"}',
        '{"jsonrpc":"2.0","id":true,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1,"method":""}',
        '{"jsonrpc":"2.0","id":1,"method":5}',
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
        '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
        "7",
    ],
)
def test_invalid_requests(frame: str) -> None:
    (item,) = parse_frame(frame).items
    assert isinstance(item, Invalid)
    assert item.error.code == ErrorCode.INVALID_REQUEST


def test_invalid_request_keeps_a_readable_id() -> None:
    (item,) = parse_frame('{"jsonrpc":"1.0","id":12,"method":"ping"}').items
    assert isinstance(item, Invalid) and item.id == 12


def test_parse_error_and_empty_batch() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_frame("{oops")
    assert info.value.code == ErrorCode.PARSE_ERROR and info.value.rpc_code == -32700
    with pytest.raises(ProtocolError) as info:
        parse_frame("[]")
    assert info.value.code == ErrorCode.INVALID_REQUEST


def test_deeply_nested_json_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_frame("[" * 100_000 + "]" * 100_000)
    assert info.value.code == ErrorCode.PARSE_ERROR


def test_error_object_shape() -> None:
    error = ProtocolError(ErrorCode.BUSY, "busy now", details={"operationId": "op_1"})
    assert error_response(3, error) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32000,
            "message": "busy now",
            "data": {"code": "busy", "source": "server", "details": {"operationId": "op_1"}},
        },
    }
