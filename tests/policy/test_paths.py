"""Path permissions: an escape corpus that must yield zero escapes, and the deny list that beats every root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cowork.policy import PathDenied, PathPolicy


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, PathPolicy]:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "ok.py").write_text("x = 1\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    home = tmp_path / "home"
    (home / "auth").mkdir(parents=True)
    (home / "auth" / "token").write_text("t", encoding="utf-8")
    (home / "skills").mkdir()
    return workspace, outside, PathPolicy.build(workspace, home=home)


def escapes(workspace: Path, outside: Path) -> list[str]:
    """Each of these names something outside the workspace; none may be read or written."""
    (workspace / "link_out").symlink_to(outside)
    (workspace / "file_link").symlink_to(outside / "secret.txt")
    (workspace / "src" / "deep_link").symlink_to("../../outside/secret.txt")
    (workspace / "loop_a").symlink_to(workspace / "loop_b")
    (workspace / "loop_b").symlink_to(workspace / "loop_a")
    hard = workspace / "hard_secret.txt"
    os.link(outside / "secret.txt", hard)
    rel_up = os.path.relpath(outside / "secret.txt", workspace)
    return [
        "../outside/secret.txt",
        rel_up,
        "src/../../outside/secret.txt",
        "./src/../../outside",
        str(outside / "secret.txt"),
        "/etc/passwd",
        "/",
        "~",
        "~/.bashrc",
        "/proc/self/root/etc/passwd",
        f"/proc/self/root{outside}/secret.txt",
        "/proc/self/cwd/../outside/secret.txt" if Path.cwd() == workspace else f"/proc/1/root{outside}/secret.txt",
        "link_out/secret.txt",
        "link_out",
        "file_link",
        "src/deep_link",
        "hard_secret.txt",
        str(workspace) + "/../outside/secret.txt",
        str(workspace).upper() + "/SRC/OK.PY" if str(workspace).upper() != str(workspace) else "/ETC/PASSWD",
        "/etc/shadow",
        "src/./../../outside/./secret.txt",
        "loop_a",
    ]


def test_zero_escapes(layout: tuple[Path, Path, PathPolicy]) -> None:
    workspace, outside, policy = layout
    corpus = escapes(workspace, outside)
    allowed_reads: list[tuple[str, Path]] = []
    allowed_writes: list[tuple[str, Path]] = []
    for raw in corpus:
        for check, bucket in ((policy.check_read, allowed_reads), (policy.check_write, allowed_writes)):
            try:
                resolved = check(raw)
            except PathDenied:
                continue
            # A case variant of a workspace path on a case-sensitive file system is simply another path,
            # and still inside nothing: it must not resolve outside the workspace.
            if resolved == workspace or workspace in resolved.parents:
                continue
            bucket.append((raw, resolved))
    assert allowed_reads == [] and allowed_writes == [], f"escapes: {allowed_reads + allowed_writes}"
    print(f"path escape corpus: {len(corpus)} paths x read/write, 0 escapes")


def test_inside_paths_are_fine(layout: tuple[Path, Path, PathPolicy]) -> None:
    workspace, _, policy = layout
    assert policy.check_read("src/ok.py") == workspace / "src" / "ok.py"
    assert policy.check_write("new/dir/file.txt") == workspace / "new" / "dir" / "file.txt"
    assert policy.check_read(str(workspace / "src" / "ok.py")) == workspace / "src" / "ok.py"


def test_deny_list_beats_roots_and_case(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "auth").mkdir(parents=True)
    (home / "auth" / "token").write_text("t", encoding="utf-8")
    # Even a workspace that contains Cowork's home (or the user's whole home) cannot reach the secrets.
    policy = PathPolicy.build(tmp_path, home=home, deny=[tmp_path / "private"])
    for raw in ("home/auth/token", "home/AUTH/token", "home/cowork.db", "private/x", "PRIVATE/x"):
        with pytest.raises(PathDenied):
            policy.check_read(raw)
        with pytest.raises(PathDenied):
            policy.check_write(raw)
    with pytest.raises(PathDenied, match="credentials"):
        PathPolicy.build(Path.home()).check_read("~/.ssh/id_rsa")


def test_extra_roots_and_cowork_home(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    docs = tmp_path / "docs"
    docs.mkdir()
    home = tmp_path / "home"
    policy = PathPolicy.build(workspace, home=home, extra_read=[docs])
    assert policy.check_read(docs / "a.md") == docs / "a.md"
    with pytest.raises(PathDenied):
        policy.check_write(docs / "a.md")
    assert policy.check_read(home / "skills" / "x" / "SKILL.md")
    assert policy.check_write(home / "memory" / "people.md")
    with pytest.raises(PathDenied):
        policy.check_write(home / "skills" / "x" / "SKILL.md")
