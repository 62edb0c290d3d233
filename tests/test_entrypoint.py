"""The `cowork` command's subcommands, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def cowork(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cowork", *args], input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd
    )


def test_policy_check_prints_the_verdict_as_json(tmp_path: Path) -> None:
    result = cowork("policy", "check", "sudo rm -rf /", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "dangerous" and verdict["fragment"]


def test_policy_check_reads_stdin(tmp_path: Path) -> None:
    result = cowork("policy", "check", "-", stdin="ls -la\ngit push --force\n\n", cwd=tmp_path)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(x["command"], x["verdict"]) for x in lines] == [("ls -la", "safe"), ("git push --force", "dangerous")]


def test_protocol_docs_match_the_file() -> None:
    result = cowork("protocol", "docs")
    assert result.stdout == (Path(__file__).parents[1] / "docs" / "protocol.md").read_text(encoding="utf-8")
