"""The TUI's session state: what waits on a person, as live events announce it."""

from __future__ import annotations

from datetime import UTC, datetime

from cowork.clients.tui.state import SessionState
from cowork.protocol import ApprovalRequested, SessionEvent, UserMessage


def test_a_live_approval_keeps_the_security_flag() -> None:
    state = SessionState(session_id="ses_1", boundary=0)
    request = ApprovalRequested(
        request_id="r1",
        operation_id="op_1",
        tool_call_id="t1",
        name="bash",
        arguments={"command": "rm -rf ~"},
        reason="Deletes your home folder.",
        dangerous=True,
    )
    state.apply(
        SessionEvent(session_id="ses_1", seq=1, ts=datetime.now(UTC), type="approval_requested", payload=request)
    )
    approval = state.approvals["r1"]
    assert approval.dangerous and approval.reason == "Deletes your home folder."


def test_the_users_messages_that_started_a_turn_are_numbered_for_rewind() -> None:
    state = SessionState(session_id="ses_1")
    for seq, (text, steer) in enumerate((("first", False), ("more", True), ("second", False)), start=1):
        said = UserMessage(operation_id="op", message_id=f"m{seq}", text=text, client_message_id=f"c{seq}", steer=steer)
        state.apply(SessionEvent(session_id="ses_1", seq=seq, ts=datetime.now(UTC), type="user_message", payload=said))
    assert state.messages == ["first", "second"]
