"""Flow files: YAML written and read back equal, TOML read, errors that say where."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.automations import Flow, FlowFileError, dump_flow, load_flow, read_flow, write_flow

EVERYTHING = Flow.model_validate(
    {
        "name": "triage-issues",
        "description": "Look at new issues every morning and tell me about the urgent ones.",
        "inputs": {
            "repo": {"type": "string", "description": "owner/name"},
            "limit": {"type": "number", "default": 20},
            "labels": {"type": "array", "required": False},
        },
        "trigger": {"type": "cron", "expression": "0 9 * * 1-5", "timezone": "Europe/Paris", "catchUp": "all"},
        "steps": [
            {
                "id": "issues",
                "type": "mcpToolCall",
                "server": "github",
                "tool": "list_issues",
                "arguments": {"repo": "${input.repo}", "per_page": "${input.limit}", "state": None, "x": [1.5, True]},
            },
            {"id": "any", "type": "condition", "when": "${issues.items} != null and ${issues.total} > 0", "skip": 3},
            {
                "id": "triage",
                "type": "agentStep",
                "prompt": "Which of these are urgent?\n\n${issues.items}\n\nAnswer in one list — ünïcode too.\n",
                "model": "strong",
                "tools": ["read", "webSearch"],
                "output": "urgent",
            },
            {"id": "pause", "type": "delay", "seconds": 2.5},
            {
                "id": "tell",
                "type": "notification",
                "title": "Urgent issues in ${input.repo}",
                "body": "${urgent}",
                "tier": "urgent",
                "directOutput": True,
            },
            {"id": "save", "type": "toolCall", "tool": "write", "arguments": {"path": "triage.md", "text": "$${raw}"}},
        ],
        "enabled": False,
        "version": 4,
    }
)


def test_yaml_round_trip() -> None:
    text = dump_flow(EVERYTHING)
    assert load_flow(text) == EVERYTHING
    assert dump_flow(load_flow(text)) == text


def test_the_written_file_reads_like_what_it_says() -> None:
    text = dump_flow(EVERYTHING)
    assert "  prompt: |\n    Which of these are urgent?\n\n    ${issues.items}\n" in text
    assert "ünïcode" in text
    assert "- id: triage\n  type: agentStep\n" in text
    assert "directOutput: true" in text and "catchUp: all" in text
    assert "direct_output" not in text and "skip: 3" in text
    assert "enabled: false" in text and "version: 4" in text


def test_defaults_are_left_out() -> None:
    flow = Flow.model_validate({"name": "tiny", "steps": [{"id": "a", "type": "toolCall", "tool": "read"}]})
    assert dump_flow(flow) == "name: tiny\nsteps:\n- id: a\n  type: toolCall\n  tool: read\n"
    assert load_flow(dump_flow(flow)) == flow


def test_every_trigger_round_trips() -> None:
    triggers = [
        {"type": "manual"},
        {"type": "cron", "expression": "@hourly", "catchUp": "skip"},
        {"type": "file", "patterns": ["inbox/*.pdf", "**/*.md"], "events": ["created", "deleted"]},
        {"type": "sessionEvent", "eventType": "assistant_message"},
        {"type": "mcpNotification", "server": "fs", "method": "notifications/resources/updated"},
    ]
    for trigger in triggers:
        flow = Flow.model_validate(
            {"name": "t", "trigger": trigger, "steps": [{"id": "a", "type": "toolCall", "tool": "x"}]}
        )
        assert load_flow(dump_flow(flow)) == flow


def test_toml_is_read_too() -> None:
    text = """
name = "notes-digest"
description = "Summarise new notes"

[inputs.folder]
type = "string"
default = "notes"

[trigger]
type = "file"
patterns = ["notes/**/*.md"]
events = ["created"]

[[steps]]
id = "read"
type = "toolCall"
tool = "read"
arguments = { path = "${trigger.path}" }

[[steps]]
id = "sum"
type = "agentStep"
prompt = '''
Summarise ${read}'''
directOutput = true
"""
    flow = load_flow(text, "toml")
    assert flow.inputs["folder"].default == "notes"
    assert flow.steps[1].direct_output
    assert load_flow(dump_flow(flow)) == flow


def test_files_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "triage.yaml"
    write_flow(path, EVERYTHING)
    assert read_flow(path) == EVERYTHING
    toml = tmp_path / "t.toml"
    toml.write_text('name = "t"\n[[steps]]\nid = "a"\ntype = "delay"\nseconds = 1\n', encoding="utf-8")
    assert read_flow(toml).steps[0].type == "delay"


@pytest.mark.parametrize(
    ("text", "format", "expected"),
    [
        ("name: [unclosed", "yaml", "not valid YAML"),
        ("name = ", "toml", "not valid TOML"),
        ("- just a list", "yaml", "Input should be a valid dictionary or instance of Flow"),
        (
            "name: x\nsteps:\n- id: a\n  type: delay\n  seconds: yes\n",
            "yaml",
            "steps[0] (a).seconds: Input should be a valid number",
        ),
        (
            "name: x\nsteps:\n- id: a\n  type: toolCall\n  tool: t\n  arguments: {d: 2024-01-01}\n",
            "yaml",
            "steps[0] (a).arguments.d: input was not a valid JSON value",
        ),
    ],
)
def test_errors_say_what_and_where(text: str, format: str, expected: str) -> None:
    with pytest.raises(FlowFileError) as caught:
        load_flow(text, format, source="flows/x")  # type: ignore[arg-type]
    assert str(caught.value).startswith("flows/x: ")
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems
