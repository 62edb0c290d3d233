"""Tab completion at the REPL prompt: commands after `/`, then each command's arguments."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from cowork.clients.automation_args import ACTIONS as AUTOMATION_ACTIONS

from .mcp_cmds import MCP_ACTIONS
from .notification_cmds import NOTIFICATION_VERBS

__all__ = ["SlashCompleter"]

_ON_OFF = ("on", "off")
_RUN_ACTIONS = ("run-info", "cancel", "resume", "approve", "reject")


class SlashCompleter(Completer):
    """Completes `/command`, then its first word (on/off, an MCP action, a tool), then names or folders.

    `names(kind)` gives what the REPL knows right now: `tools`, `mcp` (server names), `sessions`, `automations`,
    `runs`, `notifications`; `cwd()` is the folder relative paths start from.
    """

    def __init__(
        self,
        commands: Mapping[str, str],
        names: Callable[[str], Iterable[str]] = lambda _kind: (),
        cwd: Callable[[], Path] = Path.cwd,
    ) -> None:
        self.commands = commands
        self.names = names
        self.cwd = cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        if " " not in text:
            for name, help_text in self.commands.items():
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text), display_meta=help_text)
            return
        command, _, rest = text.partition(" ")
        words = rest.split(" ")
        if command == "/cwd":
            yield from self._folders(rest, complete_event)
            return
        yield from _matching(self._choices(command, words[:-1]), words[-1])

    def _choices(self, command: str, before: list[str]) -> Iterable[str]:
        if command in ("/yolo", "/network"):
            return _ON_OFF if not before else ()
        if command == "/mcp":
            if not before:
                return MCP_ACTIONS
            if len(before) == 1 and before[0] in ("enable", "disable", "restart", "remove"):
                return self.names("mcp")
            return ()
        if command == "/tools":
            if not before:
                return self.names("tools")
            return ("always", "never", "inherit") if len(before) == 1 else ()
        if command == "/resume" and not before:
            return self.names("sessions")
        if command == "/automation":
            if not before:
                return AUTOMATION_ACTIONS
            if len(before) == 1 and before[0] not in ("list", "import"):
                return self.names("runs" if before[0] in _RUN_ACTIONS else "automations")
            return ()
        if command == "/notifications":
            if not before:
                return NOTIFICATION_VERBS
            return self.names("notifications") if len(before) == 1 else ()
        return ()

    def _folders(self, rest: str, event: CompleteEvent) -> Iterator[Completion]:
        base = self.cwd()

        def folders() -> list[str]:
            return [str(base)]

        completer = PathCompleter(only_directories=True, expanduser=True, get_paths=folders)
        yield from completer.get_completions(Document(rest, len(rest)), event)


def _matching(choices: Iterable[str], word: str) -> Iterator[Completion]:
    for choice in choices:
        if choice.startswith(word):
            yield Completion(choice, start_position=-len(word))
