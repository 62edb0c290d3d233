"""The benchmarks keep running: each is executed once with tiny sizes (the figures themselves are not asserted)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cowork.testing.postgres import postgres_problem

BENCH = Path(__file__).parents[1] / "bench"
pytestmark = pytest.mark.slow


def run_bench(script: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run `bench/SCRIPT ARGS…` once; it must exit 0 (its stderr is the failure message)."""
    result = subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return result


def test_turn_overhead_runs_and_reports_a_ratio() -> None:
    result = run_bench("turn_overhead.py", "--rounds", "1", "--turns", "2")
    assert "ratio server/raw: 2nd turn" in result.stdout
    assert "ratio server/bare:" in result.stdout


def test_operation_steps_runs_and_reports_a_ratio() -> None:
    result = run_bench("operation_steps.py", "--operations", "2", "--rounds", "1")
    assert "ratio persisted/in-memory:" in result.stdout


def test_tools_bench_runs_and_reports_ratios() -> None:
    result = run_bench("tools.py", "--runs", "2")
    assert "commands/s" in result.stdout
    assert "bash unsandboxed:" in result.stdout and "(ratio " in result.stdout


def test_streaming_bench_runs_and_reports_a_ratio() -> None:
    result = run_bench("streaming.py", "--chunks", "200", "--rounds", "1")
    assert "ratio served/adapter:" in result.stdout
    assert "decisions/s" in result.stdout and "ms per decision" in result.stdout


def test_mcp_bench_runs_and_reports_a_ratio() -> None:
    result = run_bench("mcp_calls.py", "--calls", "3", "--rounds", "1", "--turns", "1")
    assert "ratio cowork/direct:" in result.stdout
    assert "ratio mcp-turn/builtin-turn:" in result.stdout


def test_long_session_runs_and_reports_ratios() -> None:
    result = run_bench("long_session.py", "--turns", "3")
    assert "server: turns 1: " in result.stdout and "ratio late/early:" in result.stdout
    assert "server CPU per turn:" in result.stdout
    assert "ratio server/raw (early|late):" in result.stdout


@pytest.mark.parametrize("wire", ["anthropic", "google"])
def test_long_session_runs_over_another_wire_format_without_the_floor(wire: str) -> None:
    result = run_bench("long_session.py", "--turns", "3", "--wire", wire)
    assert f"over the {wire} wire format" in result.stdout and "ratio late/early:" in result.stdout
    assert "raw floor" not in result.stdout.replace("no raw floor", "")


def test_concurrency_bench_runs_and_reports_throughput() -> None:
    result = run_bench("concurrency.py", "--sessions", "2", "--turns", "1")
    assert "2 sessions x 1 turns,         cowork:" in result.stdout
    assert "turns/s, p50" in result.stdout and "peak RSS" in result.stdout and "errors 0;" in result.stdout
    assert "ratio raw/cowork turns/s, by sessions: 2:" in result.stdout


def test_tracing_bench_runs_and_reports_a_ratio() -> None:
    result = run_bench("tracing.py", "--turns", "2", "--warm-up", "1")
    assert "tracing health: ready | disabled;" in result.stdout
    assert "ratio traced/untraced: turn median" in result.stdout and "server CPU" in result.stdout


@pytest.mark.skipif(
    not Path("/usr/share/doc/python3.11/html").is_dir(), reason="python3.11-doc is not installed (the test script does)"
)
def test_retrieval_bench_runs_and_reports_ratios() -> None:
    result = run_bench(
        "retrieval.py", "--pages", "3", "--questions", "4", "--sizes", "300", "--runs", "2", "--ingest-pages", "2",
        "--no-cache", timeout=300,
    )  # fmt: skip
    assert "anchor (AnythingLLM default)" in result.stdout and "cowork hybrid" in result.stdout
    assert "ratio cowork/anchor: hit@1" in result.stdout
    assert "ratio raw/ingest time:" in result.stdout
    assert "search at 300 chunks: numpy brute force" in result.stdout


def _worktrees() -> str:
    return subprocess.run(["git", "-C", str(BENCH), "worktree", "list"], capture_output=True, text=True).stdout


@pytest.mark.skipif(
    shutil.which("git") is None
    or subprocess.run(["git", "-C", str(BENCH), "rev-parse"], capture_output=True).returncode != 0,
    reason="needs a git checkout",
)
def test_concurrency_bench_compares_with_another_revision_and_removes_its_worktree() -> None:
    before = _worktrees()
    result = run_bench("concurrency.py", "--sessions", "2", "--turns", "1", "--compare", "HEAD")
    assert "ratio ours/HEAD@" in result.stdout and "turns/s: 2:" in result.stdout
    assert _worktrees() == before


def test_startup_bench_runs_and_reports_ratios() -> None:
    result = run_bench("startup.py", "--spawns", "1", "--warm-turns", "1", timeout=300)
    assert "spawn to initialize:" in result.stdout and "(floor python start" in result.stdout
    assert "first turn / warm turn:" in result.stdout
    assert "warning" not in result.stderr  # every server logged its warm-up done


def test_checkpoints_bench_runs_and_reports_ratios() -> None:
    result = run_bench("checkpoints.py", "--files", "50", "--runs", "2")
    assert "first snapshot" in result.stdout
    for kind in ("write", "edit ", "bash "):
        assert f"{kind}: tool alone" in result.stdout
    assert result.stdout.count("ratio ") == 3


def test_capture_bench_runs_and_reports_a_ratio() -> None:
    result = run_bench("capture.py", "--samples", "300", "--rounds", "1", "--index")
    for label in ("", " (rapid switching)"):
        assert f"tracker{label}: " in result.stdout and " samples/s " in result.stdout
        assert f"pipeline{label}: " in result.stdout and "ms CPU per simulated hour (" in result.stdout
        assert f"replay alone{label}: " in result.stdout and f"floor{label}: " in result.stdout
    assert result.stdout.count("ratio pipeline/floor: ") == 2
    assert result.stdout.count("core share at 1 sample/s: ") == 2
    assert "pipeline with indexing: " in result.stdout and "hour texts embedded" in result.stdout


def test_automations_bench_runs_and_reports_a_ratio() -> None:
    result = run_bench("automations.py", "--steps", "3", "--rounds", "1")
    assert "ratio run/floor:" in result.stdout


def test_replicas_bench_runs_and_reports_a_ratio() -> None:
    problem = postgres_problem()
    if problem is not None:
        pytest.skip(problem)
    result = run_bench("replicas.py", "--quick")
    assert "6 sessions, 1 replica :" in result.stdout and "6 sessions, 2 replicas:" in result.stdout
    assert "first event p50" in result.stdout and "turn end p50" in result.stdout
    assert result.stdout.count("errors 0;") == 2
    assert "ratio two/one turns/s:" in result.stdout
