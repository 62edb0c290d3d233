"""The core's warm-up: what the first turn needs, loaded ahead of it; a failure is logged, never raised."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from cowork.models import ModelTarget
from cowork.testing.core import CoreHarness

pytestmark = pytest.mark.anyio


async def test_warm_up_loads_the_model_layer_and_builds_the_default_model(
    harness: CoreHarness, caplog: pytest.LogCaptureFixture
) -> None:
    core = await harness.core("openai")
    with caplog.at_level(logging.INFO, logger="cowork.core"):
        await core.warm_up()
    assert "provider stack warmed" in caplog.text and "(openai:mock-model)" in caplog.text
    assert all("_spec" in tool.__dict__ for tool in core.tools)  # the tools' schemas, made once ahead of the turn


async def test_warm_up_without_a_provider_loads_the_model_layer(
    harness: CoreHarness, caplog: pytest.LogCaptureFixture
) -> None:
    core = await harness.core("")
    with caplog.at_level(logging.INFO, logger="cowork.core"):
        await core.warm_up()
    assert "provider stack warmed" in caplog.text and "(no provider)" in caplog.text


async def test_a_failing_warm_up_is_logged_not_raised(
    harness: CoreHarness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_target: ModelTarget | None, *_paths: Path) -> None:
        raise ImportError("no SDK for this provider")

    monkeypatch.setattr("cowork.core._preload", broken)
    core = await harness.core("openai")
    await core.warm_up()
    assert "warming up failed" in caplog.text and "no SDK for this provider" in caplog.text
    assert "provider stack warmed" not in caplog.text


async def test_a_failing_rehearsal_leaves_the_rest_of_the_warm_up(
    harness: CoreHarness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_args: object) -> bool:
        raise RuntimeError("the canned stream broke")

    monkeypatch.setattr("cowork.models._rehearse.rehearse", broken)
    core = await harness.core("openai")
    with caplog.at_level(logging.INFO, logger="cowork.core"):
        await core.warm_up()
    assert "rehearsing a model request failed" in caplog.text and "the canned stream broke" in caplog.text
    assert "provider stack warmed" in caplog.text and "warming up failed" not in caplog.text


_RACE = """
import sys, threading
from pathlib import Path
from cowork.core import _preload  # as in the server, the core is loaded before the warm-up starts
import cowork.models
from cowork.config import TracingConfig
from cowork.observability import Tracing
from cowork.tools import builtin_tools
errors = []
barrier = threading.Barrier(2)
def warm():
    barrier.wait()
    try:
        _preload(None, Path(sys.argv[1]), Path(sys.argv[2]), builtin_tools(), Tracing(TracingConfig(), None))
    except BaseException as exc:
        errors.append(repr(exc))
thread = threading.Thread(target=warm)
thread.start()
barrier.wait()
try:  # what the event loop may do meanwhile: a first use of a lazily loaded name that imports pydantic-ai
    cowork.models.stream_model
except BaseException as exc:
    errors.append(repr(exc))
thread.join()
print(errors)
"""


@pytest.mark.parametrize("attempt", range(2))
def test_first_use_imports_wait_for_the_warm_up_instead_of_racing_it(tmp_path: Path, attempt: int) -> None:
    """Two threads importing pydantic-ai at once can see each other's modules half-initialised (ImportError, or
    importlib's deadlock error); a fresh interpreter each time, so both really import."""
    result = subprocess.run(
        [sys.executable, "-c", _RACE, str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr[-2000:]


def test_the_warm_up_completes_the_deferred_wire_models() -> None:
    """The wire models defer building their validators (start-up does not pay for them); the warm-up builds them,
    so the first turn's requests and events do not. A fresh interpreter, so nothing else built them first."""
    code = (
        "import cowork.protocol as p, cowork.core as c\n"
        "from pydantic import BaseModel\n"
        "models = [m for n in p.__all__ if isinstance(m := getattr(p, n), type) and issubclass(m, BaseModel)]\n"
        "before = sum(not m.__pydantic_complete__ for m in models)\n"
        "c._complete_protocol_models()\n"
        "print(before > 0, sum(not m.__pydantic_complete__ for m in models))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.stdout.split() == ["True", "0"], result.stderr[-2000:]
