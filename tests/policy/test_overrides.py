"""Per-tool policy overrides: listed with every tool, saved, read back by the next process, cleared by inherit."""

from __future__ import annotations

import pytest

from cowork.policy import ToolPolicies
from cowork.protocol import ErrorCode, ProtocolError, ToolSetPolicyParams
from cowork.store import Database
from cowork.tools import builtin_tools

pytestmark = pytest.mark.anyio


async def test_an_override_is_listed_applied_and_survives_a_restart(db: Database) -> None:
    tools = builtin_tools()
    policies = ToolPolicies(db, tools)
    await policies.load()
    infos = {info.name: info for info in policies.infos()}
    assert set(infos) == set(tools.names()) and {i.policy for i in infos.values()} == {"inherit"}
    assert infos["bash"].side_effects and infos["bash"].summary

    info = await policies.set(ToolSetPolicyParams(name="bash", policy="always"))
    assert info.policy == "always" and dict(policies.overrides()) == {"bash": "always"}

    again = ToolPolicies(db, tools)
    await again.load()
    assert dict(again.overrides()) == {"bash": "always"}
    await again.set(ToolSetPolicyParams(name="bash", policy="inherit"))
    assert dict(again.overrides()) == {}
    third = ToolPolicies(db, tools)
    await third.load()
    assert dict(third.overrides()) == {}


async def test_an_unknown_tool_is_refused_and_nothing_changes(db: Database) -> None:
    policies = ToolPolicies(db, builtin_tools())
    with pytest.raises(ProtocolError) as info:
        await policies.set(ToolSetPolicyParams(name="nope", policy="never"))
    assert info.value.code == ErrorCode.TOOL_NOT_FOUND and "bash" in info.value.message
    assert dict(policies.overrides()) == {}
