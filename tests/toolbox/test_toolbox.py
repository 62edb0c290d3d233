"""Building the toolbox: idempotent, atomic, one builder at a time, rebuilt for a new lock or when damaged."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cowork.config import ToolboxConfig
from cowork.toolbox import InstallState, Progress, ToolboxCancelled, ToolboxInstaller

from .conftest import tiny_toolbox

pytestmark = pytest.mark.slow  # builds environments (from uv's cache after the first run)


def entries(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def test_a_second_ensure_does_nothing(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    steps: list[Progress] = []
    first = toolbox.ensure(steps.append)
    assert first.state == "ready" and first.python == toolbox.interpreter
    assert [s.step for s in steps] == [1, 2, 3, 4]
    assert "et-xmlfile" in first.versions and first.size_bytes > 0
    assert (tmp_path / "toolbox").stat().st_mode & 0o777 == 0o700
    marker = (toolbox.env / "cowork-toolbox.json").stat().st_mtime_ns

    again: list[Progress] = []
    assert toolbox.ensure(again.append) == first
    assert again == [] and (toolbox.env / "cowork-toolbox.json").stat().st_mtime_ns == marker
    assert entries(toolbox.root) == [".lock", toolbox.env.name]


def test_a_new_lock_builds_a_new_toolbox_and_removes_the_old(tmp_path: Path) -> None:
    old = tiny_toolbox(tmp_path / "toolbox")
    old.ensure()
    new = tiny_toolbox(tmp_path / "toolbox", variant="upgraded")
    assert new.env != old.env
    missing = new.status()
    assert missing.state == "missing" and missing.reason is not None and "another version" in missing.reason
    assert new.ensure().state == "ready"
    assert entries(new.root) == [".lock", new.env.name]


def test_two_concurrent_ensures_build_once(tmp_path: Path) -> None:
    toolboxes = [tiny_toolbox(tmp_path / "toolbox") for _ in range(2)]
    steps: list[Progress] = []
    results = []
    threads = [threading.Thread(target=lambda t=t: results.append(t.ensure(steps.append))) for t in toolboxes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.state for r in results] == ["ready", "ready"]
    assert [s.step for s in steps] == [1, 2, 3, 4]  # the second waited for the first, then found it ready
    assert entries(toolboxes[0].root) == [".lock", toolboxes[0].env.name]


def test_a_damaged_toolbox_is_broken_and_install_rebuilds_it(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    toolbox.ensure()
    package = next(toolbox.env.glob("lib/python*/site-packages/et_xmlfile/__init__.py"))
    package.unlink()
    broken = toolbox.status()
    assert broken.state == "broken" and broken.reason is not None
    assert "et_xmlfile/__init__.py is missing" in broken.reason and "cowork toolbox install" in broken.reason
    assert toolbox.active() is not None  # (the quick check; the `bash` tool still runs commands either way)
    assert toolbox.ensure().state == "ready" and package.exists()


def test_a_half_built_toolbox_is_never_used(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    toolbox.ensure()
    (toolbox.env / "cowork-toolbox.json").unlink()  # as if the build had stopped before its last write
    assert toolbox.status().state == "broken"
    assert toolbox.active() is None and toolbox.environment({"PATH": "/usr/bin"}) == {"PATH": "/usr/bin"}


def test_status_says_installing_while_someone_builds(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    with toolbox._lock():  # what a builder (this process or another) holds
        assert toolbox.status().state == "installing"
    assert toolbox.status().state == "missing"


def test_a_stopped_install_leaves_nothing_behind(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    stop = threading.Event()
    stop.set()
    with pytest.raises(ToolboxCancelled):
        toolbox.ensure(cancel=stop)
    assert entries(toolbox.root) == [".lock"] and toolbox.status().state == "missing"


@pytest.mark.anyio
async def test_the_background_installer_builds_once_and_reports(tmp_path: Path) -> None:
    toolbox = tiny_toolbox(tmp_path / "toolbox")
    installer = ToolboxInstaller(toolbox, ToolboxConfig())
    installer.start()
    assert installer.state is InstallState.INSTALLING
    await installer.stop(wait=60)  # waits for the thread: stopping came after it started its steps, or before
    assert installer.state in (InstallState.DONE, InstallState.STOPPED)

    never = ToolboxInstaller(tiny_toolbox(tmp_path / "other"), ToolboxConfig(install="never"))
    never.start()
    assert never.state is InstallState.IDLE and not (tmp_path / "other").exists()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
