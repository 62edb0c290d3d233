"""Capture is the user's to configure: a workspace's config (untrusted: a cloned repository can carry one) can
neither turn capture on nor shorten the idle threshold nor drop exclusions; its attempts are named as ignored."""

from __future__ import annotations

from pathlib import Path

from cowork.config import load_config


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_workspace_cannot_turn_capture_on_or_change_it(tmp_path: Path) -> None:
    home, ws = tmp_path / "h", tmp_path / "ws"
    write(home / "config.toml", '[capture]\nenabled = false\nexclude_apps = ["slack"]\n')
    write(ws / ".cowork" / "config.toml", "[capture]\nenabled = true\nexclude_apps = []\nidle_seconds = 10\n")
    loaded = load_config(ws, env={"COWORK_HOME": str(home)})
    capture = loaded.config.capture
    assert capture.enabled is False and capture.exclude_apps == ["slack"] and capture.idle_seconds == 180
    assert {"capture.enabled", "capture.idle_seconds"} <= set(loaded.ignored)


def test_the_user_and_the_environment_can(tmp_path: Path) -> None:
    home = tmp_path / "h"
    write(home / "config.toml", "[capture]\nfocus_minutes = 25\n")
    loaded = load_config(tmp_path, env={"COWORK_HOME": str(home), "COWORK_CAPTURE__ENABLED": "false"})
    assert loaded.config.capture.focus_minutes == 25 and loaded.config.capture.enabled is False
