"""The system prompt template gets every variable filled."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from cowork.prompts import PromptVariables, render_system_prompt


def test_every_variable_is_filled() -> None:
    text = render_system_prompt(
        PromptVariables(
            working_directory="/home/max/proj",
            output_directory="/home/max/out",
            uploads_directory="/home/max/out/uploads",
            model_name="anthropic:claude-sonnet-5-5",
            today=date(2026, 11, 21),
            user_name="Max",
            knowledge_cutoff="May 2026",
        )
    )
    assert "{{" not in text and "}}" not in text
    for expected in (
        "/home/max/proj",
        "/home/max/out",
        "/home/max/out/uploads",
        "Saturday, November 21, 2026",
        "anthropic:claude-sonnet-5-5",
        "You work with Max",
        "May 2026",
    ):
        assert expected in text


def test_without_a_user_name() -> None:
    text = render_system_prompt(PromptVariables("/w", "/w", "/w/uploads", "m", date(2026, 1, 1)))
    assert "You work with the user" in text


def test_the_skills_directories_are_named_in_order(tmp_path: Path) -> None:
    from cowork.prompts import skills_directories
    from cowork.skills import BUILTIN_SKILLS_DIR

    workspace, home = tmp_path / "proj", tmp_path / "home"
    where = skills_directories(workspace, home)
    assert where == (
        f"{workspace / '.cowork' / 'skills'} (project); {home / 'skills'} (user); {BUILTIN_SKILLS_DIR} (built-in)"
    )
    text = render_system_prompt(
        PromptVariables("/w", "/w", "/w/uploads", "m", date(2026, 1, 1), skills_directory=where)
    )
    assert f"- Skills directory: {where}\n" in text


def test_instruction_files_of_other_agents_apply(tmp_path: Path) -> None:
    from cowork.prompts import gather_prompt_extras

    workspace, home, secrets = tmp_path / "proj", tmp_path / "home", tmp_path / "secrets"
    for folder in (workspace, home, secrets):
        folder.mkdir()
    (workspace / "AGENT.md").write_text("remembered: tabs", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("Run `make check` before you finish.", encoding="utf-8")
    (workspace / "CLAUDE.md").symlink_to(workspace / "AGENTS.md")  # the usual setup: one file, two names
    (home / "CLAUDE.md").write_text("Answer in British English.", encoding="utf-8")
    text = gather_prompt_extras(workspace, home, with_skills=False)
    assert "remembered: tabs" in text
    assert text.count("Run `make check` before you finish.") == 1
    assert "### project: AGENTS.md" in text and "### user: CLAUDE.md" in text
    assert "Answer in British English." in text
    assert text.index("## Memory") < text.index("## Instructions for this project")


def test_an_instruction_file_linking_out_of_its_folder_is_not_read(tmp_path: Path) -> None:
    from cowork.prompts import gather_prompt_extras

    workspace, secrets = tmp_path / "proj", tmp_path / "secrets"
    workspace.mkdir()
    secrets.mkdir()
    (secrets / "key").write_text("sk-very-secret", encoding="utf-8")
    (workspace / "AGENTS.md").symlink_to(secrets / "key")
    (workspace / "AGENT.md").symlink_to(secrets / "key")
    assert "sk-very-secret" not in gather_prompt_extras(workspace, None, with_skills=False)
