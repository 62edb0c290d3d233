"""The document cache: one conversion while a file is unchanged, a new one when it changes, oldest dropped first."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cowork.documents import Document, DocumentCache, DocumentMeta


class CountingConverter:
    """Converts any file to its own text, and counts the calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, path: Path, *, checkpoint: Callable[[], None]) -> Document:
        self.calls.append(path.name)
        return Document(kind="pdf", text=path.read_text(encoding="utf-8"), parts=(), meta=DocumentMeta())


def test_an_unchanged_file_is_converted_once(tmp_path: Path) -> None:
    path = tmp_path / "a.pdf"
    path.write_text("first", encoding="utf-8")
    converter = CountingConverter()
    cache = DocumentCache(converter=converter)

    assert cache.get(path).text == "first"
    assert cache.get(path).text == "first"
    assert converter.calls == ["a.pdf"]

    path.write_text("second!", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    assert cache.get(path).text == "second!"
    assert converter.calls == ["a.pdf", "a.pdf"]


def test_least_recently_used_documents_are_dropped(tmp_path: Path) -> None:
    converter = CountingConverter()
    cache = DocumentCache(max_entries=2, converter=converter)
    paths = {}
    for name in ("a", "b", "c"):
        paths[name] = tmp_path / f"{name}.pdf"
        paths[name].write_text(name, encoding="utf-8")

    cache.get(paths["a"])
    cache.get(paths["b"])
    cache.get(paths["a"])  # a is now the most recent
    cache.get(paths["c"])  # drops b
    cache.get(paths["a"])
    cache.get(paths["b"])

    assert converter.calls == ["a.pdf", "b.pdf", "c.pdf", "b.pdf"]


def test_the_text_held_is_bounded_too(tmp_path: Path) -> None:
    converter = CountingConverter()
    cache = DocumentCache(max_chars=10, converter=converter)
    for name in ("a", "b"):
        (tmp_path / f"{name}.pdf").write_text(name * 8, encoding="utf-8")

    cache.get(tmp_path / "a.pdf")
    cache.get(tmp_path / "b.pdf")  # 16 characters in all: a goes
    cache.get(tmp_path / "b.pdf")
    cache.get(tmp_path / "a.pdf")

    assert converter.calls == ["a.pdf", "b.pdf", "a.pdf"]
