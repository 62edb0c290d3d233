"""The core's warm-up: what the first turn needs, loaded ahead of it; a failure is logged, never raised."""

from __future__ import annotations

import logging
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
