"""History repair: every tool call gets a result, so any provider accepts the history."""

from __future__ import annotations

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from cowork.runtime import display_text, dump_message, load_message, repair
from cowork.runtime._history import INTERRUPTED_RESULT


def call(id_: str) -> ToolCallPart:
    return ToolCallPart(tool_name="glob", args={"pattern": "*"}, tool_call_id=id_)


def test_complete_history_is_untouched() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[call("a")]),
        ModelRequest(parts=[ToolReturnPart("glob", "x", "a")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    assert repair(history) == history


def test_missing_results_are_filled_after_the_response() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[call("a"), call("b")]),
    ]
    repaired = repair(history)
    assert len(repaired) == 3
    filler = repaired[2]
    assert isinstance(filler, ModelRequest)
    assert [(p.tool_call_id, p.content) for p in filler.parts] == [("a", INTERRUPTED_RESULT), ("b", INTERRUPTED_RESULT)]  # type: ignore[union-attr]


def test_partial_results_are_completed_before_new_user_text() -> None:
    history: list[ModelMessage] = [
        ModelResponse(parts=[call("a"), call("b")]),
        ModelRequest(parts=[ToolReturnPart("glob", "x", "a"), UserPromptPart("next question")]),
    ]
    repaired = repair(history)
    parts = repaired[1].parts
    assert [type(p).__name__ for p in parts] == ["ToolReturnPart", "ToolReturnPart", "UserPromptPart"]
    assert parts[0].tool_call_id == "b"  # type: ignore[union-attr]


def test_round_trip_and_display_text() -> None:
    response = ModelResponse(parts=[TextPart("Hello "), call("a"), TextPart("world")])
    assert load_message(dump_message(response)) == response
    assert display_text(response) == "Hello world"
    assert display_text(ModelRequest(parts=[UserPromptPart("question")])) == "question"
    assert display_text(ModelRequest(parts=[ToolReturnPart("glob", "x", "a")])) == ""
