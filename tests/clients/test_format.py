"""The formatting the CLI and the TUI share: one-line tool summaries, sizes, money, todos, the unknown-event line."""

from __future__ import annotations

from cowork.clients import format as fmt
from cowork.protocol import Todo, ToolResult, UnknownPayload


def result(content: str, *, error: bool = False) -> ToolResult:
    return ToolResult(operation_id="o", step=1, tool_call_id="t", name="read", is_error=error, content=content)


def test_arguments_fit_one_line() -> None:
    assert fmt.summarize_arguments({"filePath": "a.md", "limit": 20}) == "filePath=a.md, limit=20"
    assert fmt.summarize_arguments({"command": "ls\npwd"}) == "command=ls pwd"
    assert fmt.summarize_arguments({"text": "x" * 100}, width=10) == "text=xxxx…"


def test_results_are_summarised_by_size_or_their_first_error_line() -> None:
    assert fmt.result_size("") == "0 lines, 0 chars"
    assert fmt.result_size("one\ntwo") == "2 lines, 7 chars"
    assert fmt.result_summary(result("a\nb\n"), 80) == "2 lines, 4 chars"
    assert fmt.result_summary(result("no such file: a.md\nmore", error=True), 7) == "no such"
    assert fmt.result_summary(result("", error=True), 80) == "error"


def test_money_and_todos() -> None:
    assert (fmt.money(0.04213), fmt.money(1.5, 2)) == ("$0.0421", "$1.50")
    assert (fmt.money(0.00004), fmt.money(0.0), fmt.money(0.001, 2)) == ("<$0.0001", "$0.0000", "<$0.01")
    # An unknown price is said in words, never as `$0.0000+?`.
    assert fmt.cost(0.0, known=False) == "price unknown"
    assert fmt.cost(0.0123, known=False) == "$0.0123 + price unknown"
    assert fmt.cost(0.0123, known=True) == "$0.0123"


def test_shortening_never_cuts_a_word() -> None:
    text = "Read a file from the workspace, with line numbers, paging through large ones"
    short = fmt.shorten(text, 40)
    assert short == "Read a file from the workspace, with…" and len(short) <= 40
    assert fmt.shorten("short  text\n here", 40) == "short text here"
    assert fmt.shorten("x" * 50, 10) == "x" * 9 + "…"
    todos = [Todo(content="Read", status="completed"), Todo(content="Fix", status="in_progress", active_form="Fixing")]
    assert fmt.render_todos(todos, indent="  ").plain == "  ✔ Read\n  ◐ Fixing\n"


def test_an_unknown_event_is_one_neutral_line() -> None:
    assert fmt.unknown_event(UnknownPayload(type="hologram")).plain == "· event hologram"
    line = fmt.unknown_event(UnknownPayload(type="tool_call", problem="step: Field required"))
    assert line.plain == "· event tool_call (unreadable: step: Field required)" and line.style == "dim"
