"""Following a file like `tail -F`: appended lines, half-written lines, rotation, re-creation, truncation."""

from __future__ import annotations

from pathlib import Path

from cowork.logs import Tail


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def test_appended_lines_and_a_line_still_being_written(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("one\ntwo\n", encoding="utf-8")
    with Tail(path) as tail:
        assert list(tail.lines()) == ["one", "two"]
        assert list(tail.lines()) == []
        append(path, "three\nfou")
        assert list(tail.lines()) == ["three"]
        append(path, "r\n")
        assert list(tail.lines()) == ["four"]


def test_rotation_reads_the_old_file_to_its_end_then_the_new_one(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("one\n", encoding="utf-8")
    with Tail(path) as tail:
        assert list(tail.lines()) == ["one"]
        append(path, "last in old\n")
        path.rename(tmp_path / "server.log.1")
        assert list(tail.lines()) == ["last in old"]  # no new file yet: wait for it
        path.write_text("first in new\n", encoding="utf-8")
        assert list(tail.lines()) == ["first in new"]
        append(path, "second in new\n")
        assert list(tail.lines()) == ["second in new"]


def test_a_file_that_appears_later_and_one_truncated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    with Tail(path) as tail:
        assert list(tail.lines()) == []
        path.write_text("hello\n", encoding="utf-8")
        assert list(tail.lines()) == ["hello"]
        path.write_text("", encoding="utf-8")  # truncated, same file
        assert list(tail.lines()) == []
        append(path, "again\n")
        assert list(tail.lines()) == ["again"]


def test_files_rotated_between_two_looks_are_read_in_order(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("a\n", encoding="utf-8")
    with Tail(path) as tail:
        assert list(tail.lines()) == ["a"]
        append(path, "b\n")
        # Two rotations before the next look: ours is server.log.2 by then, and server.log.1 came after it.
        path.rename(tmp_path / "server.log.2")
        path.write_text("c\n", encoding="utf-8")
        path.rename(tmp_path / "server.log.1")
        path.write_text("d\n", encoding="utf-8")
        assert list(tail.lines()) == ["b", "c", "d"]
