"""Text from outside (web pages, search results, MCP tool results) as the model gets it: marked as untrusted data."""

from __future__ import annotations

import html
import re

__all__ = ["plain_text", "untrusted_block"]

_TAG = re.compile(r"<[^>]*>")
_CLOSING_TAG = re.compile(r"</(untrusted_content)", re.IGNORECASE)


def plain_text(text: object, limit: int) -> str:
    """Plain text from an HTML-ish string (tags dropped, entities decoded, whitespace collapsed), cut to `limit`."""
    plain = " ".join(html.unescape(_TAG.sub("", text if isinstance(text, str) else "")).split())
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def untrusted_block(source: str, text: str) -> str:
    """`text` wrapped as untrusted data, with any closing tag inside it defused so it cannot end the block early."""
    safe_source = source.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    body = _CLOSING_TAG.sub(r"<\\/\1", text)
    return f'<untrusted_content source="{safe_source}">\n{body}\n</untrusted_content>'
