"""An answer's sources in the terminal: numbered across the operation in arrival order, each passage once, one dim
`Sources:` line after the answer (`TurnView`, the REPL's and `cowork run`'s), and the latest turn's from the log."""

from __future__ import annotations

import io
from typing import Any, Literal

from rich.console import Console

from cowork.clients.cli.render import TurnView
from cowork.clients.sources import Sources, operation_sources, source_label
from cowork.protocol import Citation, Citations, ReceivedPayload, UserMessage, parse_event

from .samples import wire

Origin = Literal["search", "backfill", "tool"]


def cited(op: str, *sources: tuple[int, str, str, Origin]) -> Citations:
    return Citations(
        operation_id=op,
        step=0,
        citations=[
            Citation(chunk_id=chunk, path=path, title=path, heading=heading, origin=origin)
            for chunk, path, heading, origin in sources
        ],
    )


def render(events: list[tuple[str, dict[str, Any]]], op: str = "op_a", sources: Sources | None = None) -> str:
    out = io.StringIO()
    view = TurnView(Console(file=out, width=200, color_system=None), op, sources=sources)
    for seq, (kind, payload) in enumerate(events, 1):
        view.handle(parse_event(wire(seq, kind, payload)))
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())  # (markdown pads its lines)


Cited = tuple[int, str, str, Origin]
LEAVE: Cited = (7, "docs/leave.md", "Holiday policy", "search")
HANDBOOK: Cited = (
    9,
    "handbook.md",
    "Employee handbook › Leave and absence › Holiday policy for part-time staff",
    "tool",
)


def test_the_sources_line_follows_the_answer_numbered_once_each_in_arrival_order() -> None:
    shown = render(
        [
            ("citations", cited("op_a", LEAVE).wire()),
            ("tool_call", {"operationId": "op_a", "step": 0, "toolCallId": "t1", "name": "searchDocuments",
                           "arguments": {"query": "part-time"}}),
            ("citations", cited("op_a", (7, "docs/leave.md", "Holiday policy", "tool"), HANDBOOK).wire()),
            ("citations", cited("op_other", (5, "elsewhere.md", "Not ours", "search")).wire()),
            ("assistant_message", {"operationId": "op_a", "step": 1, "messageId": "m", "text": "Twenty-five days."}),
            ("operation_status", {"operationId": "op_a", "status": "done"}),
        ]
    )  # fmt: skip
    assert shown == (
        "● searchDocuments(query=part-time)\n"
        "Twenty-five days.\n"
        "Sources: [1] docs/leave.md › Holiday policy · [2] handbook.md › … › Holiday policy for part-time staff\n"
    )


def test_no_citations_no_line_and_a_continued_turn_counts_on() -> None:
    done = ("operation_status", {"operationId": "op_a", "status": "done"})
    answer = ("assistant_message", {"operationId": "op_a", "step": 0, "messageId": "m", "text": "ok"})
    assert render([answer, done]) == "ok\n"
    before = Sources()
    before.add(cited("op_a", LEAVE))  # cited before the turn was interrupted (`/continue` passes them on)
    assert render([("citations", cited("op_a", HANDBOOK).wire()), answer, done], sources=before) == (
        "ok\nSources: [1] docs/leave.md › Holiday policy · [2] handbook.md › … › Holiday policy for part-time staff\n"
    )


def test_labels_are_one_clean_line_with_the_innermost_heading_kept() -> None:
    assert source_label("docs/leave.md", "") == "docs/leave.md"
    assert source_label("a\x1b[2J.md", "Intro\nmore") == "a\\x1b[2J.md › Intro more"
    assert source_label("h.md", "A › B › " + "word " * 20, heading_width=30) == "h.md › … › word word word word word…"


def test_the_latest_turns_sources_come_from_the_log() -> None:
    def said(op: str, steer: bool = False) -> UserMessage:
        return UserMessage(operation_id=op, message_id="m", text="q", client_message_id="c", steer=steer)

    log: list[ReceivedPayload] = [
        said("op_a"),
        cited("op_a", LEAVE),
        said("op_b"),
        cited("op_b", HANDBOOK),
        said("op_b", steer=True),  # steering the running turn: still op_b's answer
        cited("op_b", LEAVE, HANDBOOK),
    ]
    latest = operation_sources(log)
    assert [(s.number, s.citation.chunk_id) for s in latest] == [(1, 9), (2, 7)]
    assert latest.get(2) is not None and latest.get(3) is None and latest.get(0) is None
    assert [s.citation.chunk_id for s in operation_sources(log, "op_a")] == [7]
    assert len(operation_sources([*log, said("op_c")])) == 0  # the latest turn cited nothing
