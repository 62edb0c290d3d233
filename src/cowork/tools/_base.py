"""The tool interface: what a tool declares, what it receives when it runs, how it fails."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from cowork.config import ToolsConfig
from cowork.policy import PathDenied, PathPolicy, ServerPolicy

if TYPE_CHECKING:
    from cowork.protocol import ContextQueryParams, ContextQueryResult
    from cowork.retrieval import Hit, SearchAnswer

__all__ = ["Tool", "ToolContext", "ToolError", "ToolFacts", "ToolSpec"]

ParamsT = TypeVar("ParamsT", bound=BaseModel)


class ToolError(Exception):
    """A failure the model should see and can act on (bad input, missing file, no match).

    The runtime turns it into an error tool result; it never ends the turn.
    """


async def _no_log(_text: str) -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use. Tools never reach the store, the server or the model directly."""

    workspace: Path
    """Resolved working directory of the session."""
    paths: PathPolicy | None = None
    """Which paths tools may read and write; default: the workspace only."""
    settings: ToolsConfig = field(default_factory=ToolsConfig)
    network: bool = False
    """Whether the session lets shell commands reach the network (web tools are network tools by nature)."""
    output_dir: Path | None = None
    """Where a tool saves output too large to return (the model can `read` it there)."""
    home: Path | None = None
    """Cowork's state directory (user-level skills and memory live under it)."""
    bwrap: str | None = None
    """The bubblewrap binary when shell commands run sandboxed; None runs them unconfined (no sandbox, --yolo)."""
    session_id: str = ""
    operation_id: str = ""
    tool_call_id: str = ""
    log: Callable[[str], Awaitable[None]] = field(default=_no_log)
    """Emit a line of progress output (becomes a `log` event)."""
    set_todos: Callable[[list[dict[str, str]]], Awaitable[None]] | None = None
    """Replace the session's todo list (the runtime persists it and emits `todos`)."""
    spawn_agent: Callable[[str, str, str | None], Awaitable[str]] | None = None
    """Run a sub-agent (type, task, model or None) to its end and return its report."""
    search_documents: Callable[[str, int], Awaitable[SearchAnswer]] | None = None
    """Search the session folder's document index (query, how many chunks); starts indexing a folder never indexed."""
    recall: Callable[[str, int], Awaitable[list[Hit]]] | None = None
    """Search the folder's past conversations (query, how many turns); the asking session's own are left out."""
    update_profile: Callable[[dict[str, str], list[str]], Awaitable[str]] | None = None
    """Change the user's working memory (entries to set, keys to remove); answers what the profile now holds."""
    query_activity: Callable[[ContextQueryParams], Awaitable[tuple[ContextQueryResult, str | None]]] | None = None
    """What activity capture recorded in a range, and why capture is not running now when it is not."""

    def _policy(self) -> PathPolicy:
        return self.paths if self.paths is not None else PathPolicy.build(self.workspace)

    def read_path(self, path: str) -> Path:
        """Resolve `path` (absolute, or relative to the workspace) for reading, or refuse it.

        Symlinks and `..` are resolved before the check (see `cowork.policy.PathPolicy`). Touches the disk:
        call it off the event loop.

        Raises:
            ToolError: the path may not be read; the message says why.
        """
        try:
            return self._policy().check_read(path)
        except PathDenied as exc:
            raise ToolError(str(exc)) from None

    def write_path(self, path: str) -> Path:
        """Resolve `path` for writing, or refuse it (see `read_path`).

        Raises:
            ToolError: the path may not be written; the message says why.
        """
        try:
            return self._policy().check_write(path)
        except PathDenied as exc:
            raise ToolError(str(exc)) from None

    def resolve(self, path: str) -> Path:
        """`read_path`, under the name the first file tools use."""
        return self.read_path(path)


@dataclass(frozen=True)
class ToolFacts:
    """What one call of a tool declares about itself, for the approval policy (never a name check in the runner)."""

    side_effects: bool
    """The call changes something outside Cowork (files, processes, the network)."""
    needs_approval: bool
    """The baseline policy asks before it runs."""
    shell_command: str | None = None
    """The shell command line the call runs, for the command classifier (bash)."""
    needs_network: bool = False
    """The call asks for network access the session may not allow."""
    paths: tuple[str, ...] = ()
    """The paths the call reads or writes, as the model wrote them (for path-aware approval)."""
    changes_named_files: bool = False
    """The call changes the files `paths` names and nothing else (a checkpoint keeps just those)."""


@dataclass(frozen=True)
class ToolSpec:
    """The part of a tool the model sees."""

    name: str
    description: str
    parameters_json_schema: dict[str, Any]


class Tool(ABC, Generic[ParamsT]):
    """A built-in tool. Subclasses set the class attributes and implement `run`."""

    name: str
    """The name the model calls it by; a class attribute for built-ins, set per instance by tools made at run time
    (one MCP tool class serves every server's tools)."""
    description: str
    params: ClassVar[type[BaseModel]]
    side_effects: ClassVar[bool] = False
    """True when running the tool changes something outside Cowork (files, processes, the network)."""
    path_params: ClassVar[tuple[str, ...]] = ()
    """The parameters that name a file or folder the call reads or writes."""
    asks_user: ClassVar[bool] = False
    """True for a tool whose answer comes from the user (the operation waits for it instead of running it)."""
    always_asks: ClassVar[bool] = False
    """True for a tool whose every call asks the user first, whatever the settings (`--yolo` included)."""
    changes_named_files: ClassVar[bool] = False
    """True for a file tool that changes the files its path parameters name and nothing else (checkpointed file by
    file; a shell command is checkpointed by snapshotting the whole folder)."""

    def side_effects_of(self, arguments: dict[str, Any]) -> bool:
        """Whether this particular call has side effects; by default the tool's `side_effects`.

        A call with side effects is on record as started before it runs, and after a crash it is never re-run
        without asking.
        """
        return self.side_effects

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        """Whether the baseline policy asks before this call runs; by default, when it has side effects."""
        return self.side_effects_of(arguments)

    def facts(self, arguments: dict[str, Any]) -> ToolFacts:
        """What this call declares for the policy; tools that run commands, need the network or touch paths say so
        by overriding `shell_command`, `needs_network` or `paths`."""
        return ToolFacts(
            side_effects=self.side_effects_of(arguments),
            needs_approval=self.needs_approval(arguments),
            shell_command=self.shell_command(arguments),
            needs_network=self.needs_network(arguments),
            paths=self.paths(arguments),
            changes_named_files=self.changes_named_files,
        )

    def shell_command(self, arguments: dict[str, Any]) -> str | None:
        """The shell command line this call runs, if it runs one."""
        return None

    def needs_network(self, arguments: dict[str, Any]) -> bool:
        """Whether this call asks for the network beyond what the session allows (web tools are network tools by
        nature and need not say so)."""
        return False

    def paths(self, arguments: dict[str, Any]) -> tuple[str, ...]:
        """The paths this call reads or writes, as written in the arguments (those named by `path_params`)."""
        return tuple(value for key in self.path_params if isinstance(value := arguments.get(key), str) and value)

    def server_policy(self) -> tuple[str, ServerPolicy] | None:
        """For an MCP tool: its server's name and approval policy (see `cowork.policy.decide`); else None."""
        return None

    def spec(self) -> ToolSpec:
        # Generating a JSON schema takes about a millisecond; the model is sent the specs at every step.
        cached: ToolSpec | None = self.__dict__.get("_spec")
        if cached is None:
            schema = self.params.model_json_schema()
            schema.pop("title", None)
            cached = ToolSpec(name=self.name, description=self.description, parameters_json_schema=schema)
            self.__dict__["_spec"] = cached
        return cached

    def parse(self, arguments: dict[str, Any]) -> ParamsT:
        """Validate model-supplied arguments.

        Raises:
            ToolError: the arguments do not match the schema; the message lists each problem.
        """
        try:
            return self.params.model_validate(arguments)  # type: ignore[return-value]
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolError(f"Invalid arguments for {self.name}: {problems}") from None

    def preview(self, arguments: dict[str, Any]) -> str | None:
        """What an approval request shows of this call besides its arguments, as a unified diff (the file tools'
        changes are computed by the runtime); None: nothing more."""
        return None

    def refuses(self, arguments: dict[str, Any]) -> bool:
        """Whether `parse` refuses these arguments: a call that cannot run need not be asked about (a tool that
        always asks is checked first, so the user never approves a call that then fails)."""
        try:
            self.parse(arguments)
        except ToolError:
            return True
        return False

    @abstractmethod
    async def run(self, params: ParamsT, ctx: ToolContext) -> str:
        """Run the tool and return the text the model reads.

        Raises:
            ToolError: for any failure the model should be told about.
        """
