"""Defects 3, 7 and 11: credential locations, hard links and NUL bytes, with and without the sandbox.

Without a sandbox (macOS, or `tools.sandbox.enabled = false` in the user's config) the classifier is what stands
between the model and `~/.ssh`, the cloud credentials, Cowork's own token and the server's environment: each
such read is asked about and marked dangerous. The file tools share one path check: `grep` over a folder leaves
out a hard link to a file outside, and a NUL byte in a path is a clear refusal, not a crash.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cowork.testing.attacks import Attack, bash, call
from cowork.testing.mockllm import MockLLMServer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SSH_KEY = "SSH-KEY-aa11"
AWS_KEY = "AWS-SECRET-bb22"
API_KEY = "sk-server-secret-cc33"


@pytest.fixture
def attack(tmp_path: Path, workspace: Path, mock_llm: MockLLMServer) -> Attack:
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text(SSH_KEY, encoding="utf-8")
    (user / ".aws").mkdir()
    (user / ".aws" / "credentials").write_text(f"aws_secret_access_key = {AWS_KEY}\n", encoding="utf-8")
    env = {
        "HOME": str(user),
        "COWORK_TOOLS__SANDBOX__ENABLED": "false",
        "COWORK_TOOLS__APPROVAL_MODE": "auto-run",
        "MY_SERVICE_API_KEY": API_KEY,
    }
    return Attack(tmp_path / "home", workspace, mock_llm, env=env)


async def test_without_a_sandbox_credential_reads_ask_and_are_dangerous(attack: Attack) -> None:
    token = attack.home / "auth" / "token"
    commands = [
        "cat ~/.ssh/id_rsa",
        "cat $HOME/.aws/credentials",
        f"cat {token}",
        "cat /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/self/environ",
    ]
    with attack.server() as server:
        record = await attack.turn(server, [[bash(c) for c in commands]], answer=lambda _r: False)
        secret_token = server.token
    assert len(record.approvals) == len(commands)
    assert all(a.dangerous for a in record.approvals), [a.reason for a in record.approvals]
    text = record.text()
    for secret in (SSH_KEY, AWS_KEY, API_KEY, secret_token):
        assert secret not in text


async def test_reads_outside_the_workspace_ask_without_a_sandbox(attack: Attack, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not yours", encoding="utf-8")
    with attack.server() as server:
        record = await attack.turn(server, [[bash(f"cat {elsewhere}"), bash("cat README.md")]])
    (request,) = record.approvals  # the read outside asks (auto-run, no sandbox); the one inside does not
    assert str(elsewhere) in request.reason or "outside" in request.reason


async def test_grep_leaves_out_a_hard_link_to_a_file_outside(attack: Attack, tmp_path: Path) -> None:
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("password = hunter2-outside\n", encoding="utf-8")
    os.link(secret, attack.workspace / "innocent.txt")
    with attack.server() as server:
        record = await attack.turn(
            server,
            [
                [
                    call("grep", pattern="password", path="."),
                    call("grep", pattern="password", outputMode="files_with_matches"),
                ]
            ],
        )
    assert "hunter2-outside" not in record.text()
    assert all("hard-linked" in r.content for r in record.results)


async def test_a_nul_byte_in_a_path_is_a_clear_refusal(attack: Attack) -> None:
    calls = [
        call("read", filePath="README.md\x00.txt"),
        call("write", filePath="new\x00.txt", content="x"),
        call("grep", pattern="x", path="src\x00"),
        call("glob", pattern="*.py", path="src\x00"),
    ]
    with attack.server() as server:
        record = await attack.turn(server, [calls])
    assert len(record.results) == len(calls)
    for result in record.results:
        assert result.is_error and "NUL byte" in result.content and "unexpectedly" not in result.content
    assert not any(p.name.startswith("new") for p in attack.workspace.iterdir())
