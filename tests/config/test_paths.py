"""The state folder: private to the user (0700 folders, 0600 files) whatever the umask, parents left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.config import CoworkPaths
from cowork.config._paths import private_dir, private_file, write_private
from cowork.testing.files import mode, umask


def test_ensure_creates_a_private_home_under_umask_022(tmp_path: Path) -> None:
    paths = CoworkPaths(tmp_path / "a" / "b" / "home")
    with umask(0o022):
        paths.ensure()
    folders = [paths.home, paths.logs_dir, paths.auth_dir, paths.tool_output_dir, paths.run_dir]
    assert [mode(p) for p in folders] == [0o700] * len(folders)
    # Parents it had to create get the usual mode: only the home and what is inside it are Cowork's.
    assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o755


def test_ensure_tightens_what_an_older_cowork_left_readable(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    home = parent / "home"
    for folder in ("logs", "auth", "tool-output/ses_1", "run/mcp", "memory", "skills"):
        (home / folder).mkdir(parents=True)
    loose = ["logs/server.log", "logs/server-stdout.log", "auth/token", "tool-output/ses_1/read-1.txt"]
    loose += ["run/mcp/github-123.json", "server.json", "history"]
    users = ["config.toml", "memory/MEMORY.md", "skills/notes.md", "mcp-servers.json"]
    for name in [*loose, *users]:
        (home / name).write_text("x", encoding="utf-8")
    for path in [parent, *parent.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)

    CoworkPaths(home).ensure()

    assert {name: mode(home / name) for name in loose} == dict.fromkeys(loose, 0o600)
    ours = ["", "logs", "auth", "tool-output", "tool-output/ses_1", "run", "run/mcp"]
    assert {name: mode(home / name) for name in ours} == dict.fromkeys(ours, 0o700)
    # The user's own files and folders, and the home's parent, are not Cowork's to change.
    assert {name: mode(home / name) for name in users} == dict.fromkeys(users, 0o644)
    assert (mode(parent), mode(home / "memory"), mode(home / "skills")) == (0o755, 0o755, 0o755)


def test_ensure_follows_no_symlink_out_of_the_home(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    (outside / "shared.log").write_text("x", encoding="utf-8")
    (outside / "shared.log").chmod(0o644)
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "elsewhere").symlink_to(outside)
    (home / "logs" / "linked.log").symlink_to(outside / "shared.log")

    CoworkPaths(home).ensure()

    assert (mode(outside), mode(outside / "shared.log")) == (0o755, 0o644)


def test_ensure_on_a_private_home_changes_nothing(tmp_path: Path) -> None:
    paths = CoworkPaths(tmp_path / "home")
    paths.ensure()
    (paths.logs_dir / "server.log").write_text("x", encoding="utf-8")
    (paths.logs_dir / "server.log").chmod(0o600)
    before = {p: mode(p) for p in paths.home.rglob("*")}
    paths.ensure()
    assert {p: mode(p) for p in paths.home.rglob("*")} == before


def test_private_file_and_folder_are_exact_whatever_the_umask(tmp_path: Path) -> None:
    with umask(0o277):
        private_dir(tmp_path / "d")
        private_file(tmp_path / "d" / "f")
        write_private(tmp_path / "d" / "g", "text")
    assert (mode(tmp_path / "d"), mode(tmp_path / "d" / "f"), mode(tmp_path / "d" / "g")) == (0o700, 0o600, 0o600)


def test_private_file_keeps_contents_and_write_private_tightens_before_writing(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("earlier lines\n", encoding="utf-8")
    log.chmod(0o644)
    assert private_file(log) is True
    assert (mode(log), log.read_text(encoding="utf-8")) == (0o600, "earlier lines\n")
    assert private_file(log) is False

    record = tmp_path / "server.json"
    record.write_text("{}", encoding="utf-8")
    record.chmod(0o644)
    write_private(record, '{"pid": 1}')
    assert (mode(record), record.read_text(encoding="utf-8")) == (0o600, '{"pid": 1}')


def test_a_file_where_a_folder_belongs_is_an_error_not_chmod_ed(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("not a folder", encoding="utf-8")
    (tmp_path / "home").chmod(0o644)
    with pytest.raises(FileExistsError):
        CoworkPaths(tmp_path / "home").ensure()
    assert mode(tmp_path / "home") == 0o644
