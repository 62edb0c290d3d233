"""The edit tool on real files: unique and repeated matches, helpful misses, encodings and line endings kept."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cowork.policy import PathPolicy
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._edit import EditTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def edit(ws: Path, **arguments: Any) -> str:
    tool = EditTool()
    ctx = ToolContext(workspace=ws, paths=PathPolicy.build(ws, deny=(str(ws / "secret"),)))
    return await tool.run(tool.parse(arguments), ctx)


PY = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n"


@pytest.mark.anyio
async def test_replaces_a_unique_string_and_shows_the_changed_lines(ws: Path) -> None:
    (ws / "calc.py").write_text(PY, encoding="utf-8")

    out = await edit(ws, filePath="calc.py", oldString="result += item", newString="result += item * 2")

    assert (ws / "calc.py").read_text(encoding="utf-8") == PY.replace("+= item", "+= item * 2")
    assert out == (
        "Edited calc.py: 1 replacement.\n"
        "     1\tdef total(items):\n"
        "     2\t    result = 0\n"
        "     3\t    for item in items:\n"
        "     4\t        result += item * 2\n"
        "     5\t    return result"
    )


@pytest.mark.anyio
async def test_multiline_replacement_snippet_covers_the_new_lines(ws: Path) -> None:
    lines = [f"line {n}" for n in range(1, 21)]
    (ws / "t.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    out = await edit(ws, filePath="t.txt", oldString="line 10\nline 11\n", newString="ten\nten and a half\neleven\n")

    assert out.splitlines()[1:] == [
        "     7\tline 7",
        "     8\tline 8",
        "     9\tline 9",
        "    10\tten",
        "    11\tten and a half",
        "    12\televen",
        "    13\tline 12",
        "    14\tline 13",
        "    15\tline 14",
    ]


@pytest.mark.anyio
async def test_several_matches_need_replace_all(ws: Path) -> None:
    (ws / "c.py").write_text(PY, encoding="utf-8")

    with pytest.raises(ToolError, match=r"occurs 3 times in c.py \(at lines 2, 4, 5\).*replaceAll"):
        await edit(ws, filePath="c.py", oldString="result", newString="acc")
    assert (ws / "c.py").read_text(encoding="utf-8") == PY

    out = await edit(ws, filePath="c.py", oldString="result", newString="acc", replaceAll=True)

    assert out.startswith("Edited c.py: 3 replacements (showing the first).")
    assert (ws / "c.py").read_text(encoding="utf-8") == PY.replace("result", "acc")


@pytest.mark.anyio
async def test_a_miss_points_at_a_whitespace_only_difference(ws: Path) -> None:
    (ws / "c.py").write_text(PY.replace("    ", "\t"), encoding="utf-8")

    with pytest.raises(ToolError) as caught:
        await edit(ws, filePath="c.py", oldString="    for item in items:\n        result += item", newString="x")

    message = str(caught.value)
    assert "not found in c.py" in message
    assert "except for whitespace or indentation is at lines 3-4" in message


@pytest.mark.anyio
async def test_a_miss_points_at_a_case_difference_and_at_copied_line_numbers(ws: Path) -> None:
    (ws / "c.py").write_text(PY, encoding="utf-8")

    with pytest.raises(ToolError, match="differs only in upper/lower case is at line 5"):
        await edit(ws, filePath="c.py", oldString="RETURN result", newString="return 0")
    with pytest.raises(ToolError, match="line numbers copied from read"):
        await edit(ws, filePath="c.py", oldString="     5\t    return result", newString="return 0")


@pytest.mark.anyio
async def test_a_plain_miss_says_to_read_again(ws: Path) -> None:
    (ws / "c.py").write_text(PY, encoding="utf-8")

    with pytest.raises(ToolError, match=r"not found in c\.py\. Read the file again"):
        await edit(ws, filePath="c.py", oldString="nothing like this", newString="x")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("old", "new", "message"),
    [("same", "same", "identical"), ("", "x", "oldString is empty"), ("a\r\nb", "a\nb", "only in line endings")],
)
async def test_edits_that_change_nothing_are_refused(ws: Path, old: str, new: str, message: str) -> None:
    (ws / "f.txt").write_text("same\na\nb\n", encoding="utf-8")

    with pytest.raises(ToolError, match=message):
        await edit(ws, filePath="f.txt", oldString=old, newString=new)


@pytest.mark.anyio
async def test_missing_file_directory_and_binary_file_are_refused(ws: Path) -> None:
    (ws / "dir").mkdir()
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)

    with pytest.raises(ToolError, match=r"File not found: nope\.txt.*use write"):
        await edit(ws, filePath="nope.txt", oldString="a", newString="b")
    with pytest.raises(ToolError, match="is a directory"):
        await edit(ws, filePath="dir", oldString="a", newString="b")
    with pytest.raises(ToolError, match="binary file \\(PNG image\\)"):
        await edit(ws, filePath="img.png", oldString="PNG", newString="JPG")


@pytest.mark.anyio
async def test_paths_outside_the_workspace_or_denied_are_refused(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("a", encoding="utf-8")
    (ws / "secret").mkdir()
    (ws / "secret" / "k.txt").write_text("a", encoding="utf-8")

    with pytest.raises(ToolError, match="outside the workspace"):
        await edit(ws, filePath="../outside.txt", oldString="a", newString="b")
    with pytest.raises(ToolError, match="no tool may write"):
        await edit(ws, filePath="secret/k.txt", oldString="a", newString="b")
    assert (tmp_path / "outside.txt").read_text(encoding="utf-8") == "a"


@pytest.mark.anyio
async def test_crlf_files_stay_crlf(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"first\r\nsecond\r\nthird\r\n")

    await edit(ws, filePath="win.txt", oldString="first\nsecond\n", newString="one\ntwo\nthree\n")

    assert (ws / "win.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\nthird\r\n"


@pytest.mark.anyio
async def test_lf_files_stay_lf_even_when_the_model_sends_crlf(ws: Path) -> None:
    (ws / "unix.txt").write_bytes(b"first\nsecond\n")

    await edit(ws, filePath="unix.txt", oldString="first\r\nsecond", newString="1\r\n2")

    assert (ws / "unix.txt").read_bytes() == b"1\n2\n"


@pytest.mark.anyio
@pytest.mark.parametrize("ending", [b"", b"\n"])
async def test_the_final_newline_or_its_absence_is_kept(ws: Path, ending: bytes) -> None:
    (ws / "f.txt").write_bytes(b"alpha\nbeta" + ending)

    await edit(ws, filePath="f.txt", oldString="beta", newString="gamma")

    assert (ws / "f.txt").read_bytes() == b"alpha\ngamma" + ending


@pytest.mark.anyio
async def test_utf8_bom_is_kept(ws: Path) -> None:
    (ws / "bom.csv").write_bytes(codecs.BOM_UTF8 + "name,city\nZoë,Zürich\n".encode())

    await edit(ws, filePath="bom.csv", oldString="Zürich", newString="Genève")

    assert (ws / "bom.csv").read_bytes() == codecs.BOM_UTF8 + "name,city\nZoë,Genève\n".encode()


@pytest.mark.anyio
async def test_utf16_with_bom_is_kept(ws: Path) -> None:
    (ws / "w.txt").write_bytes(codecs.BOM_UTF16_LE + "hello\r\nwörld\r\n".encode("utf-16-le"))

    await edit(ws, filePath="w.txt", oldString="hello\nwörld", newString="hi\nthere")

    assert (ws / "w.txt").read_bytes() == codecs.BOM_UTF16_LE + "hi\r\nthere\r\n".encode("utf-16-le")


@pytest.mark.anyio
async def test_latin1_is_kept_and_unencodable_text_refused(ws: Path) -> None:
    (ws / "old.txt").write_bytes("café crème\nstraße\n".encode("latin-1"))

    await edit(ws, filePath="old.txt", oldString="crème", newString="brûlée")

    assert (ws / "old.txt").read_bytes() == "café brûlée\nstraße\n".encode("latin-1")
    with pytest.raises(ToolError, match="latin-1-encoded and cannot hold '€'"):
        await edit(ws, filePath="old.txt", oldString="café", newString="5 €")
    assert (ws / "old.txt").read_bytes() == "café brûlée\nstraße\n".encode("latin-1")


@pytest.mark.anyio
async def test_bytes_outside_the_edit_are_untouched_in_a_mostly_utf8_file(ws: Path) -> None:
    original = "naïve\n".encode() + b"legacy \xe9\xff\n"
    (ws / "mixed.txt").write_bytes(original)

    await edit(ws, filePath="mixed.txt", oldString="legacy", newString="modern")

    assert (ws / "mixed.txt").read_bytes() == original.replace(b"legacy", b"modern")


@pytest.mark.anyio
async def test_permission_bits_are_kept(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    script.chmod(0o755)

    await edit(ws, filePath="run.sh", oldString="hi", newString="hello")

    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert os.listdir(ws) == ["run.sh"]


@pytest.mark.anyio
async def test_deleting_the_whole_content_reports_an_empty_file(ws: Path) -> None:
    (ws / "f.txt").write_text("only", encoding="utf-8")

    out = await edit(ws, filePath="f.txt", oldString="only", newString="")

    assert out == "Edited f.txt: 1 replacement.\n(The file is now empty.)"


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors(ws: Path) -> None:
    with pytest.raises(ToolError, match="newString"):
        await edit(ws, filePath="f.txt", oldString="a")
    with pytest.raises(ToolError, match="Extra inputs"):
        await edit(ws, filePath="f.txt", oldString="a", newString="b", replace_all=True)


@pytest.mark.anyio
async def test_an_lf_stretch_in_a_crlf_file_still_matches(ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(b"a\r\nb\r\nc\r\npasted\nblock\nd\r\n")

    await edit(ws, filePath="mixed.txt", oldString="pasted\nblock", newString="new\ntext")

    assert (ws / "mixed.txt").read_bytes() == b"a\r\nb\r\nc\r\nnew\ntext\nd\r\n"
