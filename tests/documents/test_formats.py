"""Choosing the converter: by extension, checked by signature; the parsing libraries load only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cowork.documents import FORMATS, DocumentError, convert, format_for, legacy_format_for


def test_formats_by_extension_case_insensitive() -> None:
    assert [entry.kind for entry in FORMATS] == ["pdf", "docx", "xlsx", "pptx"]
    found = {name: entry.kind if (entry := format_for(name)) else None for name in ("a.PDF", "b.xlsm", "c.txt", "d")}
    assert found == {"a.PDF": "pdf", "b.xlsm": "xlsx", "c.txt": None, "d": None}
    legacy = legacy_format_for("old.XLS")
    assert legacy is not None and (legacy.label, legacy.target) == ("legacy Excel workbook (.xls)", "xlsx")
    assert legacy_format_for("new.xlsx") is None


def test_a_file_without_the_signature_its_extension_claims_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "random.docx"
    path.write_bytes(bytes(range(256)))

    with pytest.raises(DocumentError, match=r"^This is not a valid Word document \(\.docx\): it does not start"):
        convert(path)


def test_an_unknown_extension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello", encoding="utf-8")

    with pytest.raises(
        DocumentError, match=r"^\.txt is not a format read here \(\.pdf, \.docx, \.xlsx, \.xlsm, \.pptx\)"
    ):
        convert(path)


def test_importing_the_package_and_the_read_tool_loads_no_parsing_library() -> None:
    code = (
        "import json, sys, cowork.documents, cowork.tools._read; "
        "print(json.dumps([m for m in ('pypdf', 'openpyxl', 'docx', 'pptx', 'lxml') if m in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)

    assert json.loads(result.stdout) == []
