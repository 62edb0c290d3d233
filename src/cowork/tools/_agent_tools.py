"""Tools that talk to the runtime rather than the file system: `ask`, `todoWrite`, `spawnAgent`."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._base import Tool, ToolContext, ToolError

__all__ = ["AskTool", "SpawnAgentTool", "TodoWriteTool"]


class AskParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000, description="The question, complete and specific.")
    options: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="Suggested answers the user can pick from (they may still answer freely). 2-5 short options.",
    )


class AskTool(Tool[AskParams]):
    name = "ask"
    description = """Ask the user a question and wait for the answer.

Use it when you cannot go on without the user's input: an ambiguous request with several reasonable readings,
a choice only they can make (which file, which option, how far to go), or missing information (a name, a date,
a credential you must not guess). Offer `options` when the likely answers are few.

Do NOT use it:
- to ask permission for a tool call: risky tools already ask the user themselves;
- for questions you can answer by looking (use glob, grep, read first);
- to confirm you are done or to chat; just answer.

Ask one clear question at a time. The answer comes back as this tool's result."""
    params: ClassVar[type[BaseModel]] = AskParams
    asks_user: ClassVar[bool] = True

    async def run(self, params: AskParams, ctx: ToolContext) -> str:
        # The runtime answers `ask` calls itself (it parks the operation on the question); this only runs where
        # nobody can answer, such as inside a sub-agent.
        raise ToolError("There is no user to ask here. Decide with what you know, and say what you assumed.")


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=2000, description="The task, imperative: 'Run the tests'.")
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str = Field(
        min_length=1, max_length=2000, description="Present continuous, shown while it runs: 'Running the tests'."
    )


class TodoWriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(max_length=100, description="The whole list; it replaces the previous one.")

    @field_validator("todos")
    @classmethod
    def _one_in_progress(cls, todos: list[TodoItem]) -> list[TodoItem]:
        active = [t.content for t in todos if t.status == "in_progress"]
        if len(active) > 1:
            raise ValueError(
                f"at most one todo may be in_progress at a time, got {len(active)}: {active}. "
                "Finish one (completed) before starting the next."
            )
        return todos


class TodoWriteTool(Tool[TodoWriteParams]):
    name = "todoWrite"
    description = """Create and update your task list for the current work; the user sees it live.

Use it for work with 3 or more steps, or when the user gives several tasks: write the plan first, then keep it
current. Each call sends the WHOLE list and replaces the previous one.

Rules:
- Exactly one item `in_progress` while you work (never more than one); mark it `completed` as soon as it is done,
  then set the next one `in_progress`.
- Add items as you discover them; remove ones that no longer apply.
- Include a verification item (run the tests, re-read the result) for non-trivial changes.
- Each item has `content` ("Fix the parser") and `activeForm` ("Fixing the parser").

Do NOT use it for a single simple step or for pure questions; just do them."""
    params: ClassVar[type[BaseModel]] = TodoWriteParams

    async def run(self, params: TodoWriteParams, ctx: ToolContext) -> str:
        if ctx.set_todos is None:
            raise ToolError("The todo list is not available here.")
        await ctx.set_todos([t.model_dump() for t in params.todos])
        done = sum(t.status == "completed" for t in params.todos)
        current = next((t.activeForm for t in params.todos if t.status == "in_progress"), None)
        note = f" Now: {current}." if current else ""
        return f"Todo list updated: {done}/{len(params.todos)} completed.{note}"


class SpawnAgentParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agentType: Literal["explore", "research", "general"] = Field(
        description=(
            "explore: fast, read-only search of the workspace. research: web and read tools for finding and "
            "synthesising information. general: every tool except spawning, for a self-contained sub-task."
        )
    )
    task: str = Field(
        min_length=1,
        max_length=20_000,
        description="The complete task: what to find or do, what to return. The sub-agent sees nothing else.",
    )
    model: str | None = Field(default=None, max_length=200, description="Another model for it (optional).")


class SpawnAgentTool(Tool[SpawnAgentParams]):
    name = "spawnAgent"
    description = """Delegate a self-contained task to a sub-agent and get back its report.

The sub-agent starts fresh: it sees only `task` (not this conversation), works with its own tools, and returns
a summary. Its intermediate steps never enter your context, so delegating keeps your context small.

Use it for:
- broad searches across a large workspace ("find every place that parses dates and how") with `explore`;
- gathering and synthesising information with `research`;
- an independent sub-task you can describe completely with `general`.
Several independent sub-agents can run at once: call spawnAgent several times in one step.

Do NOT use it for a single file read or one grep (do it yourself), or for tasks that need the user.

Write `task` as a complete brief: the goal, where to look, what to return and in what form. If the report is
not enough, spawn another with a sharper task or do the remaining part yourself."""
    params: ClassVar[type[BaseModel]] = SpawnAgentParams

    def side_effects_of(self, arguments: dict[str, Any]) -> bool:
        # A general sub-agent can write and run things (each of its own risky calls still asks); explore and
        # research only read, so re-running one after a crash repeats nothing that matters.
        return arguments.get("agentType") == "general"

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        # Starting a sub-agent changes nothing by itself; each of its own risky calls asks.
        return False

    async def run(self, params: SpawnAgentParams, ctx: ToolContext) -> str:
        if ctx.spawn_agent is None:
            raise ToolError("Sub-agents are not available here.")
        return await ctx.spawn_agent(params.agentType, params.task, params.model)
