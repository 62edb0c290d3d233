"""Working memory (`cowork.memory.WorkingMemory`) on a real database: keys normalised, values kept to one line,
every change all or nothing within the limits, and the prompt section rendered from what is stored."""

from __future__ import annotations

import pytest

from cowork.memory import MAX_ENTRIES, MAX_VALUE_CHARS, ProfileError, WorkingMemory, normalize_key, render_profile
from cowork.store import Database

pytestmark = pytest.mark.anyio


def test_keys_are_normalised_or_refused() -> None:
    assert normalize_key(" Communication style ") == "communication_style"
    assert normalize_key("current-goals") == "current_goals"
    for bad in ("", "  ", "9lives", "a/b", "x" * 49, "ünïcode", "../etc"):
        with pytest.raises(ProfileError) as refused:
            normalize_key(bad)
        assert refused.value.code == "invalid_params"


async def test_set_correct_and_remove_entries(db: Database) -> None:
    memory = WorkingMemory(db)
    assert await memory.entries() == [] and await memory.render() == ""
    after = await memory.change({"Name": "Ada", "role": "finance\nlead  "}, source="user")
    assert [(e.key, e.value, e.source) for e in after] == [("name", "Ada", "user"), ("role", "finance lead", "user")]
    after = await memory.change({"role": "CFO"}, ["name"], source="agent")
    assert [(e.key, e.value, e.source) for e in after] == [("role", "CFO", "agent")]
    assert await WorkingMemory(db).entries() == after  # stored, not cached
    section = await memory.render()
    assert "# The user (working memory)" in section and section.endswith("- role: CFO\n")


async def test_a_refused_change_changes_nothing(db: Database) -> None:
    memory = WorkingMemory(db)
    await memory.change({"name": "Ada"}, source="user")
    cases: list[tuple[dict[str, str], list[str], str]] = [
        ({"role": "x"}, ["nickname"], "memory_not_found"),  # a removal of what is not there fails the whole change
        ({"role": "x" * (MAX_VALUE_CHARS + 1)}, [], "invalid_params"),
        ({"role": "   "}, [], "invalid_params"),
        ({"bad key!": "x"}, [], "invalid_params"),
        ({}, [], "invalid_params"),
        ({f"k{i}": "v" for i in range(MAX_ENTRIES)}, [], "invalid_params"),  # 41 entries with `name`
        ({f"k{i}": "v" * 400 for i in range(20)}, [], "invalid_params"),  # past the total
    ]
    for set_, remove, code in cases:
        with pytest.raises(ProfileError) as refused:
            await memory.change(set_, remove, source="agent")
        assert refused.value.code == code, set_
    assert [(e.key, e.value) for e in await memory.entries()] == [("name", "Ada")]


def test_an_empty_profile_renders_nothing() -> None:
    assert render_profile([]) == ""
