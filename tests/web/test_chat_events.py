"""The web UI's dispatch tables cover exactly the protocol: chat.js's event types (`HANDLERS`, `IGNORED`) and app.js's
server notifications (`NOTIFICATIONS`)."""

from __future__ import annotations

import re
from pathlib import Path

from cowork.protocol import EVENT_PAYLOADS, NOTIFICATIONS

CHAT_JS = Path(__file__).parents[2] / "src" / "cowork" / "server" / "web" / "static" / "js" / "chat.js"


def tables() -> tuple[list[str], list[str]]:
    """The keys of `const HANDLERS = {…};` and the strings in `const IGNORED = new Set([…]);`."""
    source = CHAT_JS.read_text(encoding="utf-8")
    handlers = re.search(r"^const HANDLERS = \{\n(.*?)^\};", source, re.S | re.M)
    ignored = re.search(r"^const IGNORED = new Set\(\[(.*?)\]\);", source, re.S | re.M)
    assert handlers is not None and ignored is not None, "chat.js no longer has its HANDLERS and IGNORED tables"
    handled = re.findall(r"^  (\w+)\(view, p\) \{$", handlers.group(1), re.M)
    return handled, re.findall(r'"(\w+)"', ignored.group(1))


def test_every_event_type_is_handled_or_ignored_exactly_once() -> None:
    handled, ignored = tables()
    assert len(handled) == len(set(handled)) and not set(handled) & set(ignored)
    assert sorted(handled + ignored) == sorted(EVENT_PAYLOADS)


def test_the_tables_are_what_apply_dispatches_on() -> None:
    source = CHAT_JS.read_text(encoding="utf-8")
    # No second dispatch on event types elsewhere in the file (a switch would bypass the tables).
    assert "switch (event.type)" not in source and "HANDLERS[event.type]" in source
    assert "IGNORED.has(event.type)" in source


APP_JS = CHAT_JS.with_name("app.js")


def test_every_server_notification_has_a_handler() -> None:
    """app.js's `NOTIFICATIONS` table names exactly the protocol's server → client notifications."""
    source = APP_JS.read_text(encoding="utf-8")
    table = re.search(r"^const NOTIFICATIONS = \{\n(.*?)^\};", source, re.S | re.M)
    assert table is not None, "app.js no longer has its NOTIFICATIONS table"
    handled = re.findall(r'^  "([\w/]+)": \(app, p\) =>', table.group(1), re.M)
    assert len(handled) == len(set(handled))
    assert sorted(handled) == sorted(NOTIFICATIONS)
    assert "NOTIFICATIONS[method](this, params)" in source
