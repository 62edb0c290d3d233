"""Real turns make each document format through its skill's code: the scripted model runs the skill's first pattern
through the sandboxed `bash` tool (`python3 - <<'EOF'`), and the file in the workspace opens with an independent reader
and holds what the pattern asked for."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no type hints
import pytest

from cowork.sandbox import find_bwrap
from cowork.testing.mockllm import MockLLMServer, MockResponse, bash_step
from tests.toolbox.test_bash_toolbox import harness_for, run_turn
from tests.toolbox.test_skill_snippets import (
    check_report_docx,
    check_report_pdf,
    check_review_pptx,
    check_sales_xlsx,
    skill_snippets,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (apt install bubblewrap)"),
]

_BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
SPREADSHEET_SKILL = (Path(__file__).resolve().parents[2] / "src/cowork/skills/builtin/spreadsheet/SKILL.md").read_text()

FORMATS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "spreadsheet": ("out/sales.xlsx", check_sales_xlsx),  # formula cells hold formulas, the chart is there
    "document": ("out/report.docx", check_report_docx),  # headings, the table's rows
    "slides": ("out/review.pptx", check_review_pptx),  # slide titles, notes, the table, the picture
    "pdf": ("out/report.pdf", check_report_pdf),  # the pages' text
}


@pytest.mark.parametrize("skill", FORMATS)
async def test_a_turn_makes_the_format_with_the_skill_s_code_in_the_sandbox(
    built_home: Path, workspace: Path, mock_llm: MockLLMServer, skill: str
) -> None:
    made, check = FORMATS[skill]
    snippet = skill_snippets(skill)[0]
    assert not snippet.needs and made in snippet.writes
    mock_llm.set_script([bash_step(snippet.heredoc()), MockResponse(text="done")])
    harness = harness_for(built_home, workspace, mock_llm)
    try:
        await run_turn(harness)
    finally:
        await harness.close()

    tool_result = mock_llm.requests[-1].messages[-1]  # what the model was told, to explain a failure
    assert (workspace / made).is_file(), tool_result
    check(workspace / made)


@pytest.mark.skipif(
    shutil.which("soffice") is None, reason="LibreOffice is not installed (scripts/_system_packages.sh installs it)"
)
async def test_libreoffice_recalculates_the_workbook_in_the_sandbox(
    built_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    """The skill's recalculation command, as the model would run it after its pattern, inside the sandbox (where the
    home folder is read-only): the copy carries the formulas' values, which openpyxl never computes."""
    recalculate = _BASH_BLOCK.findall(SPREADSHEET_SKILL)
    assert len(recalculate) == 1 and "soffice" in recalculate[0]
    mock_llm.set_script(
        [
            bash_step(skill_snippets("spreadsheet")[0].heredoc()),
            bash_step(recalculate[0].strip()),
            MockResponse(text="done"),
        ]
    )
    harness = harness_for(built_home, workspace, mock_llm)
    try:
        await run_turn(harness)
    finally:
        await harness.close()
    copy = workspace / "out" / "recalculated" / "sales.xlsx"
    assert copy.is_file(), mock_llm.requests[-1].messages[-1]
    values = openpyxl.load_workbook(copy, data_only=True)["Sales"]
    formulas = openpyxl.load_workbook(workspace / "out" / "sales.xlsx")["Sales"]
    for row in (2, 3, 4):
        price, units = values[f"B{row}"].value, values[f"C{row}"].value
        assert values[f"E{row}"].value == pytest.approx(price * units)
        assert formulas[f"E{row}"].value == f"=B{row}*C{row}"  # the original is left as it was
    total = sum(values[f"E{row}"].value for row in (2, 3, 4))
    assert values["E5"].value == pytest.approx(total)
    assert values["F2"].value == pytest.approx(values["E2"].value / total)
