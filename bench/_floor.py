"""The floor the turn benchmarks compare against: a raw Chat Completions client running the same tools, nothing else.

`RawLoop` posts request dicts it builds itself (the server's system prompt, the same tool definitions, the same
streaming options) with httpx, parses the SSE stream itself (one `json.loads` per `data:` line, accumulating text
and tool-call deltas), runs the same tool objects the server runs, and appends the assistant and tool messages to
its own list as it goes. No SDK, no event log, no WebSocket, no validation beyond the tools' own: what any agent has
to do to run the turn. A turn starts a fresh history, or continues one passed in (a long session); one `RawLoop`
may run many turns at once, each on its own history.
"""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from cowork.prompts import PromptVariables, gather_prompt_extras, render_system_prompt, skills_directories
from cowork.tools import ToolContext, builtin_tools

__all__ = ["MODEL", "QUESTION", "Message", "RawLoop", "system_prompt"]

MODEL = "mock-model"
QUESTION = "where is main?"

Message = dict[str, Any]


def system_prompt(workspace: Path, home: Path | None) -> str:
    """The system prompt the server sends for `workspace` with Cowork's home at `home` (default settings)."""
    return render_system_prompt(
        PromptVariables(
            working_directory=str(workspace),
            output_directory=str(workspace),
            uploads_directory=str(workspace / "uploads"),
            model_name=f"openai:{MODEL}",
            today=date.today(),
            skills_directory=skills_directories(workspace, home),
        ),
        extras=gather_prompt_extras(workspace, home),
    )


class RawLoop:
    """Turns of glob → grep → read → answer (whatever the mock scripts) over raw HTTP, in this process.

    Args:
        base_url: The mock's OpenAI base URL (ending in `/v1`).
        workspace: Where the tools run.
        home: Cowork's home of the server being compared with, so the system prompt names the same directories.
    """

    def __init__(self, base_url: str, workspace: Path, *, home: Path | None = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.registry = builtin_tools()
        self.tools = [
            {
                "type": "function",
                "function": {"name": s.name, "description": s.description, "parameters": s.parameters_json_schema},
            }
            for s in self.registry.specs()
        ]
        self.ctx = ToolContext(workspace=workspace)
        self.system: Message = {"role": "system", "content": system_prompt(workspace, home)}
        self.tool_seconds = 0.0
        """Time spent in the tools, summed over every turn (the part of the floor the server cannot shrink)."""
        # No pool limit: the concurrency bench runs hundreds of turns at once through this one client.
        self.http = httpx.AsyncClient(
            headers={"authorization": "Bearer bench"},
            timeout=httpx.Timeout(300.0),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
        )

    def new_history(self) -> list[Message]:
        return [self.system]

    async def turn(self, history: list[Message] | None = None, text: str = QUESTION) -> list[Message]:
        """Run one turn on `history` (a fresh one when None), appending to it; returns the history."""
        messages = self.new_history() if history is None else history
        messages.append({"role": "user", "content": text})
        while True:
            message = await self.request(messages)
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                return messages
            for call in calls:
                function = call["function"]
                tool = self.registry.get(function["name"])
                assert tool is not None, function["name"]
                start = time.perf_counter()
                content = await tool.run(tool.parse(json.loads(function["arguments"] or "{}")), self.ctx)
                self.tool_seconds += time.perf_counter() - start
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})

    async def request(self, messages: list[Message]) -> Message:
        """One streamed Chat Completions request; returns the assistant message it streamed."""
        body = {
            "model": MODEL,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "tools": self.tools,
            "tool_choice": "auto",
        }
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        arguments: dict[int, list[str]] = {}
        async with self.http.stream("POST", self.url, json=body) as response:
            if response.status_code != 200:
                raise RuntimeError(f"mock answered {response.status_code}: {(await response.aread())[:500]!r}")
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    break
                for choice in json.loads(data)["choices"]:
                    delta = choice["delta"]
                    if delta.get("content"):
                        text.append(delta["content"])
                    for part in delta.get("tool_calls") or ():
                        index = part["index"]
                        if index not in calls:
                            calls[index] = {"id": part["id"], "type": "function", "name": part["function"]["name"]}
                            arguments[index] = []
                        arguments[index].append(part["function"].get("arguments") or "")
        message: Message = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(arguments[index])},
                }
                for index, call in sorted(calls.items())
            ]
        return message

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
