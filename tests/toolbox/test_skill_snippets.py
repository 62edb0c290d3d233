"""The document skills' code patterns run with the toolbox's interpreter, and what they write opens with an independent
reader (Cowork's own openpyxl, python-docx, python-pptx, pypdf) and holds what the pattern says it makes.

Every ```python block of a built-in document skill is a complete script run in a folder of its own. A block whose
first line is `# needs: out/a.pdf (...)` is run with those files copied from the earlier block that wrote them.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import docx
import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints
import pptx
import pytest
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pypdf import PdfReader

from cowork.skills import BUILTIN_SKILLS_DIR
from cowork.toolbox import Toolbox

SKILLS = ("spreadsheet", "document", "slides", "pdf")
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_OUT_LITERAL = re.compile(r"\"(out/[^\"{}]+\.\w+)\"")


@dataclass(frozen=True)
class Snippet:
    """One ```python block of a skill's SKILL.md."""

    skill: str
    number: int
    """1-based, in the order of the file."""
    code: str

    @property
    def needs(self) -> tuple[str, ...]:
        """The files an earlier block writes that this one reads (its `# needs:` first line)."""
        first = self.code.partition("\n")[0]
        return tuple(re.findall(r"out/[\w./-]+\w", first)) if first.startswith("# needs:") else ()

    @property
    def writes(self) -> tuple[str, ...]:
        """The files it names as plain `"out/..."` literals and doesn't need (f-string names are checked per skill)."""
        return tuple(sorted(set(_OUT_LITERAL.findall(self.code)) - set(self.needs)))

    def heredoc(self) -> str:
        """The block as one shell command, the way a model runs it through the `bash` tool."""
        return f"python3 - <<'EOF'\n{self.code}EOF"


def skill_snippets(skill: str) -> list[Snippet]:
    text = (BUILTIN_SKILLS_DIR / skill / "SKILL.md").read_text(encoding="utf-8")
    return [Snippet(skill, n, code) for n, code in enumerate(_BLOCK.findall(text), start=1)]


def files_under(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}


# --- what each pattern makes, opened with Cowork's own readers ---


def check_sales_xlsx(path: Path) -> None:
    ws = openpyxl.load_workbook(path)["Sales"]
    assert [c.value for c in ws[1]] == ["Product", "Price", "Units", "Shipped", "Revenue", "Share"]
    assert [(ws[f"E{r}"].data_type, ws[f"E{r}"].value) for r in (2, 3, 4)] == [
        ("f", "=B2*C2"),
        ("f", "=B3*C3"),
        ("f", "=B4*C4"),
    ]
    assert ws["F2"].value == "=E2/$E$5"
    assert [ws["A5"].value, ws["C5"].value, ws["E5"].value] == ["Total", "=SUM(C2:C4)", "=SUM(E2:E4)"]
    assert ws["A1"].font.b and ws["A1"].fill.fgColor.rgb.endswith("DDEBF7")
    assert (ws["B2"].number_format, ws["D2"].number_format, ws["F2"].number_format) == (
        '"$"#,##0.00',
        "yyyy-mm-dd",
        "0.0%",
    )
    assert ws.column_dimensions["A"].width == 14 and ws.freeze_panes == "A2"
    with zipfile.ZipFile(path) as book:
        charts = [name for name in book.namelist() if name.startswith("xl/charts/chart")]
        assert len(charts) == 1
        chart = book.read(charts[0]).decode()
    assert "<barChart>" in chart and "'Sales'!$E$2:$E$4" in chart and "'Sales'!$A$2:$A$4" in chart


def check_report_docx(path: Path) -> None:
    doc = docx.Document(str(path))
    outline = [(p.style.name, p.text) for p in doc.paragraphs if p.style is not None and "Head" in (p.style.name or "")]
    titles = [p.text for p in doc.paragraphs if p.style is not None and p.style.name == "Title"]
    assert titles == ["Quarterly report"]
    assert outline == [("Heading 1", "Summary"), ("Heading 1", "Figures by region")]
    bullets = [p.text for p in doc.paragraphs if p.style is not None and p.style.name == "List Bullet"]
    assert bullets == ["North is steady", "South needs a new distributor", "West doubled its pipeline"]
    (table,) = doc.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["Region", "Revenue", "Change"],
        ["North", "1,200.50", "+4%"],
        ["South", "980.00", "-2%"],
        ["West", "1,410.25", "+9%"],
    ]
    assert table.rows[0].cells[0].paragraphs[0].runs[0].bold
    section = doc.sections[0]
    assert section.header.paragraphs[0].text == "Quarterly report - Confidential"
    assert section.footer.paragraphs[0].text == "Prepared by the sales team"
    assert 'w:type="page"' in doc.element.xml  # the page break


def check_letter(path: Path, name: str, order: str, date: str) -> None:
    doc = docx.Document(str(path))
    assert [p.text for p in doc.paragraphs] == [f"Dear {name}", f"Your order {order} ships on {date}."]
    assert [(r.text, bool(r.bold)) for r in doc.paragraphs[0].runs] == [("Dear ", False), (name, True)]
    assert doc.tables[0].rows[0].cells[0].text == f"Order {order}"


def check_review_pptx(path: Path) -> None:
    deck = pptx.Presentation(str(path))
    slides = list(deck.slides)
    titles = [s.shapes.title.text if s.shapes.title is not None else None for s in slides]
    assert titles == [
        "2024 in review",
        "Revenue grew 47% in 2024",
        "Revenue by quarter",
        "Q4 was the strongest quarter",
    ]
    assert [s.slide_layout.name for s in slides] == ["Title Slide", "Title and Content", "Title Only", "Title Only"]
    notes = [
        s.notes_slide.notes_text_frame.text if s.has_notes_slide and s.notes_slide.notes_text_frame else ""
        for s in slides
    ]
    assert all(notes) and notes[0].startswith("Welcome")
    body = slides[1].placeholders[1].text_frame.paragraphs
    assert [(p.text, p.level) for p in body][:2] == [
        ("Four quarters of growth", 0),
        ("Q4 was the best quarter: 17.8 M$", 1),
    ]
    (table,) = [s.table for s in slides[2].shapes if s.has_table]
    assert [[table.cell(r, c).text for c in range(2)] for r in range(5)] == [
        ["Quarter", "Revenue (M$)"],
        ["Q1", "12.1"],
        ["Q2", "14.3"],
        ["Q3", "15.0"],
        ["Q4", "17.8"],
    ]
    assert [s.shape_type for s in slides[3].shapes].count(MSO_SHAPE_TYPE.PICTURE) == 1


def check_report_pdf(path: Path) -> None:
    pages = PdfReader(path).pages
    assert len(pages) == 2
    first = pages[0].extract_text()
    assert "Quarterly report" in first and "R&D <costs> were flat" in first and "1,410.25" in first
    assert "Outlook" in pages[1].extract_text()


def check_spreadsheet(files: dict[str, Path], printed: dict[int, str]) -> None:
    check_sales_xlsx(files["out/sales.xlsx"])
    assert "E2 =B2*C2 (not calculated yet)" in printed[2]  # openpyxl's file has no cached values
    assert "C2 120" in printed[2]


def check_document(files: dict[str, Path], printed: dict[int, str]) -> None:
    check_report_docx(files["out/report.docx"])
    assert sorted(name for name in files if name.startswith("out/letters/")) == [
        "out/letters/letter-Ada-Lovelace.docx",
        "out/letters/letter-Alan-Turing.docx",
    ]
    check_letter(files["out/letters/letter-Ada-Lovelace.docx"], "Ada Lovelace", "A-17", "2 May")
    check_letter(files["out/letters/letter-Alan-Turing.docx"], "Alan Turing", "B-42", "9 May")
    assert "unfilled" not in printed[2]


def check_slides(files: dict[str, Path], printed: dict[int, str]) -> None:
    check_review_pptx(files["out/review.pptx"])
    assert files["out/revenue.png"].read_bytes().startswith(b"\x89PNG")


def check_pdf(files: dict[str, Path], printed: dict[int, str]) -> None:
    check_report_pdf(files["out/report.pdf"])
    merged = PdfReader(files["out/merged.pdf"]).pages
    assert len(merged) == 3 and "Board pack" in merged[0].extract_text() and "Outlook" in merged[2].extract_text()
    singles = sorted(name for name in files if name.startswith("out/pages/"))
    assert singles == [f"out/pages/page-00{n}.pdf" for n in (1, 2, 3)]
    assert all(len(PdfReader(files[name]).pages) == 1 for name in singles)
    assert "--- page 2 ---" in printed[3] and "West keeps growing." in printed[3]
    with files["out/tables.csv"].open(newline="", encoding="utf-8") as f:
        assert list(csv.reader(f))[:2] == [["Region", "Revenue"], ["North", "1,200.50"]]
    empty = PdfReader(files["out/form.pdf"]).get_fields() or {}
    assert sorted(empty) == ["agree", "city", "name"] and not empty["name"].get("/V")
    filled = PdfReader(files["out/form-filled.pdf"]).get_fields() or {}
    assert {name: field.get("/V") for name, field in filled.items()} == {
        "name": "Ada Lovelace",
        "city": "London",
        "agree": "/Yes",
    }


CHECKS = {"spreadsheet": check_spreadsheet, "document": check_document, "slides": check_slides, "pdf": check_pdf}


def run_snippet(toolbox: Toolbox, snippet: Snippet, folder: Path, home: Path) -> str:
    """Run one block as a script in `folder` with the toolbox first on PATH (as the `bash` tool has it); its stdout."""
    script = folder / f"{snippet.skill}-{snippet.number}.py"
    script.write_text(snippet.code, encoding="utf-8")
    env = {
        "PATH": f"{toolbox.interpreter.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),  # matplotlib keeps its font cache here, not in the tester's home
        "COWORK_PYTHON": str(toolbox.interpreter),
    }
    done = subprocess.run(
        ["python3", script.name], cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{snippet.skill} block {snippet.number} failed:\n{done.stderr}"
    return done.stdout


def test_every_document_skill_has_code_patterns_that_name_their_outputs() -> None:
    for skill in SKILLS:
        snippets = skill_snippets(skill)
        assert snippets, skill
        written: set[str] = set()
        for snippet in snippets:
            assert set(snippet.needs) <= written, f"{skill} block {snippet.number} needs what no earlier block writes"
            assert '"out/' in snippet.code, f"{skill} block {snippet.number} writes nothing into out/"
            written |= set(snippet.writes)


@pytest.mark.slow
@pytest.mark.parametrize("skill", SKILLS)
def test_a_skill_s_code_patterns_run_and_make_what_they_say(built_home: Path, tmp_path: Path, skill: str) -> None:
    toolbox = Toolbox.of_home(built_home)
    made_by: dict[str, Path] = {}  # file -> the folder of the block that wrote it
    printed: dict[int, str] = {}
    for snippet in skill_snippets(skill):
        folder = tmp_path / f"block-{snippet.number}"
        folder.mkdir()
        for need in snippet.needs:
            (folder / need).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(made_by[need] / need, folder / need)
        before = set(files_under(folder))
        printed[snippet.number] = run_snippet(toolbox, snippet, folder, tmp_path)
        new = set(files_under(folder)) - before
        assert set(snippet.writes) <= new, f"block {snippet.number} did not write {set(snippet.writes) - new}"
        made_by.update(dict.fromkeys((name for name in new if name.startswith("out/")), folder))
    CHECKS[skill]({name: folder / name for name, folder in made_by.items()}, printed)
