"""Skill discovery on real folders: precedence, bad front matter, caching, and the built-in skills."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cowork.skills import (
    BUILTIN_SKILLS_DIR,
    Skill,
    SkillFormatError,
    discover_skills,
    load_skills,
    parse_skill,
    render_skill_list,
    split_front_matter,
)

BUILTIN = {"spreadsheet", "document", "slides", "pdf"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    root.mkdir()
    return root


def make_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_text(name: str, description: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n\nDo things.\n"


def test_builtin_skills_parse_and_are_discovered(ws: Path) -> None:
    found = discover_skills(ws, None)

    assert found.problems == ()
    assert {s.name for s in found.skills} == BUILTIN
    for skill in found.skills:
        assert skill.source == "builtin"
        assert skill.path == BUILTIN_SKILLS_DIR / skill.name / "SKILL.md"
        assert skill.triggers and len(skill.description) > 40
        text = skill.path.read_text(encoding="utf-8")
        _meta, body = split_front_matter(text)
        assert 40 <= len(text.splitlines()) <= 120
        assert 'python3 -c "import' in body  # each tells the model to check its packages first


def test_workspace_beats_user_beats_builtin(ws: Path, home: Path) -> None:
    make_skill(ws / ".cowork" / "skills", "pdf", skill_text("pdf", "Our house PDF rules"))
    make_skill(home / "skills", "my-pdf", skill_text("pdf", "The user's PDF rules"))
    make_skill(home / "skills", "memo", skill_text("memo", "Write memos", "triggers: [memo, note]\n"))
    make_skill(ws / ".cowork" / "skills", "deploy", skill_text("deploy", "Deploy the app"))

    found = discover_skills(ws, home)

    by_name = {s.name: s for s in found.skills}
    assert by_name["pdf"].description == "Our house PDF rules"
    assert by_name["pdf"].source == "workspace"
    assert (by_name["memo"].source, by_name["memo"].triggers) == ("user", ("memo", "note"))
    assert by_name["deploy"].source == "workspace"
    assert by_name["spreadsheet"].source == "builtin"
    assert found.names()[:2] == ["deploy", "pdf"]  # precedence order: workspace first
    assert found.problems == ()


def test_user_skills_shadow_builtin_and_home_none_skips_the_user_layer(ws: Path, home: Path) -> None:
    make_skill(home / "skills", "slides", skill_text("slides", "Company deck style"))

    assert discover_skills(ws, home).get("slides") is not None
    assert discover_skills(ws, home).get("SLIDES").source == "user"  # type: ignore[union-attr]
    assert discover_skills(ws, None).get("slides").source == "builtin"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# Just markdown\n", "must start with a '---' line"),
        ("---\nname: x\ndescription: y\n", "not closed"),
        ("---\nname: [unclosed\ndescription: y\n---\nbody\n", "invalid YAML front matter"),
        ("---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: no name\n---\nbody\n", "non-empty string `name`"),
        ("---\nname: nodesc\n---\nbody\n", "non-empty string `description`"),
        ("---\nname: 12\ndescription: numeric name\n---\n", "non-empty string `name`"),
        ("---\nname: t\ndescription: d\ntriggers: {a: 1}\n---\n", "`triggers` must be a list of strings"),
        ("---\nname: " + "n" * 65 + "\ndescription: d\n---\n", "longer than 64"),
    ],
)
def test_bad_front_matter_is_skipped_and_reported(ws: Path, text: str, problem: str) -> None:
    bad = make_skill(ws / ".cowork" / "skills", "broken", text)
    make_skill(ws / ".cowork" / "skills", "good", skill_text("good", "Works"))

    found = discover_skills(ws, None)

    assert found.get("good") is not None
    assert [p.path for p in found.problems] == [bad]
    assert problem in found.problems[0].message
    assert str(found.problems[0]).startswith(str(bad))


def test_invalid_utf8_and_duplicate_names_are_problems(ws: Path) -> None:
    root = ws / ".cowork" / "skills"
    (root / "binary").mkdir(parents=True)
    (root / "binary" / "SKILL.md").write_bytes(b"---\nname: \xff\n---\n")
    make_skill(root, "a", skill_text("twin", "First"))
    make_skill(root, "b", skill_text("Twin", "Second"))

    found = discover_skills(ws, None)

    assert found.get("twin").description == "First"  # type: ignore[union-attr]
    messages = sorted(p.message for p in found.problems)
    assert messages[0].startswith("another workspace skill is already named 'Twin'")
    assert messages[1].startswith("it cannot be read")


def test_folders_without_skill_md_and_hidden_folders_are_ignored(ws: Path) -> None:
    root = ws / ".cowork" / "skills"
    (root / "empty").mkdir(parents=True)
    make_skill(root, ".hidden", skill_text("hidden", "Should not load"))
    (root / "loose.md").write_text("not a folder", encoding="utf-8")

    found = discover_skills(ws, None)

    assert found.get("hidden") is None
    assert found.problems == ()


def test_a_workspace_skill_linking_outside_the_workspace_is_refused(ws: Path, tmp_path: Path) -> None:
    secret = make_skill(tmp_path / "elsewhere", "s", skill_text("leak", "Outside"))
    link = ws / ".cowork" / "skills" / "leak"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret.parent)

    found = discover_skills(ws, None)

    assert found.get("leak") is None
    assert "outside the workspace" in found.problems[0].message


def test_results_are_cached_until_a_skill_md_changes(ws: Path) -> None:
    root = ws / ".cowork" / "skills"
    path = make_skill(root, "one", skill_text("one", "First version"))

    first = discover_skills(ws, None)
    assert discover_skills(ws, None) is first

    path.write_text(skill_text("one", "Second version, longer"), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = discover_skills(ws, None)
    assert second.get("one").description == "Second version, longer"  # type: ignore[union-attr]

    make_skill(root, "two", skill_text("two", "Added"))
    assert discover_skills(ws, None).get("two") is not None

    (root / "two" / "SKILL.md").unlink()
    assert discover_skills(ws, None).get("two") is None


@pytest.mark.anyio
async def test_load_skills_runs_off_the_event_loop(ws: Path) -> None:
    found = await load_skills(ws, None)

    assert {s.name for s in found.skills} == BUILTIN


def test_front_matter_with_bom_crlf_and_string_triggers(tmp_path: Path) -> None:
    text = "\ufeff---\r\nname: memo\r\ndescription: >\r\n  Write   memos\r\ntriggers: memo\r\n---\r\n\r\n# Body\r\n"

    skill = parse_skill(text, tmp_path / "SKILL.md", "user")

    assert skill == Skill("memo", "Write memos", ("memo",), tmp_path / "SKILL.md", "user")
    assert split_front_matter(text)[1] == "# Body\r\n"
    with pytest.raises(SkillFormatError):
        split_front_matter("")


def test_render_skill_list() -> None:
    skills = [
        Skill("pdf", "Work with PDFs", ("pdf", "merge"), Path("/s/pdf/SKILL.md"), "builtin"),
        Skill("memo", "Write memos", (), Path("/s/memo/SKILL.md"), "user"),
    ]

    assert render_skill_list(skills) == "- **pdf**: Work with PDFs (triggers: pdf, merge)\n- **memo**: Write memos"
    assert render_skill_list([]) == ""
