"""The toolbox in real turns: the `bash` tool's python3 is the toolbox's, read-only inside the sandbox, while the
rest of Cowork's home stays masked; off by configuration, commands run as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cowork.config import workspace_may_set
from cowork.protocol import OperationStatus, SubsystemHealth
from cowork.sandbox import find_bwrap
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockResponse, bash_step
from cowork.toolbox import Toolbox

pytestmark = pytest.mark.anyio

MAKE_XLSX = """python3 -c "
import openpyxl, docx, pptx, pypdf, pdfplumber, reportlab, matplotlib
book = openpyxl.Workbook(); sheet = book.active
sheet['A1'], sheet['A2'], sheet['A3'] = 2, 3, '=SUM(A1:A2)'
book.save('sums.xlsx')
" """


def read_cell(toolbox: Toolbox, book: Path, cell: str) -> str:
    """A cell as openpyxl reads it, with the toolbox's own interpreter (Cowork's environment need not have it)."""
    read = f"import openpyxl, sys; print(openpyxl.load_workbook(sys.argv[1]).active[{cell!r}].value)"
    done = subprocess.run([toolbox.interpreter, "-c", read, book], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def harness_for(home: Path, workspace: Path, mock_llm: MockLLMServer) -> CoreHarness:
    return CoreHarness(
        home, workspace, openai_base_url=mock_llm.openai_base_url, anthropic_base_url=mock_llm.anthropic_base_url
    )


async def run_turn(harness: CoreHarness, env: dict[str, str] | None = None) -> None:
    """One turn running the script's commands sandboxed, without asking (auto-run; --yolo would lift the sandbox)."""
    core = await harness.core(env={"COWORK_TOOLS__APPROVAL_MODE": "auto-run", **(env or {})})
    sid = await harness.session(core)
    op = await harness.start(core, sid, "go")
    await harness.status(sid, op, OperationStatus.DONE)


@pytest.mark.slow
@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (apt install bubblewrap)")
async def test_sandboxed_commands_use_the_toolbox_and_still_cannot_see_cowork_s_home(
    built_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    (built_home / "auth").mkdir(exist_ok=True)
    (built_home / "auth" / "token").write_text("secret-token\n")
    toolbox = Toolbox.of_home(built_home)
    probe = (
        f'echo "python=$(command -v python3) env=$COWORK_PYTHON" > probe.txt; '
        f"cat {built_home}/auth/token >> probe.txt 2>&1; test -s {built_home}/cowork.db && echo db-readable >> probe.txt; "
        f"touch {toolbox.env}/planted >> probe.txt 2>&1; echo end >> probe.txt"
    )
    (workspace / "probe.sh").write_text(probe)  # a script: naming the paths in the command would ask first
    mock_llm.set_script([bash_step(MAKE_XLSX), bash_step("bash probe.sh"), MockResponse(text="done")])
    harness = harness_for(built_home, workspace, mock_llm)
    try:
        await run_turn(harness)
        core = harness.cores[0]
        entry = next(s for s in (await core.health()).subsystems if s.name == "toolbox")
        assert entry == SubsystemHealth(name="toolbox", status="ready")
    finally:
        await harness.close()

    assert read_cell(toolbox, workspace / "sums.xlsx", "A3") == "=SUM(A1:A2)"
    lines = (workspace / "probe.txt").read_text().splitlines()
    assert lines[0] == f"python={toolbox.interpreter.parent}/python3 env={toolbox.interpreter}"
    assert "secret-token" not in "\n".join(lines) and "No such file" in lines[1]
    assert "db-readable" not in lines  # the database (and the rest of the home) stay masked
    assert "Read-only file system" in lines[-2] and not (toolbox.env / "planted").exists()


@pytest.mark.slow
async def test_a_toolbox_turned_off_leaves_commands_as_before(
    built_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([bash_step('echo "$PATH|${COWORK_PYTHON-unset}" > env.txt'), MockResponse(text="done")])
    harness = harness_for(built_home, workspace, mock_llm)
    try:
        await run_turn(harness, env={"COWORK_TOOLS__TOOLBOX__ENABLED": "false"})
        health = await harness.cores[0].health()
    finally:
        await harness.close()
    path, python = (workspace / "env.txt").read_text().strip().split("|")
    assert "toolbox" not in path and python == "unset"
    toolbox = next(s for s in health.subsystems if s.name == "toolbox")
    assert toolbox.status == "disabled" and "enabled = false" in (toolbox.reason or "")


async def test_install_never_installs_nothing_and_health_says_disabled(
    harness: CoreHarness, mock_llm: MockLLMServer, workspace: Path
) -> None:
    mock_llm.set_script([bash_step('echo "$PATH|${COWORK_PYTHON-unset}" > env.txt'), MockResponse(text="done")])
    await run_turn(harness, env={"COWORK_TOOLS__TOOLBOX__INSTALL": "never"})
    core = harness.cores[0]
    await core.warm_up()  # where a server starts the background install
    assert not (harness.home / "toolbox").exists()
    path, python = (workspace / "env.txt").read_text().strip().split("|")
    assert "toolbox" not in path and python == "unset"
    toolbox = next(s for s in (await core.health()).subsystems if s.name == "toolbox")
    assert toolbox == SubsystemHealth(
        name="toolbox",
        status="disabled",
        reason="Not installed (tools.toolbox.install = never): run `cowork toolbox install`.",
    )


def test_a_workspace_cannot_configure_the_toolbox() -> None:
    assert not workspace_may_set("tools.toolbox.enabled") and not workspace_may_set("tools.toolbox.install")
