"""The tool registry: built-ins register the same way any later tool source will."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ._base import Tool, ToolSpec

__all__ = ["ToolRegistry", "builtin_tools"]


class ToolRegistry:
    """Tools by name, in registration order (the order the model sees them)."""

    def __init__(self, tools: list[Tool[Any]] | None = None) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools or ():
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> bool:
        """Remove a tool (MCP tools come and go with their servers); False when there was none."""
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def without(self, names: set[str]) -> ToolRegistry:
        """A registry of the same tools minus `names` (a sub-agent's narrower set)."""
        return ToolRegistry([t for t in self._tools.values() if t.name not in names])

    def only(self, predicate: Callable[[Tool[Any]], bool]) -> ToolRegistry:
        return ToolRegistry([t for t in self._tools.values() if predicate(t)])

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec() for tool in self._tools.values()]

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def builtin_tools() -> ToolRegistry:
    """The built-in tools available to every session."""
    from ._activity import ActivityTool
    from ._agent_tools import AskTool, SpawnAgentTool, TodoWriteTool
    from ._bash import BashTool
    from ._edit import EditTool
    from ._glob import GlobTool
    from ._grep import GrepTool
    from ._memory import MemoryTool
    from ._notebook import NotebookEditTool
    from ._profile import ProfileTool
    from ._read import ReadTool
    from ._recall import RecallTool
    from ._search_documents import SearchDocumentsTool
    from ._skill import SkillTool
    from ._web_fetch import WebFetchTool
    from ._web_search import WebSearchTool
    from ._write import WriteTool

    return ToolRegistry(
        [
            BashTool(),
            ReadTool(),
            WriteTool(),
            EditTool(),
            GlobTool(),
            GrepTool(),
            SearchDocumentsTool(),
            RecallTool(),
            ActivityTool(),
            WebSearchTool(),
            WebFetchTool(),
            AskTool(),
            TodoWriteTool(),
            SpawnAgentTool(),
            NotebookEditTool(),
            SkillTool(),
            MemoryTool(),
            ProfileTool(),
        ]
    )
