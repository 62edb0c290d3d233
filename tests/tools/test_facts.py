"""What each built-in tool declares about a call, for the approval policy."""

from __future__ import annotations

from cowork.tools import ToolFacts, builtin_tools

TOOLS = builtin_tools()


def facts(name: str, arguments: dict[str, object]) -> ToolFacts:
    tool = TOOLS.get(name)
    assert tool is not None
    return tool.facts(dict(arguments))


def test_bash_declares_its_command_and_network_need() -> None:
    assert facts("bash", {"command": "ls -la"}) == ToolFacts(
        side_effects=False, needs_approval=False, shell_command="ls -la"
    )
    assert facts("bash", {"command": "rm -rf build", "needsNetwork": False}) == ToolFacts(
        side_effects=True, needs_approval=True, shell_command="rm -rf build"
    )
    pip = facts("bash", {"command": "ls", "needsNetwork": True})
    assert pip.needs_network and pip.needs_approval and not pip.side_effects


def test_file_tools_declare_their_paths() -> None:
    assert facts("write", {"filePath": "notes/a.md", "content": "x"}).paths == ("notes/a.md",)
    assert facts("edit", {"filePath": "/etc/hosts", "oldString": "a", "newString": "b"}).paths == ("/etc/hosts",)
    assert facts("read", {"filePath": "README.md"}).paths == ("README.md",)
    assert facts("glob", {"pattern": "*.py", "path": "src"}).paths == ("src",)
    assert facts("glob", {"pattern": "*.py"}).paths == ()
    assert facts("notebookEdit", {"notebookPath": "a.ipynb"}).paths == ("a.ipynb",)


def test_other_tools_declare_no_command_network_or_paths() -> None:
    declared = facts("webSearch", {"query": "x"})
    assert (declared.shell_command, declared.needs_network, declared.paths) == (None, False, ())
    assert facts("write", {"filePath": "a", "content": ""}).needs_approval
