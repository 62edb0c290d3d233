"""The rotating handler: files are 0600 whatever the umask, current and rotated, and rotation happens at the limit."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cowork.logs import JsonFormatter, PrivateRotatingFileHandler, log_files
from cowork.testing.files import mode, umask


@contextmanager
def logger_to(handler: logging.Handler) -> Iterator[logging.Logger]:
    """A logger of its own writing to `handler` only (the root logger is left alone)."""
    logger = logging.getLogger(f"tests.logs.{id(handler)}")
    logger.propagate, logger.level = False, logging.INFO
    logger.addHandler(handler)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        handler.close()


def test_the_file_is_created_0600_under_umask_022(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    with umask(0o022), logger_to(PrivateRotatingFileHandler(path)) as log:
        log.info("first")
        assert mode(path) == 0o600
    assert path.read_text(encoding="utf-8") == "first\n"


def test_a_looser_existing_file_is_tightened_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("earlier\n", encoding="utf-8")
    path.chmod(0o644)
    with logger_to(PrivateRotatingFileHandler(path)) as log:
        log.info("later")
    assert (mode(path), path.read_text(encoding="utf-8")) == (0o600, "earlier\nlater\n")


def test_rotation_happens_at_the_limit_and_every_file_stays_0600(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    handler = PrivateRotatingFileHandler(path, max_bytes=1000, backups=2)
    handler.setFormatter(JsonFormatter())
    with umask(0o022), logger_to(handler) as log:
        for n in range(60):  # about 120 bytes a line: several rotations
            log.info("line %03d %s", n, "x" * 20)
    files = log_files(path, rotated=True)
    assert [p.name for p in files] == ["server.log.2", "server.log.1", "server.log"]
    assert not (tmp_path / "server.log.3").exists()  # the oldest is deleted past `backups`
    assert all(mode(p) == 0o600 for p in files)
    assert all(0 < p.stat().st_size <= 1000 for p in files)
    numbers = [int(json.loads(line)["msg"].split()[1]) for p in files for line in p.read_text("utf-8").splitlines()]
    assert numbers == list(range(numbers[0], 60))  # the newest lines, in order, none lost within what is kept


def test_a_looser_backup_left_by_something_else_is_tightened_at_rotation(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    (tmp_path / "server.log.1").write_text("old\n", encoding="utf-8")
    (tmp_path / "server.log.1").chmod(0o644)
    with logger_to(PrivateRotatingFileHandler(path, max_bytes=50, backups=3)) as log:
        for _ in range(3):
            log.info("a line of some thirty characters")
    assert mode(tmp_path / "server.log.2") == 0o600  # it was server.log.1


def test_log_files_lists_rotated_files_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    for name in ("server.log.1", "server.log.10", "server.log.2", "server.log.bak", "other.log.3"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert [p.name for p in log_files(path, rotated=True)] == [
        "server.log.10",
        "server.log.2",
        "server.log.1",
        "server.log",
    ]
    assert log_files(path, rotated=False) == [path]
