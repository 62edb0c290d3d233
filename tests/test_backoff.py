"""`cowork.backoff.backoff_delay`: doubling from the base, capped, jitter within the upper half."""

from __future__ import annotations

from cowork.backoff import backoff_delay


def test_doubles_from_the_base_and_stops_at_the_cap() -> None:
    delays = [backoff_delay(attempt, base=1.0, maximum=10.0) for attempt in range(6)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_jitter_stays_in_the_upper_half_and_varies() -> None:
    drawn = [backoff_delay(3, base=1.0, maximum=60.0, jitter=True) for _ in range(200)]
    assert all(4.0 <= d <= 8.0 for d in drawn)
    assert len(set(drawn)) > 100


def test_the_model_retry_policy_and_the_mcp_reconnect_use_it() -> None:
    from cowork.models import RetryPolicy

    policy = RetryPolicy(base_seconds=2.0, max_seconds=5.0)
    assert all(2.5 <= policy.delay(3, None) <= 5.0 for _ in range(50))  # type: ignore[operator]
    assert policy.delay(1, 7.0) == 7.0 and policy.delay(1, 500.0) is None
