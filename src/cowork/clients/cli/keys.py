"""Reading keys while a turn runs (typed text becomes steering input, Ctrl-C cancels), and the prompt's own keys."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

__all__ = ["KeyReader", "LineEditor", "prompt_bindings"]


@dataclass
class LineEditor:
    """A one-line buffer fed key by key; calls `on_submit` with the text on Enter, `on_interrupt` on Ctrl-C."""

    on_submit: Callable[[str], None]
    on_interrupt: Callable[[], None]
    on_change: Callable[[], None] = field(default=lambda: None)
    buffer: str = ""

    def feed(self, key: str, data: str) -> None:
        if key == Keys.ControlC:
            self.on_interrupt()
            return
        if key in (Keys.ControlM, Keys.ControlJ):
            text, self.buffer = self.buffer.strip(), ""
            if text:
                self.on_submit(text)
        elif key in (Keys.ControlH, Keys.Backspace):
            self.buffer = self.buffer[:-1]
        elif key == Keys.ControlU:
            self.buffer = ""
        elif len(data) == 1 and data.isprintable():
            self.buffer += data
        else:
            return
        self.on_change()


class KeyReader:
    """Feeds the terminal's keys to an editor; `paused()` hands the terminal back for a normal prompt."""

    def __init__(self, editor: LineEditor) -> None:
        self._editor = editor
        self._keyboard: Input | None = create_input() if sys.stdin.isatty() else None
        self._stack: contextlib.ExitStack | None = None

    def _on_keys(self) -> None:
        assert self._keyboard is not None
        for press in self._keyboard.read_keys():
            self._editor.feed(press.key, press.data)

    def start(self) -> None:
        if self._keyboard is None or self._stack is not None:
            return
        stack = contextlib.ExitStack()
        stack.enter_context(self._keyboard.raw_mode())
        stack.enter_context(self._keyboard.attach(self._on_keys))
        self._stack = stack

    def stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        running = self._stack is not None
        self.stop()
        try:
            yield
        finally:
            if running:
                self.start()


def prompt_bindings() -> KeyBindings:
    """The prompt's own keys: Alt-Enter (Esc then Enter in most terminals) inserts a newline, so a message can have
    several lines; Ctrl-L clears the screen and keeps what was typed."""
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-l")
    def _clear(event: KeyPressEvent) -> None:
        event.app.renderer.clear()

    return bindings
