"""The `skill` tool: load a skill's instructions (its SKILL.md) and list the files that come with it."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from cowork.skills import DiscoveryResult, Skill, SkillFormatError, discover_skills, split_front_matter
from cowork.tools._base import Tool, ToolContext, ToolError
from cowork.tools._fsutil import run_blocking

__all__ = ["SkillParams", "SkillTool"]

MAX_LISTED_FILES = 200
_SKIPPED_DIRS = {"__pycache__", "node_modules", ".git"}


class SkillParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description='The skill\'s name as listed under "Available skills", e.g. "pdf".')


class SkillTool(Tool[SkillParams]):
    """Load a skill's instructions."""

    name = "skill"
    description = """Load a skill: expert instructions for a kind of task, such as creating a spreadsheet, a Word
document, a slide deck or a PDF.

The available skills are listed in your instructions under "Available skills", each with a description and
trigger words. Load the matching skill BEFORE you start such a task (before writing any code or file for
it), and follow its instructions: they hold hard-won guidance on libraries, pitfalls and how to check the
result.
- Load every skill that applies (a PDF report built from spreadsheet data needs pdf and spreadsheet).
- Load a skill once per conversation; its instructions stay in your context. Do not load skills that do
  not match the task.
- Returns the skill's instructions, then the other files in its folder (templates, scripts, references)
  with the folder's path: read the ones the instructions point you to with read.
- A name that matches no skill is an error listing the skills that exist; pick one of those or carry on
  without a skill. Do not invent skill names.
"""
    params = SkillParams

    async def run(self, params: SkillParams, ctx: ToolContext) -> str:
        return await run_blocking(lambda: _load_skill(params, ctx))


def _load_skill(params: SkillParams, ctx: ToolContext) -> str:
    found = discover_skills(ctx.workspace, ctx.home)
    skill = found.get(params.name)
    if skill is None:
        raise ToolError(_unknown(params.name, found))
    if skill.source == "workspace":
        ctx.read_path(str(skill.path))  # a project's skill obeys the same path rules as any project file
    try:
        text = skill.path.read_text(encoding="utf-8")
        _meta, body = split_front_matter(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"The skill {skill.name!r} cannot be read: {exc}.") from None
    except SkillFormatError as exc:
        raise ToolError(f"The skill {skill.name!r} has become invalid ({skill.path}: {exc}).") from None
    return _render(skill, body.rstrip())


def _unknown(name: str, found: DiscoveryResult) -> str:
    available = ", ".join(found.names()) or "none"
    message = f"No skill is named {name!r}. Available skills: {available}."
    broken = [p for p in found.problems if p.path.parent.name.casefold() == name.strip().casefold()]
    if broken:
        message += " A skill folder of that name exists but could not be loaded: " + "; ".join(map(str, broken))
    return message


def _other_files(skill: Skill) -> tuple[list[str], int]:
    folder = skill.folder
    files: list[str] = []
    total = 0
    for directory, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith("."))
        for filename in sorted(filenames):
            full = os.path.join(directory, filename)
            rel = os.path.relpath(full, folder).replace(os.sep, "/")
            if rel == "SKILL.md" or filename.startswith("."):
                continue
            total += 1
            if len(files) < MAX_LISTED_FILES:
                files.append(rel)
    return files, total


def _render(skill: Skill, body: str) -> str:
    files, total = _other_files(skill)
    out = [f'<skill name="{skill.name}" source="{skill.source}">', body or "(This skill has no instructions.)"]
    if files:
        out.append(f"\nOther files in this skill's folder {skill.folder}/ (read them with read when needed):")
        out += [f"- {rel}" for rel in files]
        if total > len(files):
            out.append(f"- ... and {total - len(files)} more")
    else:
        out.append("\n(This skill has no other files.)")
    out.append("</skill>")
    return "\n".join(out)
