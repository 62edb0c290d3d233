"""The skill tool: load a skill's instructions with its other files listed; unknown names are errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cowork.policy import PathPolicy
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._skill import SkillTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def load(ws: Path, home: Path | None = None, **arguments: Any) -> str:
    tool = SkillTool()
    ctx = ToolContext(workspace=ws, paths=PathPolicy.build(ws, home=home), home=home)
    return await tool.run(tool.parse(arguments), ctx)


@pytest.mark.anyio
async def test_a_builtin_skill_returns_its_body_without_front_matter(ws: Path) -> None:
    out = await load(ws, name="spreadsheet")

    assert out.startswith('<skill name="spreadsheet" source="builtin">\n# Spreadsheets (.xlsx and .csv)\n')
    assert "triggers:" not in out and "\n---\n" not in out
    assert out.endswith("\n(This skill has no other files.)\n</skill>")


@pytest.mark.anyio
async def test_a_workspace_skill_lists_its_other_files(ws: Path) -> None:
    folder = ws / ".cowork" / "skills" / "brand"
    (folder / "templates").mkdir(parents=True)
    (folder / "__pycache__").mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: brand\ndescription: House style\n---\n\nUse templates/letter.docx.\n", encoding="utf-8"
    )
    (folder / "templates" / "letter.docx").write_bytes(b"PK")
    (folder / "check.py").write_text("print(1)\n", encoding="utf-8")
    (folder / ".DS_Store").write_bytes(b"")
    (folder / "__pycache__" / "check.pyc").write_bytes(b"")

    out = await load(ws, name="brand")

    assert out == (
        '<skill name="brand" source="workspace">\n'
        "Use templates/letter.docx.\n"
        f"\nOther files in this skill's folder {folder.resolve()}/ (read them with read when needed):\n"
        "- check.py\n"
        "- templates/letter.docx\n"
        "</skill>"
    )


@pytest.mark.anyio
async def test_workspace_and_user_skills_override_builtin_ones_case_insensitively(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "skills" / "pdf").mkdir(parents=True)
    (home / "skills" / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Mine\n---\nUser PDF rules.\n", encoding="utf-8"
    )

    out = await load(ws, home=home, name="PDF")

    assert out.startswith('<skill name="pdf" source="user">\nUser PDF rules.')


@pytest.mark.anyio
async def test_an_unknown_name_lists_the_available_skills(ws: Path) -> None:
    with pytest.raises(ToolError, match=r"No skill is named 'excel'. Available skills: (\w+, ){3}\w+\.$"):
        await load(ws, name="excel")


@pytest.mark.anyio
async def test_an_unknown_name_mentions_a_broken_skill_of_that_name(ws: Path) -> None:
    folder = ws / ".cowork" / "skills" / "charts"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("no front matter\n", encoding="utf-8")

    with pytest.raises(ToolError, match=r"folder of that name exists but could not be loaded: .*must start with"):
        await load(ws, name="charts")


@pytest.mark.anyio
async def test_a_skill_md_that_broke_since_discovery_is_an_error(ws: Path) -> None:
    skill_md = ws / ".cowork" / "skills" / "flaky" / "SKILL.md"
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text("---\nname: flaky\ndescription: d\n---\nbody\n", encoding="utf-8")
    assert (await load(ws, name="flaky")).endswith("body\n\n(This skill has no other files.)\n</skill>")
    before = skill_md.stat()
    # Same size, same modification time: the cached discovery still lists it; loading must notice.
    skill_md.write_text("+++\nname: flaky\ndescription: d\n---\nbody\n", encoding="utf-8")
    os.utime(skill_md, ns=(before.st_atime_ns, before.st_mtime_ns))

    with pytest.raises(ToolError, match="The skill 'flaky' has become invalid"):
        await load(ws, name="flaky")
    skill_md.unlink()
    with pytest.raises(ToolError, match="No skill is named 'flaky'"):
        await load(ws, name="flaky")


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors(ws: Path) -> None:
    with pytest.raises(ToolError, match="name"):
        await load(ws, name="")
    with pytest.raises(ToolError, match="Extra inputs"):
        await load(ws, name="pdf", path="x")


def test_skill_has_no_side_effects() -> None:
    assert SkillTool().side_effects_of({"name": "pdf"}) is False
