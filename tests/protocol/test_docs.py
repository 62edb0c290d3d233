"""`docs/protocol.md` is generated from the models; this fails when someone changes one without the other."""

from __future__ import annotations

from pathlib import Path

from cowork.protocol import METHODS, render_protocol_markdown

DOC = Path(__file__).parents[2] / "docs" / "protocol.md"


def test_protocol_reference_is_current() -> None:
    expected = render_protocol_markdown()
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/protocol.md is stale: regenerate it with `uv run cowork protocol docs > docs/protocol.md`"
    )


def test_reference_covers_every_method() -> None:
    text = render_protocol_markdown()
    for name in METHODS:
        assert f"### `{name}`" in text
