"""Security scenarios: a real server, a scripted model that attempts an attack, and a record of what happened.

`Attack` runs one turn in which the model makes the given tool calls (each step's calls at once), answers
every approval request with a callback (by default: approve), and returns everything the turn produced, so a
test can assert what was asked, how it was marked, and that a secret never reached the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowork.protocol import ApprovalRequested, OperationStatusChanged, SessionEvent, ToolResult

from .client import EventClient
from .mockllm import MockLLMServer, MockResponse, MockToolCall
from .server import ServerProcess, provider_env
from .transcripts import payloads

__all__ = ["Attack", "TurnRecord", "bash", "call"]


def call(name: str, **arguments: Any) -> MockToolCall:
    return MockToolCall(name=name, arguments=arguments)


def bash(command: str) -> MockToolCall:
    return call("bash", command=command)


@dataclass
class TurnRecord:
    """What one turn produced."""

    events: list[SessionEvent]
    status: str

    @property
    def approvals(self) -> list[ApprovalRequested]:
        return payloads(self.events, ApprovalRequested)

    @property
    def results(self) -> list[ToolResult]:
        return payloads(self.events, ToolResult)

    def text(self) -> str:
        """Every event as JSON: what the conversation (and so the model) could have seen."""
        return "\n".join(json.dumps(e.model_dump(mode="json", by_alias=True)) for e in self.events)


@dataclass
class Attack:
    """A real Cowork server on `home` and `workspace`, driven by `mock` (see the module docstring)."""

    home: Path
    workspace: Path
    mock: MockLLMServer
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()

    def server(self) -> ServerProcess:
        environment = provider_env("openai", self.mock.openai_base_url) | self.env
        return ServerProcess(self.home, self.workspace, env=environment, args=self.args)

    async def turn(
        self,
        server: ServerProcess,
        steps: Sequence[Sequence[MockToolCall]],
        *,
        answer: Callable[[ApprovalRequested], bool] = lambda _request: True,
        session: dict[str, Any] | None = None,
        within: float = 60,
    ) -> TurnRecord:
        """One turn: the model makes each step's calls, then says "done"; approvals are answered by `answer`."""
        self.mock.set_script([MockResponse(tool_calls=list(step)) for step in steps] + [MockResponse(text="done")])
        client = await EventClient.connect(server.address)
        try:
            sid = (await client.call("session/create", session or {}))["id"]
            started = await client.call("turn/start", {"sessionId": sid, "text": "go", "clientMessageId": "attack"})
            operation = started["operationId"]
            answered: set[str] = set()

            def settled(events: list[SessionEvent]) -> bool:
                return any(
                    s.operation_id == operation and s.status.has_stopped
                    for s in payloads(events, OperationStatusChanged)
                ) or any(a.request_id not in answered for a in payloads(events, ApprovalRequested))

            while True:
                await client.wait_for(settled, within=within)
                waiting = [a for a in payloads(client.events, ApprovalRequested) if a.request_id not in answered]
                if not waiting:
                    break
                for request in waiting:
                    answered.add(request.request_id)
                    approved = answer(request)
                    await client.call("approval/respond", {"requestId": request.request_id, "approved": approved})
            info = await client.call("operation/get", {"operationId": operation})
            return TurnRecord(list(client.events), info["status"])
        finally:
            await client.close()
