"""The memory tool on real files: hot cache and deep store, both scopes, search, list, and key escapes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cowork.policy import PathPolicy
from cowork.tools._base import ToolContext, ToolError
from cowork.tools._memory import MemoryTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "cowork-home"
    root.mkdir()
    return root.resolve()


def context(ws: Path, home: Path | None) -> ToolContext:
    return ToolContext(workspace=ws, paths=PathPolicy.build(ws, home=home), home=home)


async def memory(ctx: ToolContext, **arguments: Any) -> str:
    tool = MemoryTool()
    return await tool.run(tool.parse(arguments), ctx)


@pytest.mark.anyio
async def test_reading_a_missing_hot_cache_is_a_friendly_note(ws: Path) -> None:
    out = await memory(context(ws, None), action="read")

    assert out.startswith("There is no project hot cache (AGENT.md) yet.")


@pytest.mark.anyio
async def test_hot_cache_write_and_read_in_the_workspace(ws: Path) -> None:
    ctx = context(ws, None)

    assert await memory(ctx, action="write", content="# Memory\nJT = John Taylor\n") == (
        "Created project memory AGENT.md (2 lines)."
    )
    assert (ws / "AGENT.md").read_text(encoding="utf-8") == "# Memory\nJT = John Taylor\n"
    assert await memory(ctx, action="read", key="AGENT.md") == "# Memory\nJT = John Taylor\n"
    assert await memory(ctx, action="write", key="AGENT.md", content="short\n") == (
        "Updated project memory AGENT.md (1 line)."
    )


@pytest.mark.anyio
async def test_a_long_hot_cache_is_written_with_a_warning(ws: Path) -> None:
    out = await memory(context(ws, None), action="write", content="".join(f"fact {n}\n" for n in range(120)))

    assert "Warning: the hot cache is loaded into every conversation and now has 120 lines" in out
    assert (ws / "AGENT.md").exists()


@pytest.mark.anyio
async def test_deep_store_keys_map_to_markdown_files(ws: Path) -> None:
    ctx = context(ws, None)

    out = await memory(ctx, action="write", key="people/sarah", content="Sarah Chen, CFO. Prefers email.\n")

    assert out == "Created project memory people/sarah.md (1 line)."
    assert (ws / ".cowork" / "memory" / "people" / "sarah.md").read_text(encoding="utf-8").startswith("Sarah")
    assert await memory(ctx, action="read", key="people/sarah.md") == "Sarah Chen, CFO. Prefers email.\n"
    assert await memory(ctx, action="read", key="memory/people/sarah") == "Sarah Chen, CFO. Prefers email.\n"


@pytest.mark.anyio
async def test_a_missing_key_lists_what_exists(ws: Path) -> None:
    ctx = context(ws, None)
    await memory(ctx, action="write", key="glossary", content="P&L: profit and loss\n")

    with pytest.raises(ToolError, match=r"No project memory named 'people/bob.md'. Existing memory files: glossary.md"):
        await memory(ctx, action="read", key="people/bob")
    await memory(ctx, action="write", key="people/x", content="x")
    with pytest.raises(ToolError, match=r"people/ is a category folder; read one of its files: people/x\.md"):
        await memory(ctx, action="read", key="people")


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["../x", "/etc/x", "a/../../x", "~/x", "..", "memory/../../AGENT", "a\\b", "."])
async def test_keys_that_leave_the_store_are_refused(ws: Path, key: str) -> None:
    ctx = context(ws, None)

    with pytest.raises(ToolError, match="Invalid memory key"):
        await memory(ctx, action="write", key=key, content="pwned")
    with pytest.raises(ToolError, match="Invalid memory key"):
        await memory(ctx, action="read", key=key)
    assert not (ws / ".cowork" / "x.md").exists()
    assert not (ws / "x.md").exists()


@pytest.mark.anyio
async def test_a_symlink_out_of_the_store_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / ".cowork" / "memory").mkdir(parents=True)
    (ws / ".cowork" / "memory" / "link").symlink_to(outside)

    with pytest.raises(ToolError, match="resolves outside the memory store"):
        await memory(context(ws, None), action="write", key="link/x", content="x")
    assert list(outside.iterdir()) == []


@pytest.mark.anyio
async def test_user_scope_lives_in_the_cowork_home(ws: Path, home: Path) -> None:
    ctx = context(ws, home)

    await memory(ctx, action="write", scope="user", content="User prefers metric units.\n")
    await memory(ctx, action="write", scope="user", key="people/ana", content="Ana: manager\n")

    assert (home / "AGENT.md").read_text(encoding="utf-8") == "User prefers metric units.\n"
    assert (home / "memory" / "people" / "ana.md").exists()
    assert await memory(ctx, action="read", scope="user", key="people/ana") == "Ana: manager\n"
    assert not (ws / "AGENT.md").exists()


@pytest.mark.anyio
async def test_user_scope_needs_a_home(ws: Path) -> None:
    with pytest.raises(ToolError, match="User-scope memory is not available"):
        await memory(context(ws, None), action="read", scope="user")


@pytest.mark.anyio
async def test_user_scope_is_refused_when_the_path_policy_does_not_allow_it(ws: Path, home: Path) -> None:
    ctx = ToolContext(workspace=ws, paths=PathPolicy.build(ws), home=home)

    with pytest.raises(ToolError, match="outside the workspace"):
        await memory(ctx, action="write", scope="user", content="x")


@pytest.mark.anyio
async def test_search_covers_the_hot_cache_and_the_store_of_both_scopes(ws: Path, home: Path) -> None:
    ctx = context(ws, home)
    await memory(ctx, action="write", content="# Team\nJT = John Taylor (finance)\n")
    await memory(ctx, action="write", key="projects/q3", content="Q3 P&L variance\nowner: jt\n")
    await memory(ctx, action="write", key="glossary", scope="user", content="JT: see people/jt\n")

    out = await memory(ctx, action="search", query="jt")

    assert out.splitlines() == [
        "[project] AGENT.md:2: JT = John Taylor (finance)",
        "[project] projects/q3.md:2: owner: jt",
        "[user] glossary.md:1: JT: see people/jt",
    ]
    assert await memory(ctx, action="search", query="JT", scope="user") == "glossary.md:1: JT: see people/jt"


@pytest.mark.anyio
async def test_search_limits_and_misses(ws: Path) -> None:
    ctx = context(ws, None)
    await memory(ctx, action="write", key="many", content="".join(f"item {n}\n" for n in range(70)))

    out = await memory(ctx, action="search", query="ITEM")

    assert len(out.splitlines()) == 51
    assert out.splitlines()[-1] == "(20 more matches not shown; search for something more specific.)"
    assert (await memory(ctx, action="search", query="zebra")).startswith(
        "Nothing found for 'zebra' in project memory."
    )
    with pytest.raises(ToolError, match="non-empty `query`"):
        await memory(ctx, action="search", query="  ")


@pytest.mark.anyio
async def test_list_shows_memory_files_with_sizes(ws: Path, home: Path) -> None:
    ctx = context(ws, home)
    await memory(ctx, action="write", content="hot\n")
    await memory(ctx, action="write", key="people/sarah", content="x" * 2000)
    await memory(ctx, action="write", key="glossary", content="g\n")

    out = await memory(ctx, action="list")

    assert out.splitlines() == [
        f"Project memory (hot cache {ws / 'AGENT.md'}, store {ws / '.cowork' / 'memory'}/):",
        "- AGENT.md (4 bytes)",
        "- glossary.md (2 bytes)",
        "- people/sarah.md (2.0 KiB)",
        f"User memory (hot cache {home / 'AGENT.md'}, store {home / 'memory'}/):",
        "- (empty)",
    ]


@pytest.mark.anyio
async def test_write_needs_content(ws: Path) -> None:
    with pytest.raises(ToolError, match="write needs `content`"):
        await memory(context(ws, None), action="write", key="glossary")


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors(ws: Path) -> None:
    with pytest.raises(ToolError, match="action"):
        await memory(context(ws, None), action="delete")
    with pytest.raises(ToolError, match="scope"):
        await memory(context(ws, None), action="read", scope="global")


def test_only_writes_have_side_effects() -> None:
    tool = MemoryTool()

    assert tool.side_effects_of({"action": "write", "content": "x"}) is True
    assert not any(tool.side_effects_of({"action": a}) for a in ("read", "search", "list"))
    assert tool.side_effects is False


@pytest.mark.anyio
async def test_link_loops_in_the_store_are_skipped_or_refused(ws: Path) -> None:
    ctx = context(ws, None)
    await memory(ctx, action="write", key="glossary", content="loop test\n")
    store = ws / ".cowork" / "memory"
    (store / "loop.md").symlink_to(store / "loop.md")

    assert await memory(ctx, action="search", query="loop") == "glossary.md:1: loop test"
    with pytest.raises(ToolError):
        await memory(ctx, action="write", key="loop", content="x")
