"""The server's bearer token on disk: private, stable across starts, and never mistaken for a command-line option."""

from __future__ import annotations

import stat
from pathlib import Path

from cowork.server._auth import load_or_create_token


def test_created_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "auth" / "token"
    token = load_or_create_token(path)
    assert token.startswith("cw_") and len(token) > 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(path) == token


def test_never_starts_with_a_dash(tmp_path: Path) -> None:
    tokens = {load_or_create_token(tmp_path / f"t{i}") for i in range(200)}
    assert len(tokens) == 200 and not any(t.startswith("-") for t in tokens)


def test_a_stored_token_that_starts_with_a_dash_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("-looks-like-an-option\n", encoding="utf-8")
    token = load_or_create_token(path)
    assert token.startswith("cw_") and path.read_text(encoding="utf-8").strip() == token
