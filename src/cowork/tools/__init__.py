"""Built-in tools, the tool interface and the registry."""

from ._base import Tool, ToolContext, ToolError, ToolFacts, ToolSpec
from ._memory import MemoryFile, MemoryFiles, MemoryNotFound
from ._output import cap_output, run_tool
from ._registry import ToolRegistry, builtin_tools
from ._untrusted import untrusted_block

__all__ = [
    "MemoryFile",
    "MemoryFiles",
    "MemoryNotFound",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolFacts",
    "ToolRegistry",
    "ToolSpec",
    "builtin_tools",
    "cap_output",
    "run_tool",
    "untrusted_block",
]
