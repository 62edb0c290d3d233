"""The write tool on real files: create, overwrite, atomicity, permission bits, refused paths."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cowork.policy import PathPolicy
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._write import WriteTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def context(ws: Path, home: Path | None = None, deny: tuple[str, ...] = ()) -> ToolContext:
    return ToolContext(workspace=ws, paths=PathPolicy.build(ws, home=home, deny=deny), home=home)


async def write(ctx: ToolContext | Path, **arguments: Any) -> str:
    tool = WriteTool()
    if isinstance(ctx, Path):
        ctx = context(ctx)
    return await tool.run(tool.parse(arguments), ctx)


@pytest.mark.anyio
async def test_creates_a_file_and_its_parent_directories(ws: Path) -> None:
    out = await write(ws, filePath="reports/2024/q1.md", content="# Q1\n\nRevenue up.\n")

    assert out == "Created reports/2024/q1.md (3 lines, 18 bytes)."
    assert (ws / "reports" / "2024" / "q1.md").read_bytes() == b"# Q1\n\nRevenue up.\n"


@pytest.mark.anyio
async def test_overwrites_and_counts_a_last_line_without_newline(ws: Path) -> None:
    (ws / "a.txt").write_text("old\n", encoding="utf-8")

    out = await write(ws, filePath=str(ws / "a.txt"), content="new\nlines")

    assert out == "Overwrote a.txt (2 lines, 9 bytes)."
    assert (ws / "a.txt").read_text(encoding="utf-8") == "new\nlines"


@pytest.mark.anyio
async def test_writes_utf8_and_leaves_no_temporary_file(ws: Path) -> None:
    await write(ws, filePath="u.txt", content="naïve café ✓\n")

    assert (ws / "u.txt").read_bytes() == "naïve café ✓\n".encode()
    assert os.listdir(ws) == ["u.txt"]


@pytest.mark.anyio
async def test_empty_content_creates_an_empty_file(ws: Path) -> None:
    assert await write(ws, filePath="empty", content="") == "Created empty (0 lines, 0 bytes)."
    assert (ws / "empty").read_bytes() == b""


@pytest.mark.anyio
async def test_overwrite_keeps_the_permission_bits(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("echo old\n", encoding="utf-8")
    script.chmod(0o750)

    await write(ws, filePath="run.sh", content="echo new\n")

    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text(encoding="utf-8") == "echo new\n"


@pytest.mark.anyio
async def test_new_file_gets_the_umask_mode_not_the_temp_file_mode(ws: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)

    await write(ws, filePath="new.txt", content="x")

    assert stat.S_IMODE((ws / "new.txt").stat().st_mode) == 0o666 & ~umask


@pytest.mark.anyio
async def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(ws: Path) -> None:
    (ws / "real.txt").write_text("old", encoding="utf-8")
    (ws / "link.txt").symlink_to(ws / "real.txt")

    out = await write(ws, filePath="link.txt", content="new")

    assert out.startswith("Overwrote real.txt")
    assert (ws / "link.txt").is_symlink()
    assert (ws / "real.txt").read_text(encoding="utf-8") == "new"


@pytest.mark.anyio
async def test_a_directory_is_refused(ws: Path) -> None:
    (ws / "docs").mkdir()

    with pytest.raises(ToolError, match="is a directory"):
        await write(ws, filePath="docs", content="x")


@pytest.mark.anyio
async def test_a_file_in_the_way_of_the_parent_directory_is_refused(ws: Path) -> None:
    (ws / "notes").write_text("a file", encoding="utf-8")

    with pytest.raises(ToolError, match="a file is in the way"):
        await write(ws, filePath="notes/today.md", content="x")


@pytest.mark.anyio
async def test_a_read_only_file_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = ws / "locked.txt"
    locked.write_text("keep", encoding="utf-8")
    locked.chmod(0o444)
    if os.geteuid() == 0:  # root may write anything; pretend to be an ordinary user
        monkeypatch.setattr(os, "access", lambda path, mode: path != locked)

    with pytest.raises(ToolError, match="read-only"):
        await write(ws, filePath="locked.txt", content="x")
    assert locked.read_text(encoding="utf-8") == "keep"


@pytest.mark.anyio
@pytest.mark.parametrize("target", ["../outside.txt", "/tmp/cowork-write-test-outside.txt", "sub/../../x.txt"])
async def test_paths_outside_the_workspace_are_refused(ws: Path, target: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await write(ws, filePath=target, content="x")
    assert not (ws.parent / "outside.txt").exists()


@pytest.mark.anyio
async def test_a_symlink_pointing_outside_is_refused(ws: Path, tmp_path: Path) -> None:
    (ws / "escape").symlink_to(tmp_path)

    with pytest.raises(ToolError, match="outside the workspace"):
        await write(ws, filePath="escape/x.txt", content="x")


@pytest.mark.anyio
async def test_denied_paths_are_refused(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ctx = context(ws, home=home, deny=(str(ws / "secrets"),))

    with pytest.raises(ToolError, match="no tool may write"):
        await write(ctx, filePath="secrets/key.pem", content="x")
    with pytest.raises(ToolError, match="no tool may write"):
        await write(ctx, filePath=str(home / "auth" / "token"), content="x")
    assert not (ws / "secrets").exists()


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors(ws: Path) -> None:
    with pytest.raises(ToolError, match="filePath"):
        await write(ws, filePath="", content="x")
    with pytest.raises(ToolError, match="content"):
        await write(ws, filePath="a.txt")


def test_write_has_side_effects() -> None:
    assert WriteTool().side_effects_of({"filePath": "a", "content": ""}) is True
