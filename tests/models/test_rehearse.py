"""The warm-up's rehearsal: one canned Chat Completions request through the model's classes, inside the process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cowork.models import ModelTarget
from cowork.models._rehearse import rehearse
from cowork.tools import builtin_tools

pytestmark = pytest.mark.anyio

# A port nothing listens on: a rehearsal that tried the network would fail.
UNREACHABLE = "http://127.0.0.1:9/v1"


async def test_a_chat_target_is_rehearsed_without_the_network() -> None:
    target = ModelTarget("openai", "mock-model", "openai-chat", UNREACHABLE, "sk-test")
    assert await rehearse(target, builtin_tools().specs()) is True
    assert await rehearse(target, []) is True  # no tools: text only


@pytest.mark.parametrize("family", ["openai", "anthropic", "google"])
async def test_other_families_are_left_to_the_imports(family: str) -> None:
    target = ModelTarget("x", "mock-model", family, UNREACHABLE, "sk-test")  # type: ignore[arg-type]
    assert await rehearse(target, builtin_tools().specs()) is False


PROBE = """
import asyncio, json
from openai.types.chat import ChatCompletionChunk
from cowork.models import ModelTarget
from cowork.models._raw import fast_adapter
from cowork.models._rehearse import rehearse
from cowork.tools import builtin_tools

adapter = fast_adapter(ChatCompletionChunk)
before = adapter.pydantic_complete
target = ModelTarget("openai", "mock-model", "openai-chat", "http://127.0.0.1:9/v1", "sk-test")
asyncio.run(rehearse(target, builtin_tools().specs()))
print(json.dumps([before, adapter.pydantic_complete]))
"""


def test_the_rehearsal_builds_what_the_first_request_would() -> None:
    """In a fresh process the streamed chunk's validator is built on first use; after the rehearsal it is built."""
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [False, True]
