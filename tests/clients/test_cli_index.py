"""`cowork index` and `cowork search` against a real (auto-started) server with the real local embedder: a job
followed to its end (with a progress bar in a terminal), searches, controls, and the exit codes of refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from cowork.testing.http import LocalServer, Reply

from .test_cli import plain, spawn

pytestmark = pytest.mark.slow


@pytest.fixture
def env(home: Path) -> Iterator[dict[str, str]]:
    environment = {**os.environ, "COWORK_HOME": str(home), "TERM": "xterm-256color"}
    yield environment
    try:
        pid = json.loads((home / "server.json").read_text(encoding="utf-8"))["pid"]
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError):
        pass


def cowork(workspace: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cowork", *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=120
    )


def test_index_then_search_then_refusals(workspace: Path, env: dict[str, str]) -> None:
    (workspace / "docs" / "leave.md").write_text("# Holiday policy\n\nStaff get twenty-five days of paid vacation.\n")
    indexed = cowork(workspace, env, "index", "docs", "--json")
    assert indexed.returncode == 0, indexed.stderr
    job = json.loads(indexed.stdout)
    assert job["status"] == "done" and job["total"] == 2 and job["paths"] == ["docs"]

    found = cowork(workspace, env, "search", "how much time off do employees have?", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["path"] == "docs/leave.md"
    shown = cowork(workspace, env, "search", "how much time off do employees have?", "-n", "1")
    assert shown.stdout.startswith("[1] docs/leave.md — Holiday policy") and "twenty-five" in shown.stdout

    status = cowork(workspace, env, "index", "--status")
    assert f"{job['jobId'][:8]}  done" in status.stdout

    outside = cowork(workspace, env, "index", "../elsewhere")
    assert outside.returncode == 2 and "outside the workspace" in outside.stderr
    unknown = cowork(workspace, env, "index", "--pause", "zzzz")
    assert unknown.returncode == 2 and "no single job" in unknown.stderr
    finished = cowork(workspace, env, "index", "--pause", job["jobId"][:8])
    assert finished.returncode == 2 and "only a running job" in finished.stderr
    nothing = cowork(workspace, env, "search", "   ")
    assert nothing.returncode == 2


def test_a_terminal_sees_a_progress_bar_and_the_job_s_line(workspace: Path, env: dict[str, str]) -> None:
    for i in range(40):
        (workspace / "docs" / f"note{i:02d}.md").write_text(f"# Note {i}\n\n" + f"Paragraph {i} of the notes. " * 60)
    child = spawn(workspace, env, "index")
    child.expect("done", timeout=120)
    child.expect(pexpect.EOF, timeout=30)
    output = plain(child.logfile_read.getvalue())
    assert "indexing" in output and "files ·" in output  # the bar, drawn while it ran
    assert "done       43/43 files" in output  # the 40 notes and the fixture's three files


def test_urls_mixed_with_paths_are_indexed_and_bad_ones_start_nothing(workspace: Path, env: dict[str, str]) -> None:
    page = (
        "<html><head><title>Lighthouse keeping</title></head><body><main><h1>Lighthouse keeping</h1>"
        "<p>The keeper trims the lamp's wick every evening and logs passing ships in a ledger.</p></main></body></html>"
    )
    env = {**env, "COWORK_TOOLS__WEB__ALLOW_PRIVATE_ADDRESSES": "true"}  # the test allowance: the site is local
    with LocalServer({"/keeper.html": Reply(body=page)}) as site:
        url, missing = site.url("/keeper.html"), site.url("/nope.html")
        indexed = cowork(workspace, env, "index", url, "docs", missing, "--json")
        assert indexed.returncode == 0, indexed.stderr
        job = json.loads(indexed.stdout)
        assert (job["urls"], job["paths"], job["status"]) == ([url, missing], ["docs"], "done")
        assert (job["total"], job["failed"]) == (3, 1)
        status = cowork(workspace, env, "index", "--status")
        assert f"{job['jobId'][:8]}  done       3/3 pages and files" in status.stdout
        assert f"  failed: {missing}: HTTP 404" in status.stdout

    found = cowork(workspace, env, "search", "who looks after the lamp at night?", "-n", "1")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(f"[1] {url} — Lighthouse keeping") and "ledger" in found.stdout

    before = cowork(workspace, env, "index", "--status").stdout
    for bad in ("ftp://example.com/a.txt", "file:///etc/passwd", "http://"):
        refused = cowork(workspace, env, "index", bad, "docs")
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith("cowork index: ")
        assert "only http and https" in refused.stderr or "no host" in refused.stderr
    assert cowork(workspace, env, "index", "--status").stdout == before  # nothing started
