"""The `[logs]` section: the rotation limits, validated like every other section."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.config import ConfigError, load_config


def test_defaults_are_10_mb_and_5_backups(tmp_path: Path) -> None:
    logs = load_config(tmp_path, env={"COWORK_HOME": str(tmp_path / "home")}).config.logs
    assert (logs.max_mb, logs.backups) == (10, 5)


def test_the_user_file_sets_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[logs]\nmax_mb = 2.5\nbackups = 3\n", encoding="utf-8")
    logs = load_config(tmp_path, env={"COWORK_HOME": str(home)}).config.logs
    assert (logs.max_mb, logs.backups) == (2.5, 3)


@pytest.mark.parametrize(("key", "value"), [("MAX_MB", "0"), ("BACKUPS", "0"), ("BACKUPS", "many")])
def test_values_that_would_stop_rotation_are_refused(tmp_path: Path, key: str, value: str) -> None:
    env = {"COWORK_HOME": str(tmp_path / "home"), f"COWORK_LOGS__{key}": value}
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env=env)
    (problem,) = info.value.problems
    assert problem.key == f"logs.{key.lower()}" and problem.source == f"environment variable COWORK_LOGS__{key}"
