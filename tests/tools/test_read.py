"""The read tool on real files: numbering, ranges, encodings, binary files, huge files and bad input."""

from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest

from cowork.tools._base import ToolContext, ToolError
from cowork.tools._read import MAX_LINE_CHARS, MAX_OUTPUT_CHARS, ReadTool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def read(workspace: Path, **arguments: Any) -> str:
    tool = ReadTool()
    return await tool.run(tool.parse(arguments), ToolContext(workspace=workspace))


def numbered(start: int, lines: list[str]) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=start))


@pytest.mark.anyio
async def test_whole_small_file_numbered_like_cat_n(workspace: Path) -> None:
    (workspace / "a.py").write_text("import os\n\n\tprint(os.sep)\n", encoding="utf-8")

    assert await read(workspace, filePath="a.py") == "     1\timport os\n     2\t\n     3\t\tprint(os.sep)"


@pytest.mark.anyio
async def test_absolute_path_and_last_line_without_newline(workspace: Path) -> None:
    (workspace / "b.txt").write_text("one\ntwo", encoding="utf-8")

    assert await read(workspace, filePath=str(workspace / "b.txt")) == numbered(1, ["one", "two"])


@pytest.mark.anyio
async def test_offset_and_limit_with_a_note_to_continue(workspace: Path) -> None:
    lines = [f"line {n}" for n in range(1, 11)]
    (workspace / "ten.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    out = await read(workspace, filePath="ten.txt", offset=3, limit=4)

    assert out == numbered(3, lines[2:6]) + (
        "\n\n(Showing lines 3-6. The file has 10 lines in total. Use offset=7 to read more.)"
    )
    assert await read(workspace, filePath="ten.txt", offset=8) == numbered(8, lines[7:])
    assert await read(workspace, filePath="ten.txt", offset=0, limit=1) == numbered(1, lines[:1]) + (
        "\n\n(Showing lines 1-1. The file has 10 lines in total. Use offset=2 to read more.)"
    )


@pytest.mark.anyio
async def test_offset_past_the_end_is_a_tool_error(workspace: Path) -> None:
    (workspace / "short.txt").write_text("a\nb\n", encoding="utf-8")

    with pytest.raises(ToolError, match=r"offset 5 is past the end of short\.txt, which has 2 lines"):
        await read(workspace, filePath="short.txt", offset=5)
    (workspace / "one.txt").write_text("a", encoding="utf-8")
    with pytest.raises(ToolError, match=r"which has 1 line\. Use an offset between 1 and 1"):
        await read(workspace, filePath="one.txt", offset=2)


@pytest.mark.anyio
async def test_empty_file_is_a_note(workspace: Path) -> None:
    (workspace / "empty.txt").write_bytes(b"")

    assert await read(workspace, filePath="empty.txt") == "(The file empty.txt is empty: 0 lines.)"


@pytest.mark.anyio
async def test_long_lines_are_truncated_with_a_marker(workspace: Path) -> None:
    (workspace / "wide.txt").write_text("a" * (MAX_LINE_CHARS + 500) + "\nshort\n" + "b" * MAX_LINE_CHARS + "\n")

    lines = (await read(workspace, filePath="wide.txt")).splitlines()

    assert lines[0] == "     1\t" + "a" * MAX_LINE_CHARS + " [... line truncated: 500 more characters]"
    assert lines[1] == "     2\tshort"
    assert lines[2] == "     3\t" + "b" * MAX_LINE_CHARS


@pytest.mark.anyio
async def test_output_is_capped_even_when_limit_allows_more(workspace: Path) -> None:
    (workspace / "dense.txt").write_text(("x" * 1000 + "\n") * 1000, encoding="utf-8")

    out = await read(workspace, filePath="dense.txt")

    assert len(out) < MAX_OUTPUT_CHARS + 300
    shown = len(re.findall(r"^ *\d+\t", out, flags=re.MULTILINE))
    assert f"Output stopped at {MAX_OUTPUT_CHARS // 1000}k characters" in out
    assert f"Use offset={shown + 1} to read more." in out


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xef\xbb\xbfhello\r\nw\xc3\xb6rld\r\n", ["hello", "wörld"]),
        ("h\u00e9llo\nsnow \u2603\n".encode("utf-16"), ["héllo", "snow ☃"]),
        (b"caf\xe9 cr\xe8me\nna\xefve\n", ["café crème", "naïve"]),
        (b"ok\nbad \xff byte later\n".rjust(20_000, b"#"), None),
    ],
    ids=["utf8-bom-crlf", "utf16-bom", "latin1", "late-invalid-utf8"],
)
async def test_decoding(workspace: Path, data: bytes, expected: list[str] | None) -> None:
    (workspace / "t.txt").write_bytes(data)

    out = await read(workspace, filePath="t.txt")

    if expected is None:
        assert out.splitlines()[-1] == "     2\tbad \ufffd byte later"
    else:
        assert out == numbered(1, expected)


@pytest.mark.anyio
async def test_utf16_file_read_in_parts_counts_its_lines(workspace: Path) -> None:
    (workspace / "w.txt").write_bytes("".join(f"z\u00e9{n}\n" for n in range(1, 6)).encode("utf-16"))

    out = await read(workspace, filePath="w.txt", offset=2, limit=2)

    assert out == numbered(2, ["zé2", "zé3"]) + (
        "\n\n(Showing lines 2-3. The file has 5 lines in total. Use offset=4 to read more.)"
    )


@pytest.mark.anyio
async def test_binary_files_are_refused_with_size_and_type(workspace: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    (workspace / "logo.png").write_bytes(png)
    (workspace / "blob").write_bytes(bytes(range(1, 32)) * 100)  # no NUL, but control bytes throughout
    (workspace / "archive.tar").write_bytes(b"x" * 600 + b"\x00" * 1000)

    with pytest.raises(ToolError, match=r"logo\.png is a binary file \(PNG image, 1\.0 KiB\)") as info:
        await read(workspace, filePath="logo.png")
    assert "only reads text" in str(info.value)
    with pytest.raises(ToolError, match=r"blob is a binary file \(unknown binary type, 3\.0 KiB\)"):
        await read(workspace, filePath="blob")
    with pytest.raises(ToolError, match=r"archive\.tar is a binary file \(application/x-tar"):
        await read(workspace, filePath="archive.tar")


@pytest.mark.anyio
async def test_directory_is_a_tool_error_suggesting_glob(workspace: Path) -> None:
    (workspace / "pkg").mkdir()

    with pytest.raises(ToolError, match=r"pkg is a directory.*Use glob"):
        await read(workspace, filePath="pkg")


@pytest.mark.anyio
async def test_missing_file_suggests_similar_names(workspace: Path) -> None:
    (workspace / "src").mkdir()
    for name in ("config.py", "Config.yaml", "unrelated.txt"):
        (workspace / "src" / name).write_text("x\n", encoding="utf-8")

    with pytest.raises(ToolError, match=r"File not found: src/confg\.py") as info:
        await read(workspace, filePath="src/confg.py")
    assert "Did you mean: src/config.py" in str(info.value)
    assert "unrelated" not in str(info.value)
    with pytest.raises(ToolError, match="directory does not exist either"):
        await read(workspace, filePath="nope/file.py")
    with pytest.raises(ToolError, match=r"File not found: zzz\.md\. Use glob"):
        await read(workspace, filePath="zzz.md")


@pytest.mark.anyio
async def test_paths_outside_the_workspace_are_refused(tmp_path: Path, workspace: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n", encoding="utf-8")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "real.txt").write_text("inside\n", encoding="utf-8")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")

    for path in ("../secret.txt", str(secret), "link.txt", "/etc/hostname"):
        with pytest.raises(ToolError, match="outside the workspace"):
            await read(workspace, filePath=path)
    assert await read(workspace, filePath="alias.txt") == "     1\tinside"


@pytest.mark.anyio
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
async def test_fifo_is_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")

    with anyio.fail_after(5), pytest.raises(ToolError, match="not a regular file"):
        await read(workspace, filePath="pipe")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [{}, {"filePath": ""}, {"filePath": "a", "limit": 0}, {"filePath": "a", "offset": -1}, {"file_path": "a"}],
)
async def test_invalid_arguments_are_tool_errors(workspace: Path, arguments: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="Invalid arguments for read"):
        await read(workspace, **arguments)


def _write_numbered_lines(path: Path, count: int) -> None:
    line = b"%07d " + b"z" * 91 + b"\n"  # 100 bytes per line
    with open(path, "wb") as handle:
        for start in range(0, count, 10_000):
            handle.write(b"".join(line % n for n in range(start + 1, start + 10_001)))


@pytest.mark.anyio
async def test_huge_file_streams_only_what_is_shown(workspace: Path) -> None:
    total = 500_000
    _write_numbered_lines(workspace / "huge.log", total)
    assert (workspace / "huge.log").stat().st_size == 50_000_000

    tracemalloc.start()
    try:
        first = await read(workspace, filePath="huge.log")
        near_end = await read(workspace, filePath="huge.log", offset=total - 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    lines = first.splitlines()
    assert lines[0] == "     1\t0000001 " + "z" * 91
    assert lines[1999] == "  2000\t0002000 " + "z" * 91
    assert lines[-1] == "(Showing lines 1-2000. The file has 500000 lines in total. Use offset=2001 to read more.)"
    assert near_end.splitlines() == [
        f"{total - 1:>6}\t{total - 1:07d} " + "z" * 91,
        f"{total:>6}\t{total:07d} " + "z" * 91,
    ]
    assert peak < 8 * 1024 * 1024


@pytest.mark.anyio
async def test_a_single_enormous_line_is_not_loaded_whole(workspace: Path) -> None:
    (workspace / "one-line.json").write_bytes(b"[" + b"1," * 10_000_000 + b"1]\nsecond\n")

    tracemalloc.start()
    try:
        out = await read(workspace, filePath="one-line.json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    first, second = out.splitlines()
    assert first.startswith("     1\t[1,1,") and first.endswith(" [... line truncated: 19998003 more characters]")
    assert second == "     2\tsecond"
    assert peak < 8 * 1024 * 1024


@pytest.mark.anyio
async def test_concurrent_reads(workspace: Path) -> None:
    for n in range(30):
        (workspace / f"f{n}.txt").write_text(f"file {n}\n", encoding="utf-8")
    results: dict[int, str] = {}

    async def one(n: int) -> None:
        results[n] = await read(workspace, filePath=f"f{n}.txt")

    async with anyio.create_task_group() as tg:
        for n in range(30):
            tg.start_soon(one, n)

    assert results == {n: f"     1\tfile {n}" for n in range(30)}


def test_spec_is_strict_and_described() -> None:
    spec = ReadTool().spec()

    assert spec.name == "read"
    assert set(spec.parameters_json_schema["properties"]) == {"filePath", "offset", "limit"}
    assert spec.parameters_json_schema["required"] == ["filePath"]
    assert spec.parameters_json_schema["additionalProperties"] is False
    assert "glob" in spec.description and "grep" in spec.description
    assert 8 <= len(spec.description.splitlines()) <= 25
