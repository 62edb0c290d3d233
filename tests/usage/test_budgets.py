"""The two budget decisions, pure: refuse a call that would go over a cap, warn once spend crosses a share of one."""

from __future__ import annotations

import pytest

from cowork.config import BudgetsConfig
from cowork.usage import Budgets, Cap, Crossing, Refusal, Spend, check, crossings

CONFIG = BudgetsConfig()  # per request $0.50, day $10, week $50, month $200, warn at 80%
BUDGETS = Budgets.from_config(CONFIG)


def spend(interaction: float = 0.0, daily: float = 0.0, weekly: float = 0.0, monthly: float = 0.0) -> Spend:
    return Spend({"interaction": interaction, "daily": daily, "weekly": weekly, "monthly": monthly})


def test_from_config_takes_the_configured_caps() -> None:
    assert BUDGETS == Budgets({"interaction": 0.5, "daily": 10.0, "weekly": 50.0, "monthly": 200.0}, 0.8)


def test_stored_changes_override_the_config_and_null_removes_a_cap() -> None:
    stored = {"daily": 2, "weekly": None, "warn_at": 0.5}
    budgets = Budgets.from_config(CONFIG, stored)
    assert budgets == Budgets({"interaction": 0.5, "daily": 2.0, "weekly": None, "monthly": 200.0}, 0.5)
    # A cap the config leaves unset can be set at run time.
    unset = BudgetsConfig(monthly_usd=None)
    assert Budgets.from_config(unset).limits["monthly"] is None
    assert Budgets.from_config(unset, {"monthly": 7.5}).limits["monthly"] == 7.5


def test_stored_values_of_the_wrong_shape_are_ignored() -> None:
    stored = {"daily": "lots", "unknown": 3, "warn_at": None, "monthly": [1]}
    assert Budgets.from_config(CONFIG, stored) == BUDGETS


def test_with_changes_keeps_what_is_not_named() -> None:
    changed = BUDGETS.with_changes({"daily": 1.0, "monthly": None, "warn_at": 0.9})
    assert changed == Budgets({"interaction": 0.5, "daily": 1.0, "weekly": 50.0, "monthly": None}, 0.9)
    assert BUDGETS.with_changes({"warn_at": None}).warn_at == 0.8  # there is always a warning share
    assert BUDGETS.limits["daily"] == 10.0  # the original is untouched


def test_a_call_within_every_cap_is_allowed() -> None:
    assert check(BUDGETS, spend(0.4, 9.0, 49.0, 199.0), 0.1) is None  # exactly reaching a cap is allowed


@pytest.mark.parametrize(
    ("spent", "cap", "limit"),
    [
        (spend(interaction=0.45), "interaction", 0.5),
        (spend(daily=9.95), "daily", 10.0),
        (spend(weekly=49.95), "weekly", 50.0),
        (spend(monthly=199.95), "monthly", 200.0),
    ],
)
def test_each_cap_refuses_a_call_that_would_go_over(spent: Spend, cap: Cap, limit: float) -> None:
    refusal = check(BUDGETS, spent, 0.1)
    assert refusal == Refusal(cap, limit, spent[cap], 0.1)
    assert refusal.details() == {"cap": cap, "limitUsd": limit, "spentUsd": spent[cap], "estimateUsd": 0.1}


def test_the_refusal_names_its_cap_and_figures() -> None:
    message = Refusal("weekly", 50.0, 49.95, 0.1).message()
    assert message.startswith("This would go over the weekly budget: $49.95 of $50.00 spent")
    assert "$0.10" in message and "Continue once (this request only), or stop?" in message
    assert "per-request budget" in Refusal("interaction", 0.5, 0.45, 0.1).message()


def test_the_first_cap_in_order_is_reported() -> None:
    refusal = check(BUDGETS, spend(0.45, 9.95, 49.95, 199.95), 0.1)
    assert refusal is not None and refusal.cap == "interaction"


def test_allowed_and_absent_caps_are_skipped() -> None:
    over_all = spend(0.45, 9.95, 49.95, 199.95)
    refusal = check(BUDGETS, over_all, 0.1, allowed=frozenset({"interaction", "daily"}))
    assert refusal is not None and refusal.cap == "weekly"
    uncapped = Budgets({"interaction": None, "daily": None, "weekly": None, "monthly": None}, 0.8)
    assert check(uncapped, over_all, 1000.0) is None


def test_a_zero_cap_refuses_any_priced_call_but_not_a_free_one() -> None:
    budgets = BUDGETS.with_changes({"daily": 0.0})
    assert check(budgets, spend(), 0.000001) == Refusal("daily", 0.0, 0.0, 0.000001)
    assert check(budgets, spend(), 0.0) is None


def test_crossing_the_warning_share_warns_once() -> None:
    before, after = spend(0.3, 7.9, 7.9, 7.9), spend(0.41, 8.01, 8.01, 8.01)
    assert crossings(BUDGETS, before, after) == [
        Crossing("interaction", 0.5, 0.41, pytest.approx(0.82)),  # type: ignore[arg-type]
        Crossing("daily", 10.0, 8.01, pytest.approx(0.801)),  # type: ignore[arg-type]
    ]
    # Already past the share: no second warning.
    assert crossings(BUDGETS, after, spend(0.45, 9.0, 9.0, 9.0)) == []


def test_reaching_the_share_exactly_warns_and_a_jump_past_the_cap_still_warns() -> None:
    assert [c.cap for c in crossings(BUDGETS, spend(), spend(daily=8.0))] == ["daily"]
    assert [c.cap for c in crossings(BUDGETS, spend(), spend(weekly=70.0))] == ["weekly"]
    assert crossings(BUDGETS, spend(), spend(daily=7.99)) == []


def test_no_warning_for_caps_that_are_off() -> None:
    budgets = BUDGETS.with_changes({"daily": None, "monthly": 0.0})
    assert crossings(budgets, spend(), spend(daily=1000.0, monthly=1000.0)) == []


def test_spend_plus_adds_to_every_window() -> None:
    assert spend(0.1, 1.0, 2.0, 3.0).plus(0.5) == spend(0.6, 1.5, 2.5, 3.5)
    assert Spend()["daily"] == 0.0
