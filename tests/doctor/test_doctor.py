"""`cowork doctor`: run as a user would, on a healthy setup and on broken ones; and the verdicts of the pure checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cowork.config import CoworkPaths, SandboxConfig
from cowork.doctor import Check, exit_code, render_text
from cowork.doctor._checks import check_disk, check_git, check_python, check_sandbox, check_state_folder
from cowork.testing.client import EventClient
from cowork.testing.mockllm import MockLLMServer
from cowork.testing.server import PROVIDER_VARIABLES, ServerProcess, provider_env

EVERY_CHECK = {
    "python",
    "state folder",
    "disk space",
    "config",
    "sandbox",
    "git",
    "ripgrep",
    "toolbox",
    "libreoffice",
    "providers",
    "mcp",
    "tracing",
    "server",
}


def doctor(
    home: Path, workspace: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("COWORK_") and k not in PROVIDER_VARIABLES}
    if url := os.environ.get("COWORK_DATABASE_URL"):
        base["COWORK_DATABASE_URL"] = url  # the suite's PostgreSQL half: the store the test's server uses
    return subprocess.run(
        [sys.executable, "-m", "cowork", "doctor", "--workspace", str(workspace), *args],
        env=base | {"COWORK_HOME": str(home), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"} | (env or {}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def as_json(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    checks = json.loads(result.stdout)
    assert isinstance(checks, list)
    return checks


def by_name(checks: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(c for c in checks if c["check"] == name)


@pytest.fixture
def private_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    return home


def test_a_healthy_setup_passes_with_every_check_listed(
    private_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    env = provider_env("openai", mock_llm.openai_base_url)
    result = doctor(private_home, workspace, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    marks = {line.split()[1] for line in result.stdout.splitlines() if line[:1] in "✓!✗"}
    assert {name.split()[0] for name in EVERY_CHECK} <= marks
    assert "no problems" in result.stdout.splitlines()[-1]

    checks = as_json(doctor(private_home, workspace, "--json", env=env))
    assert EVERY_CHECK <= {c["check"] for c in checks}
    assert all(set(c) == {"check", "status", "detail", "fix"} for c in checks)
    assert f"$OPENAI_API_KEY, {mock_llm.openai_base_url}" in by_name(checks, "providers")["detail"]
    assert by_name(checks, "default model")["detail"] == "openai:mock-model"
    assert by_name(checks, "server")["detail"].startswith("not running")


def test_network_reaches_the_connected_provider(private_home: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    checks = as_json(
        doctor(private_home, workspace, "--json", "--network", env=provider_env("openai", mock_llm.openai_base_url))
    )
    reached = by_name(checks, "provider openai")
    assert reached["status"] == "ok" and reached["detail"].startswith(f"reachable at {mock_llm.openai_base_url}")


def test_an_unreachable_default_provider_is_a_problem_with_network(private_home: Path, workspace: Path) -> None:
    env = provider_env("openai", "http://127.0.0.1:9/v1")  # the discard port: nothing listens
    assert doctor(private_home, workspace, env=env).returncode == 0  # offline by default: not probed
    result = doctor(private_home, workspace, "--json", "--network", env=env)
    assert result.returncode == 1
    assert by_name(as_json(result), "provider openai")["status"] == "problem"


def test_an_invalid_config_file_is_a_problem_naming_the_file(private_home: Path, workspace: Path) -> None:
    config = private_home / "config.toml"
    config.write_text("provider = [\n", encoding="utf-8")
    result = doctor(private_home, workspace)
    assert result.returncode == 1
    assert "✗ config" in result.stdout and str(config) in result.stdout

    (workspace / ".cowork").mkdir()
    bad_value = workspace / ".cowork" / "config.toml"
    config.unlink()
    bad_value.write_text("[tools]\noutput_limit_chars = 'lots'\n", encoding="utf-8")
    checks = as_json(doctor(private_home, workspace, "--json"))
    broken = by_name(checks, "config")
    assert (
        broken["status"] == "problem"
        and str(bad_value) in broken["detail"]
        and "output_limit_chars" in broken["detail"]
    )
    assert by_name(checks, "providers")["detail"].startswith("not checked")


def test_no_provider_is_a_problem_with_the_fix(private_home: Path, workspace: Path) -> None:
    result = doctor(private_home, workspace)
    assert result.returncode == 1
    assert "✗ providers" in result.stdout and "fix: export OPENAI_API_KEY=" in result.stdout


def test_a_state_folder_open_to_others_is_flagged(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> None:
    home = tmp_path / "open"
    home.mkdir()
    home.chmod(0o755)
    (home / "cowork.db").touch(mode=0o644)
    result = doctor(home, workspace, "--json", env=provider_env("openai", mock_llm.openai_base_url))
    assert result.returncode == 1
    folder, files = by_name(as_json(result), "state folder"), by_name(as_json(result), "state files")
    assert (
        folder["status"] == "problem" and "0755" in folder["detail"] and folder["fix"].startswith(f"chmod 700 {home}")
    )
    assert "cowork.db (0644)" in files["detail"]
    assert (home.stat().st_mode & 0o777) == 0o755  # the doctor reports; it does not change anything


def test_an_mcp_server_whose_command_is_missing_is_flagged(
    private_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    servers = {
        "ghost": {"command": "no-such-mcp-server-cmd", "args": []},
        "docs": {"type": "http", "url": "https://example.com/mcp"},
    }
    (private_home / "mcp-servers.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    result = doctor(private_home, workspace, "--json", env=provider_env("openai", mock_llm.openai_base_url))
    assert result.returncode == 1
    checks = as_json(result)
    ghost = by_name(checks, "mcp ghost")
    assert ghost["status"] == "problem" and "no-such-mcp-server-cmd" in ghost["detail"] and ghost["fix"]
    assert by_name(checks, "mcp docs") == {
        "check": "mcp docs",
        "status": "ok",
        "detail": "http: https://example.com/mcp",
        "fix": None,
    }


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_running_server_and_what_it_saved_are_seen(
    home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    """A base URL saved through the server (in its database) counts; the database is read, not changed."""
    with ServerProcess(home, workspace) as server:
        client = await EventClient.connect(server.address)
        await client.call(
            "provider/connect", {"provider": "openai", "baseUrl": mock_llm.openai_base_url, "verify": False}
        )
        await client.close()
        checks = as_json(doctor(home, workspace, "--json"))
        assert by_name(checks, "server")["detail"].startswith(f"running at {server.address.url} (pid ")
        assert mock_llm.openai_base_url in by_name(checks, "providers")["detail"]
        assert by_name(checks, "default model")["status"] == "ok"
    stale = home / "server.json"
    stale.write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": 999999}), encoding="utf-8")
    left = by_name(as_json(doctor(home, workspace, "--json")), "server")
    assert left["status"] == "ok" and left["detail"].startswith("not running (the last one, pid 999999")


# --- the pure checks -------------------------------------------------------------------------------------------


def test_python_version_verdicts() -> None:
    assert check_python((3, 10, 12), "1.0").status == "problem"
    assert check_python((3, 11, 0), "1.0") == Check("python", "ok", "Python 3.11.0, Cowork 1.0")


def test_disk_space_verdicts(tmp_path: Path) -> None:
    assert check_disk(tmp_path, 50 << 20).status == "problem"
    assert check_disk(tmp_path, 500 << 20).status == "warning"
    assert check_disk(tmp_path, 5 << 30) == Check("disk space", "ok", "5.0 GB free")


def test_state_folder_verdicts(tmp_path: Path) -> None:
    missing = CoworkPaths(tmp_path / "new" / "home")
    assert [c.status for c in check_state_folder(missing)] == ["ok"]
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    (home / "auth").mkdir()
    token = home / "auth" / "token"
    token.write_text("t", encoding="utf-8")
    token.chmod(0o640)
    checks = check_state_folder(CoworkPaths(home))
    assert [(c.check, c.status) for c in checks] == [("state folder", "ok"), ("state files", "problem")]
    assert checks[1].fix == f"chmod 600 {token} (the server also tightens them when it starts)."


def test_sandbox_verdicts(tmp_path: Path) -> None:
    off = check_sandbox(SandboxConfig(enabled=False), "/x/config.toml")
    assert off.status == "warning" and "/x/config.toml" in off.detail
    missing = check_sandbox(SandboxConfig(bwrap_path=str(tmp_path / "bwrap")), None, platform="linux")
    assert missing.status == "problem" and missing.fix and missing.fix.startswith("apt install bubblewrap")
    assert check_sandbox(SandboxConfig(), None, platform="darwin").status == "warning"


def test_git_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    assert check_git(True).status == "warning"
    assert check_git(False).status == "ok"


def test_the_exit_code_and_plain_text() -> None:
    checks = [Check("a", "ok", "fine"), Check("bb", "warning", "hmm", "do this")]
    assert exit_code(checks) == 0
    assert (
        render_text(checks) == "✓ a   fine\n! bb  hmm\n      fix: do this\nno problems: 1 ok, 1 warning, 0 problems\n"
    )
    assert exit_code([*checks, Check("c", "problem", "broken")]) == 1


def test_an_otlp_collector_is_named_and_reached_with_network(
    private_home: Path, workspace: Path, mock_llm: MockLLMServer
) -> None:
    from cowork.testing.http import LocalServer, Reply

    env = provider_env("openai", mock_llm.openai_base_url)
    checks = as_json(doctor(private_home, workspace, "--json", env=env))
    assert by_name(checks, "tracing")["detail"] == "on, kept 7 days in the database; nothing is sent anywhere"
    with LocalServer({"/v1/traces": Reply(200, b"", "application/x-protobuf"), "/auth": Reply(401, "no")}) as collector:
        good = env | {"COWORK_TRACING__OTLP_ENDPOINT": collector.url("/v1/traces")}
        checks = as_json(doctor(private_home, workspace, "--json", "--network", env=good))
        assert by_name(checks, "tracing")["detail"].endswith(f"also sent to {collector.url('/v1/traces')}")
        assert by_name(checks, "otlp collector")["status"] == "ok"
        denied = env | {"COWORK_TRACING__OTLP_ENDPOINT": collector.url("/auth")}
        result = doctor(private_home, workspace, "--json", "--network", env=denied)
        assert result.returncode == 1
        reached = by_name(as_json(result), "otlp collector")
        assert reached["status"] == "problem" and "401" in reached["detail"] and "otlp_headers" in reached["fix"]
    bad = as_json(doctor(private_home, workspace, "--json", env=env | {"COWORK_TRACING__OTLP_ENDPOINT": "ftp://x"}))
    assert by_name(bad, "tracing")["status"] == "problem"
