"""Hostile Office files: a zip bomb is refused before anything is unpacked, a lying ZIP directory gains nothing."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from cowork.documents import MAX_ZIP_MEMBERS, DocumentError, _limits, convert

from .files import declare_size, write_docx, zip_bomb


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    path = tmp_path / "bomb.docx"
    zip_bomb(path, size=20 * 1024 * 1024)
    assert path.stat().st_size < 100_000

    tracemalloc.start()
    try:
        with pytest.raises(DocumentError) as info:
            convert(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert str(info.value).startswith(
        "Refusing this Word document (.docx): its member 'word/document.xml' would unpack from "
    )
    assert "to 20,971,520 bytes" in str(info.value) and "zip bomb" in str(info.value)
    assert peak < 2 * 1024 * 1024


def test_a_member_that_inflates_past_its_declared_size_is_cut_there_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "liar.docx"
    zip_bomb(path, size=50 * 1024 * 1024)
    declare_size(path, "word/document.xml", 1000)  # small enough to pass the ratio check

    tracemalloc.start()
    try:
        with pytest.raises(DocumentError, match=r"Could not read this Word document \(\.docx\): it is corrupt"):
            convert(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 8 * 1024 * 1024


def test_the_total_unpacked_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "plan.docx"
    write_docx(path)
    monkeypatch.setattr(_limits, "MAX_ZIP_UNCOMPRESSED", 1000)

    with pytest.raises(
        DocumentError,
        match=r"Refusing this Word document \(\.docx\): it would unpack to [\d,]+ bytes \(the limit is 1,000\)",
    ):
        convert(path)


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "many.pptx"
    with zipfile.ZipFile(path, "w") as archive:
        for index in range(MAX_ZIP_MEMBERS + 1):
            archive.writestr(f"m{index}", b"")

    with pytest.raises(DocumentError, match=r"its ZIP container has 10,001 members"):
        convert(path)


def test_a_corrupt_zip_container_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.xlsx"
    path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 8)

    with pytest.raises(DocumentError, match=r"^The file is not a valid Excel workbook: its ZIP container is corrupt"):
        convert(path)
