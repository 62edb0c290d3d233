"""The glob tool against real directory trees: ordering, .gitignore, symlinks, limits and bad input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from cowork.tools._base import ToolContext, ToolError
from cowork.tools._glob import MAX_RESULTS, GlobTool
from cowork.tools._grep import find_rg


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write(path: Path, text: str = "x\n", mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def glob(workspace: Path, tool: GlobTool | None = None, **arguments: Any) -> str:
    tool = tool or GlobTool()
    return await tool.run(tool.parse(arguments), ToolContext(workspace=workspace))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.anyio
async def test_newest_first_ties_by_path(workspace: Path) -> None:
    write(workspace / "old.py", mtime=1_000)
    write(workspace / "src" / "new.py", mtime=3_000)
    write(workspace / "src" / "b_mid.py", mtime=2_000)
    write(workspace / "src" / "a_mid.py", mtime=2_000)
    write(workspace / "notes.txt", mtime=4_000)

    out = await glob(workspace, pattern="**/*.py")

    assert out.splitlines() == ["src/new.py", "src/a_mid.py", "src/b_mid.py", "old.py"]


@pytest.mark.anyio
async def test_star_matches_one_level_and_double_star_any_depth(workspace: Path) -> None:
    write(workspace / "top.py")
    write(workspace / "pkg" / "inner.py")
    write(workspace / "pkg" / "deep" / "deeper.py")

    assert (await glob(workspace, pattern="*.py")).splitlines() == ["top.py"]
    assert sorted((await glob(workspace, pattern="**/*.py")).splitlines()) == [
        "pkg/deep/deeper.py",
        "pkg/inner.py",
        "top.py",
    ]
    assert sorted((await glob(workspace, pattern="pkg/**")).splitlines()) == ["pkg/deep/deeper.py", "pkg/inner.py"]


@pytest.mark.anyio
async def test_braces_classes_and_question_mark(workspace: Path) -> None:
    for name in ("a1.ts", "b2.tsx", "c3.js", "d4.json", "ab.ts"):
        write(workspace / "src" / name)

    assert sorted((await glob(workspace, pattern="src/*.{ts,tsx}")).splitlines()) == [
        "src/a1.ts",
        "src/ab.ts",
        "src/b2.tsx",
    ]
    assert (await glob(workspace, pattern="src/[!ab]?.js")).splitlines() == ["src/c3.js"]
    assert (await glob(workspace, pattern="src/?[0-9].json")).splitlines() == ["src/d4.json"]
    assert sorted((await glob(workspace, pattern="{src/a*,src/c*}")).splitlines()) == [
        "src/a1.ts",
        "src/ab.ts",
        "src/c3.js",
    ]


@pytest.mark.anyio
async def test_path_narrows_the_search_and_output_stays_workspace_relative(workspace: Path) -> None:
    write(workspace / "src" / "app" / "test_main.ts")
    write(workspace / "src" / "app" / "main.ts")
    write(workspace / "other" / "test_other.ts")

    assert (await glob(workspace, pattern="**/test_*.ts", path="src")).splitlines() == ["src/app/test_main.ts"]
    absolute = await glob(workspace, pattern="**/test_*.ts", path=str(workspace / "src" / "app"))
    assert absolute.splitlines() == ["src/app/test_main.ts"]
    assert (await glob(workspace, pattern="src/**/test_*.ts")).splitlines() == ["src/app/test_main.ts"]


@pytest.mark.anyio
async def test_absolute_pattern_inside_the_search_directory_is_accepted(workspace: Path) -> None:
    write(workspace / "src" / "a.py")

    assert (await glob(workspace, pattern=f"{workspace}/src/*.py")).splitlines() == ["src/a.py"]


@pytest.mark.anyio
async def test_gitignore_root_and_nested_and_git_dir(workspace: Path) -> None:
    write(workspace / ".gitignore", "*.log\nbuild/\n/secret.txt\n!keep.log\n")
    write(workspace / "pkg" / ".gitignore", "generated_*\n")
    write(workspace / "app.log")
    write(workspace / "keep.log")
    write(workspace / "build" / "out.txt")
    write(workspace / "secret.txt")
    write(workspace / "pkg" / "secret.txt")  # `/secret.txt` is anchored to the root
    write(workspace / "pkg" / "generated_x.py")
    write(workspace / "pkg" / "real.py")
    write(workspace / "other" / "generated_y.py")  # the nested rule only covers pkg/
    write(workspace / ".git" / "config")
    write(workspace / ".env")

    out = sorted((await glob(workspace, pattern="**/*")).splitlines())

    assert out == [
        ".env",
        ".gitignore",
        "keep.log",
        "other/generated_y.py",
        "pkg/.gitignore",
        "pkg/real.py",
        "pkg/secret.txt",
    ]


@pytest.mark.anyio
async def test_nested_gitignore_can_re_include(workspace: Path) -> None:
    write(workspace / ".gitignore", "*.gen\n")
    write(workspace / "sub" / ".gitignore", "!wanted.gen\n")
    write(workspace / "sub" / "wanted.gen")
    write(workspace / "sub" / "other.gen")

    assert (await glob(workspace, pattern="**/*.gen")).splitlines() == ["sub/wanted.gen"]


@pytest.mark.anyio
async def test_explicit_path_into_an_ignored_directory_is_listed(workspace: Path) -> None:
    write(workspace / ".gitignore", "vendor/\n*.tmp\n")
    write(workspace / "vendor" / "lib" / "mod.py")

    assert (await glob(workspace, pattern="**/*.py")).startswith("No files match")
    assert (await glob(workspace, pattern="**/*.py", path="vendor/lib")).splitlines() == ["vendor/lib/mod.py"]


@pytest.mark.anyio
async def test_walk_agrees_with_rg_files(workspace: Path) -> None:
    """The .gitignore handling shared by glob and grep's fallback lists exactly what ripgrep lists."""
    rg = find_rg()
    if rg is None:
        pytest.skip("ripgrep is not installed")
    write(workspace / ".gitignore", "*.o\n/dist\ncache/\n!important.o\n")
    write(workspace / "a" / ".gitignore", "*.md\n!README.md\n")
    for rel in (
        "main.c",
        "main.o",
        "important.o",
        "dist/x.js",
        "src/dist/y.js",
        "cache/c.bin",
        "a/cache/d.txt",
        "a/README.md",
        "a/notes.md",
        "a/b/deep.md",
        ".hidden/h.txt",
        "a-b.txt",
        "a.txt",
    ):
        write(workspace / rel)
    write(workspace / ".git" / "HEAD")

    listed = (await glob(workspace, pattern="**")).splitlines()
    completed = await anyio.run_process(
        [rg, "--no-config", "--files", "--hidden", "--no-require-git", "--no-ignore-dot", "--glob=!.git"],
        cwd=workspace,
    )
    rg_listed = completed.stdout.decode().splitlines()

    assert sorted(listed) == sorted(rg_listed)
    assert "important.o" in listed and "src/dist/y.js" in listed and "a/README.md" in listed


@pytest.mark.anyio
async def test_symlinks_never_lead_outside_the_workspace(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    write(outside / "leak.py")
    write(workspace / "inside" / "real.py")
    (workspace / "linked_dir").symlink_to(outside, target_is_directory=True)
    (workspace / "leak_link.py").symlink_to(outside / "leak.py")
    (workspace / "alias.py").symlink_to(workspace / "inside" / "real.py")
    (workspace / "loop").symlink_to(workspace, target_is_directory=True)

    out = sorted((await glob(workspace, pattern="**/*.py")).splitlines())

    assert out == ["alias.py", "inside/real.py"]
    with pytest.raises(ToolError, match="outside the workspace"):
        await glob(workspace, pattern="*", path="linked_dir")


@pytest.mark.anyio
async def test_results_are_capped_with_a_note(workspace: Path) -> None:
    for index in range(MAX_RESULTS + 7):
        write(workspace / "many" / f"f{index:03}.txt", mtime=10_000 + index)

    lines = (await glob(workspace, pattern="many/*.txt")).splitlines()

    assert len(lines) == MAX_RESULTS + 1
    assert lines[0] == f"many/f{MAX_RESULTS + 6:03}.txt"
    assert "7 more matching files omitted" in lines[-1]
    assert "more specific pattern" in lines[-1]


@pytest.mark.anyio
async def test_no_match_is_a_message_with_a_hint(workspace: Path) -> None:
    write(workspace / "pkg" / "mod.py")

    out = await glob(workspace, pattern="*.py")

    assert out.startswith("No files match '*.py'")
    assert "'**/*.py'" in out


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pattern": "src/[abc"}, "Invalid glob pattern"),
        ({"pattern": "{a,b"}, "Invalid glob pattern"),
        ({"pattern": "../*"}, "contains '..'"),
        ({"pattern": "/etc/*"}, "not under the search directory"),
        ({"pattern": "*", "path": ".."}, "outside the workspace"),
        ({"pattern": "*", "path": "/etc"}, "outside the workspace"),
        ({"pattern": "*", "path": "file.txt"}, "must be a directory"),
        ({"pattern": "*", "path": "missing"}, "Directory not found"),
        ({"pattern": ""}, "Invalid arguments"),
        ({"pattern": "*", "recursive": True}, "Invalid arguments"),
        ({}, "Invalid arguments"),
    ],
)
async def test_bad_input_is_a_tool_error(workspace: Path, arguments: dict[str, Any], message: str) -> None:
    write(workspace / "file.txt")

    with pytest.raises(ToolError, match=message):
        await glob(workspace, **arguments)


@pytest.mark.anyio
async def test_timeout_is_a_tool_error(workspace: Path) -> None:
    write(workspace / "a.txt")

    with pytest.raises(ToolError, match="took longer"):
        await glob(workspace, GlobTool(timeout=0), pattern="**/*")


def test_spec_is_strict_and_described() -> None:
    spec = GlobTool().spec()

    assert spec.name == "glob"
    assert set(spec.parameters_json_schema["properties"]) == {"pattern", "path"}
    assert spec.parameters_json_schema["required"] == ["pattern"]
    assert spec.parameters_json_schema["additionalProperties"] is False
    assert "grep" in spec.description and "read" in spec.description
    assert 8 <= len(spec.description.splitlines()) <= 25
