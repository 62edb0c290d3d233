"""Setting up the server's logging: JSON into the private file, warnings on stderr unless quiet, once per process."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowork.logs import JsonFormatter, PrivateRotatingFileHandler, TextFormatter, setup_server_logging


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    """The root logger, given back as it was (pytest's own capture handlers included)."""
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    try:
        yield logger
    finally:
        for handler in logger.handlers:
            if handler not in handlers:
                handler.close()
        logger.handlers[:] = handlers
        logger.setLevel(level)


def ours(logger: logging.Logger) -> list[logging.Handler]:
    return [h for h in logger.handlers if getattr(h, "_cowork", False)]


def test_the_server_logs_json_lines_to_a_private_file(root: logging.Logger, tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    previous = os.umask(0o022)
    try:
        assert setup_server_logging(path, quiet=True, max_bytes=4096, backups=2) is True
    finally:
        os.umask(previous)
    (handler,) = ours(root)
    assert isinstance(handler, PrivateRotatingFileHandler) and isinstance(handler.formatter, JsonFormatter)
    assert (handler.maxBytes, handler.backupCount) == (4096, 2)
    logging.getLogger("cowork.test").info("started on port %d", 8765)
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["msg"] == "started on port 8765"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_second_setup_adds_nothing(root: logging.Logger, tmp_path: Path) -> None:
    assert setup_server_logging(tmp_path / "a.log", quiet=False) is True
    assert setup_server_logging(tmp_path / "b.log", quiet=False) is False
    file_handler, stderr = ours(root)
    assert Path(getattr(file_handler, "baseFilename", "")).name == "a.log"
    assert isinstance(stderr, logging.StreamHandler) and isinstance(stderr.formatter, TextFormatter)
    assert stderr.level == logging.WARNING
    assert not (tmp_path / "b.log").exists()
