"""The throttling gates on a fake clock: each gate alone, then how they meet, then bad input.

Times are handed in, so an afternoon of notifications runs in microseconds; every test reads the decisions the way a
client would show them (outcome, gate, reason).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from cowork.notify import (
    TIER_RULES,
    TIERS,
    Candidate,
    Decision,
    Delivery,
    Gate,
    GateSettings,
    Lowered,
    MemoryHistory,
    Outcome,
    Response,
    Throttle,
    UnknownDelivery,
    Verdict,
)

T0 = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=30)


def at(minutes: float = 0, seconds: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def candidate(kind: str = "pr_review", tier: str = "helpful", *, key: str = "", title: str = "") -> Candidate:
    return Candidate(
        kind=kind,
        tier=tier,  # type: ignore[arg-type]
        title=title or f"{kind} ({tier})",
        body=f"about {kind}",
        key=key,
        created_at=T0,
    )


class DeepWork:
    """The deep-work signal as the capture tracker will give it: off, on, or on with a description."""

    def __init__(self) -> None:
        self.state: bool | str = False
        self.asked: list[datetime] = []

    def __call__(self, now: datetime) -> bool | str:
        self.asked.append(now)
        return self.state


def throttle(
    *, deep_work: DeepWork | None = None, history: MemoryHistory | None = None, **settings: object
) -> Throttle:
    counter = itertools.count(1)
    return Throttle(
        GateSettings(**settings),  # type: ignore[arg-type]
        history=history,
        deep_work=deep_work or DeepWork(),
        new_id=lambda: f"d{next(counter)}",
    )


def explain(decisions: tuple[Decision, ...] | list[Decision]) -> list[tuple[str, str | None, str]]:
    return [(d.outcome.value, d.gate.value if d.gate else None, d.reason) for d in decisions]


def titles(deliveries: list[Delivery]) -> list[str]:
    return [delivery.title for delivery in deliveries]


def deliver(t: Throttle, c: Candidate, now: datetime) -> Delivery:
    """Offer a helpful or informational candidate alone and let its window close."""
    assert t.offer(c, now).outcome is Outcome.BUNDLED
    [delivery] = t.due(now + WINDOW)
    return delivery


def state(t: Throttle) -> tuple[object, ...]:
    return (t.decisions, t.held, t.bundling, t.snoozed, t.awaiting_response)


# ---- gate 1: priority tier ------------------------------------------------------------------------------------------


def test_tiers_are_ordered_most_important_first_and_only_urgent_skips_deep_work_and_bundling() -> None:
    assert TIERS == ("urgent", "helpful", "informational")
    assert {tier: (rule.waits_out_deep_work, rule.bundles) for tier, rule in TIER_RULES.items()} == {
        "urgent": (False, False),
        "helpful": (True, True),
        "informational": (True, True),
    }


def test_the_tier_decides_the_path_urgent_goes_out_at_once_the_others_wait_for_the_window() -> None:
    t = throttle()
    urgent = t.offer(candidate("meeting_soon", "urgent"), at())
    assert urgent.outcome is Outcome.DELIVERED and urgent.delivery is not None
    assert urgent.delivery.tier == "urgent" and urgent.delivery.delivered_at == at()
    for tier in ("helpful", "informational"):
        assert t.offer(candidate(f"k_{tier}", tier), at()).outcome is Outcome.BUNDLED
    assert t.due(at(seconds=29)) == []
    assert [d.tier for d in t.due(at(seconds=30))] == ["helpful", "informational"]


def test_gate_tier_returns_the_declared_tier() -> None:
    assert throttle().gate_tier(candidate(tier="informational")) == "informational"


# ---- gate 2: hourly cap per tier ------------------------------------------------------------------------------------


def test_the_fifth_helpful_in_an_hour_is_dropped_and_allowed_again_once_the_first_ages_out() -> None:
    t = throttle()
    sent = [deliver(t, candidate(f"k{i}"), at(minutes=10 * i)).delivered_at for i in range(4)]
    assert sent == [at(seconds=30), at(10, 30), at(20, 30), at(30, 30)]

    fifth = t.offer(candidate("k4"), at(40))
    assert (fifth.outcome, fifth.gate, fifth.reason) == (
        Outcome.DROPPED,
        Gate.HOURLY_CAP,
        "hourly cap for helpful reached (4/h)",
    )
    assert t.offer(candidate("k4"), at(60, 29)).outcome is Outcome.DROPPED  # the first is 59:59 old
    assert t.offer(candidate("k4"), at(60, 30)).outcome is Outcome.BUNDLED  # ... and now an hour old: out
    assert titles(t.due(at(61))) == ["k4 (helpful)"]


def test_each_tier_has_its_own_cap() -> None:
    t = throttle()
    for i in range(2):
        deliver(t, candidate(f"info{i}", "informational"), at(i))
    assert t.offer(candidate("info2", "informational"), at(5)).reason == "hourly cap for informational reached (2/h)"
    assert deliver(t, candidate("help", "helpful"), at(5)).tier == "helpful"
    delivered = [t.offer(candidate(f"u{i}", "urgent"), at(6)).outcome for i in range(11)]
    assert delivered == [Outcome.DELIVERED] * 10 + [Outcome.DROPPED]
    assert t.decisions[-1].reason == "hourly cap for urgent reached (10/h)"


def test_the_cap_is_asked_again_when_a_window_closes_so_pending_bundles_cannot_overshoot_it() -> None:
    t = throttle()
    for i in range(5):
        assert t.offer(candidate(f"k{i}"), at()).outcome is Outcome.BUNDLED  # nothing delivered yet
    assert titles(t.due(at(seconds=30))) == ["k0 (helpful)", "k1 (helpful)", "k2 (helpful)", "k3 (helpful)"]
    last = t.decisions[-1]
    assert (last.outcome, last.gate, last.candidates) == (Outcome.DROPPED, Gate.HOURLY_CAP, (candidate("k4"),))


def test_a_cap_of_zero_turns_a_tier_off() -> None:
    t = throttle(informational_per_hour=0)
    assert t.offer(candidate(tier="informational"), at()).reason == "hourly cap for informational reached (0/h)"


def test_gate_hourly_cap_alone() -> None:
    t = throttle(helpful_per_hour=1)
    assert t.gate_hourly_cap("helpful", at()) is None
    deliver(t, candidate(), at())
    assert t.gate_hourly_cap("helpful", at(1)) == Verdict(
        Outcome.DROPPED, Gate.HOURLY_CAP, "hourly cap for helpful reached (1/h)"
    )
    assert t.gate_hourly_cap("informational", at(1)) is None


# ---- gate 3: deep work ----------------------------------------------------------------------------------------------


def test_deep_work_holds_helpful_and_informational_while_urgent_passes() -> None:
    work = DeepWork()
    work.state = "deep work in Code since 14:02"
    t = throttle(deep_work=work)
    helpful = t.offer(candidate("pr_review", "helpful"), at(5))
    info = t.offer(candidate("digest", "informational"), at(6))
    urgent = t.offer(candidate("meeting_soon", "urgent"), at(7))
    assert explain([helpful, info, urgent]) == [
        ("held", "deep_work", "held: deep work in Code since 14:02"),
        ("held", "deep_work", "held: deep work in Code since 14:02"),
        ("delivered", None, "delivered as urgent"),
    ]
    assert t.held == (candidate("pr_review", "helpful"), candidate("digest", "informational"))
    assert t.due(at(10)) == []  # held, not waiting for a window
    assert work.asked == [at(5), at(6)]  # urgent does not even ask


def test_a_plain_true_signal_reads_as_deep_work() -> None:
    work = DeepWork()
    work.state = True
    assert throttle(deep_work=work).offer(candidate(), at()).reason == "held: deep work"


def test_release_lets_held_ones_through_in_order_and_still_honours_the_cap() -> None:
    work = DeepWork()
    t = throttle(deep_work=work)
    deliver(t, candidate("before"), at())  # one of the four helpful this hour is gone
    work.state = "deep work in Code since 14:02"
    for i in range(5):
        t.offer(candidate(f"k{i}", title=f"held {i}"), at(2 + i))
    work.state = False

    released = t.release(at(30))
    assert [d.outcome for d in released] == [Outcome.BUNDLED] * 5
    assert [d.candidates[0].title for d in released] == [f"held {i}" for i in range(5)]
    assert t.held == ()
    assert titles(t.due(at(30, 30))) == ["held 0", "held 1", "held 2"]
    assert explain(t.decisions[-2:]) == [("dropped", "hourly_cap", "hourly cap for helpful reached (4/h)")] * 2


def test_release_does_not_ask_deep_work_again_and_related_held_ones_go_out_as_one() -> None:
    work = DeepWork()
    work.state = True
    t = throttle(deep_work=work)
    t.offer(candidate("pr_review", key="pr:12", title="review requested"), at(1))
    t.offer(candidate("pr_comment", key="pr:12", title="new comment"), at(2))
    asked = len(work.asked)
    t.release(at(20))  # the caller says the context switched, whatever the signal says
    assert len(work.asked) == asked
    [delivery] = t.due(at(20, 30))
    assert (delivery.title, delivery.body) == ("review requested (+1 more)", "review requested\nnew comment")


def test_release_drops_the_ones_held_too_long() -> None:
    work = DeepWork()
    work.state = True
    t = throttle(deep_work=work)
    t.offer(candidate("old"), at(0))
    t.offer(candidate("fresh"), at(60))
    released = t.release(at(120))
    assert explain(released) == [
        ("dropped", "deep_work", "dropped: held for deep work 2 h or more"),
        ("bundled", "bundling", "waiting 30 s for related notifications"),
    ]


def test_the_hold_queue_is_capped_and_stale_ones_make_room() -> None:
    work = DeepWork()
    work.state = True
    t = throttle(deep_work=work, max_held=2)
    t.offer(candidate("a"), at(0))
    t.offer(candidate("b"), at(60))
    full = t.offer(candidate("c"), at(61))
    assert explain([full]) == [("dropped", "deep_work", "dropped: 2 notifications already held for deep work")]
    assert t.offer(candidate("d"), at(120)).outcome is Outcome.HELD  # "a" went stale
    assert [c.kind for c in t.held] == ["b", "d"]
    assert t.decisions[-2].reason == "dropped: held for deep work 2 h or more"


def test_the_cap_comes_before_deep_work_so_a_full_tier_is_not_held() -> None:
    work = DeepWork()
    t = throttle(deep_work=work, helpful_per_hour=1)
    deliver(t, candidate("first"), at())
    work.state = True
    assert t.offer(candidate("second"), at(1)).gate is Gate.HOURLY_CAP
    assert t.held == ()


# ---- gate 4: dismissal history --------------------------------------------------------------------------------------


def history_of(kind: str, *outcomes: Response, when: datetime = T0 - timedelta(days=1)) -> MemoryHistory:
    history = MemoryHistory()
    for outcome in outcomes:
        history.record(kind, outcome, when)
    return history


DISMISS3 = (Response.DISMISS,) * 3


def test_a_kind_dismissed_three_times_drops_one_tier() -> None:
    t = throttle(history=history_of("pr_review", *DISMISS3))
    decision = t.offer(candidate("pr_review", "helpful"), at())
    [delivery] = t.due(at(seconds=30))
    assert delivery.tier == "informational" and decision.tier == "informational"
    assert t.decisions[-1].reason == (
        "delivered as informational; lowered from helpful to informational: "
        "pr_review dismissed 3 times in 7 days without an accept"
    )
    assert deliver(t, candidate("other", "helpful"), at(1)).tier == "helpful"


def test_an_informational_kind_that_would_drop_further_is_suppressed() -> None:
    t = throttle(history=history_of("digest", *DISMISS3))
    decision = t.offer(candidate("digest", "informational"), at())
    assert explain([decision]) == [
        ("suppressed", "dismissals", "suppressed: digest dismissed 3 times in 7 days without an accept")
    ]
    assert t.bundling == ()


def test_a_lowered_urgent_kind_meets_the_gates_of_its_new_tier() -> None:
    work = DeepWork()
    work.state = "deep work in Code since 14:02"
    t = throttle(deep_work=work, history=history_of("standup", *DISMISS3))
    decision = t.offer(candidate("standup", "urgent"), at())
    assert (decision.outcome, decision.tier) == (Outcome.HELD, "helpful")
    work.state = False
    assert t.release(at(5))[0].outcome is Outcome.BUNDLED  # no longer urgent: it waits for the window


def test_a_lowered_kind_counts_against_its_new_tiers_cap() -> None:
    t = throttle(history=history_of("pr_review", *DISMISS3))
    for i in range(2):
        deliver(t, candidate(f"info{i}", "informational"), at(i))
    decision = t.offer(candidate("pr_review", "helpful"), at(5))
    assert (decision.outcome, decision.reason) == (Outcome.DROPPED, "hourly cap for informational reached (2/h)")


def test_an_accept_stops_the_lowering_and_fewer_or_older_dismissals_do_not_lower() -> None:
    accepted = history_of("pr_review", *DISMISS3, Response.ACCEPT)
    expanded = history_of("pr_review", *DISMISS3, Response.EXPAND)
    two = history_of("pr_review", Response.DISMISS, Response.DISMISS, Response.SNOOZE)
    old = history_of("pr_review", *DISMISS3, when=T0 - timedelta(days=7, seconds=1))
    for history in (accepted, expanded, two, old):
        assert deliver(throttle(history=history), candidate("pr_review"), at()).tier == "helpful"


def test_dismissals_through_respond_lower_the_kind_and_an_accept_through_respond_resets_it() -> None:
    t = throttle()
    for i in range(3):  # 40 minutes apart, so each one's cooldown is over
        delivery = t.offer(candidate("pr_review", "urgent"), at(40 * i)).delivery
        assert delivery is not None and delivery.tier == "urgent"
        t.respond(delivery.id, "dismiss", at(40 * i + 1))
    lowered = t.offer(candidate("pr_review", "urgent"), at(200))
    assert (lowered.outcome, lowered.tier) == (Outcome.BUNDLED, "helpful")
    [delivery] = t.due(at(200, 30))
    t.respond(delivery.id, Response.ACCEPT, at(201))
    assert t.offer(candidate("pr_review", "urgent"), at(202)).tier == "urgent"


def test_gate_dismissals_alone() -> None:
    t = throttle(history=history_of("pr_review", *DISMISS3))
    assert t.gate_dismissals(candidate("other"), at()) is None
    lowered = t.gate_dismissals(candidate("pr_review", "urgent"), at())
    assert isinstance(lowered, Lowered) and lowered.tier == "helpful"


# ---- gate 5: bundling -----------------------------------------------------------------------------------------------


def test_related_candidates_within_the_window_go_out_as_one_with_the_highest_tier_and_every_member() -> None:
    t = throttle()
    first = candidate("mcp:github:pr_comment", "informational", key="pr:12", title="comment by ana")
    second = candidate("mcp:github:pr_review", "helpful", key="pr:12", title="review requested")
    third = candidate("mcp:github:pr_comment", "informational", key="pr:12", title="comment by bo")
    decisions = [t.offer(first, at(seconds=0)), t.offer(second, at(seconds=10)), t.offer(third, at(seconds=29))]
    assert explain(decisions) == [
        ("bundled", "bundling", "waiting 30 s for related notifications"),
        ("bundled", "bundling", "bundled with 1 related notification (key 'pr:12')"),
        ("bundled", "bundling", "bundled with 2 related notifications (key 'pr:12')"),
    ]
    assert all(d.delivery is None for d in decisions)
    assert t.due(at(seconds=29)) == []  # the window runs from the first one
    [delivery] = t.due(at(seconds=30))
    assert delivery == Delivery(
        id="d1",
        tier="helpful",
        kind="mcp:github:pr_review",
        key="pr:12",
        title="review requested (+2 more)",
        body="comment by ana\nreview requested\ncomment by bo",
        candidates=(first, second, third),
        delivered_at=at(seconds=30),
    )
    assert t.decisions[-1].reason == "delivered as helpful: 3 related notifications in one"


def test_unrelated_keys_stay_apart_and_a_late_one_opens_a_new_window() -> None:
    t = throttle()
    t.offer(candidate("pr_review", key="pr:12", title="a"), at(seconds=0))
    t.offer(candidate("pr_review", key="pr:13", title="b"), at(seconds=5))
    t.offer(candidate("pr_review", key="pr:12", title="c"), at(seconds=30))  # the first window just closed
    assert titles(t.due(at(seconds=35))) == ["a", "b"]
    assert titles(t.due(at(seconds=60))) == ["c"]


def test_the_key_defaults_to_the_kind() -> None:
    t = throttle()
    t.offer(candidate("pr_review", title="a"), at())
    t.offer(candidate("pr_review", title="b"), at(seconds=1))
    t.offer(candidate("digest", title="c"), at(seconds=2))
    assert titles(t.due(at(1))) == ["a (+1 more)", "c"]


def test_urgent_is_not_held_for_bundling_even_with_a_related_window_open() -> None:
    t = throttle()
    t.offer(candidate("pr_review", "helpful", key="pr:12", title="review"), at())
    urgent = t.offer(candidate("ci_failed", "urgent", key="pr:12", title="CI failed"), at(seconds=1))
    assert urgent.delivery is not None and urgent.delivery.candidates == (urgent.candidates[0],)
    assert titles(t.due(at(seconds=30))) == ["review"]


# ---- gate 6: cooldown -----------------------------------------------------------------------------------------------


def test_a_dismissal_cools_the_kind_down_but_not_other_kinds_until_the_cooldown_ends() -> None:
    t = throttle()
    delivery = deliver(t, candidate("pr_review"), at())
    t.respond(delivery.id, "dismiss", at(1))

    t.offer(candidate("pr_review"), at(6))
    t.offer(candidate("digest"), at(6))
    assert titles(t.due(at(6, 30))) == ["digest (helpful)"]
    assert explain(t.decisions[-2:-1]) == [
        ("suppressed", "cooldown", "cooling down after a dismissal 5 min ago (30 min)")
    ]

    t.offer(candidate("pr_review"), at(30, 40))  # closes at 31:10, 30 min after the dismissal
    assert titles(t.due(at(31, 10))) == ["pr_review (helpful)"]


def test_a_dismissal_during_the_window_suppresses_the_pending_members_of_that_kind() -> None:
    t = throttle()
    urgent = t.offer(candidate("pr_review", "urgent"), at()).delivery
    assert urgent is not None
    t.offer(candidate("pr_review", key="pr:12", title="review"), at(seconds=1))
    t.offer(candidate("pr_comment", key="pr:12", title="comment"), at(seconds=2))
    t.respond(urgent.id, "dismiss", at(seconds=10))
    [delivery] = t.due(at(seconds=31))
    assert (delivery.title, delivery.kind) == ("comment", "pr_comment")
    suppressed = t.decisions[-2]
    assert (suppressed.gate, suppressed.candidates[0].title) == (Gate.COOLDOWN, "review")


def test_cooldown_applies_to_urgent_too_and_a_bundle_dismissal_cools_every_kind_in_it() -> None:
    t = throttle()
    t.offer(candidate("pr_review", key="pr:12"), at())
    t.offer(candidate("pr_comment", key="pr:12"), at())
    [bundle] = t.due(at(seconds=30))
    t.respond(bundle.id, "dismiss", at(1))
    assert t.offer(candidate("pr_comment", "urgent"), at(2)).gate is Gate.COOLDOWN
    assert t.offer(candidate("pr_review", "urgent"), at(2)).gate is Gate.COOLDOWN
    assert t.offer(candidate("meeting_soon", "urgent"), at(2)).outcome is Outcome.DELIVERED


def test_gate_cooldown_alone() -> None:
    t = throttle(cooldown=timedelta(minutes=10))
    delivery = t.offer(candidate("x", "urgent"), at()).delivery
    assert delivery is not None
    t.respond(delivery.id, "dismiss", at())
    assert t.gate_cooldown("x", at(9, 59)) is not None
    assert t.gate_cooldown("x", at(10)) is None
    assert t.gate_cooldown("y", at(1)) is None


# ---- responses ------------------------------------------------------------------------------------------------------


def test_snooze_offers_the_delivery_again_later_through_the_gates() -> None:
    t = throttle()
    delivery = deliver(t, candidate("pr_review", title="review"), at())
    t.respond(delivery.id, "snooze", at(1), snooze_minutes=15)
    assert t.snoozed == delivery.candidates and t.awaiting_response == ()
    assert t.due(at(15, 59)) == [] and t.snoozed == delivery.candidates and t.bundling == ()
    # Offered again at 16: it waits for its bundling window like any helpful one.
    assert t.due(at(16)) == [] and t.snoozed == () and t.bundling == delivery.candidates
    [again] = t.due(at(16, 30))
    assert (again.title, again.id) == ("review", "d2")
    assert t.gate_cooldown("pr_review", at(17)) is None  # a snooze is not a dismissal


def test_a_snoozed_urgent_comes_back_at_once_and_the_default_snooze_is_ten_minutes() -> None:
    t = throttle()
    delivery = t.offer(candidate("meeting_soon", "urgent"), at()).delivery
    assert delivery is not None
    t.respond(delivery.id, Response.SNOOZE, at(1))
    assert t.due(at(10, 59)) == []
    assert [d.kind for d in t.due(at(11))] == ["meeting_soon"]


def test_a_snoozed_delivery_meets_the_cap_again() -> None:
    t = throttle(helpful_per_hour=1)
    delivery = deliver(t, candidate(), at())
    t.respond(delivery.id, "snooze", at(1))
    assert t.due(at(11)) == []
    assert t.decisions[-1].reason == "hourly cap for helpful reached (1/h)"


def test_every_response_is_recorded_per_kind_and_a_delivery_takes_one_answer() -> None:
    history = MemoryHistory()
    t = throttle(history=history)
    t.offer(candidate("a", key="k"), at())
    t.offer(candidate("b", key="k"), at())
    t.offer(candidate("a", key="k"), at())
    [delivery] = t.due(at(1))
    t.respond(delivery.id, "expand", at(2))
    assert history.entries == [("a", Response.EXPAND, at(2)), ("b", Response.EXPAND, at(2))]
    assert history.counts("a", at(0)) == (0, 1)
    with pytest.raises(UnknownDelivery, match="no delivery 'd1' awaits a response"):
        t.respond(delivery.id, "accept", at(3))


def test_old_deliveries_are_forgotten_after_a_day() -> None:
    t = throttle()
    delivery = deliver(t, candidate(), at())
    with pytest.raises(UnknownDelivery, match="older than 1 day"):
        t.respond(delivery.id, "accept", at(seconds=30) + timedelta(days=1))
    later = deliver(t, candidate(), at(seconds=30) + timedelta(days=1))
    assert t.awaiting_response == (later,)  # forgotten, so memory stays bounded


# ---- explanations ---------------------------------------------------------------------------------------------------


def test_an_afternoon_reads_as_a_list_of_reasons() -> None:
    work = DeepWork()
    t = throttle(deep_work=work, helpful_per_hour=2, history=history_of("digest", *DISMISS3))
    t.offer(candidate("pr_review", key="pr:1"), at(0))
    t.offer(candidate("pr_comment", key="pr:1"), at(0, 10))
    [first] = t.due(at(0, 30))
    t.respond(first.id, "dismiss", at(1))
    t.offer(candidate("pr_review"), at(5))
    t.offer(candidate("digest", "informational"), at(5))
    t.due(at(5, 30))
    work.state = "deep work in Code since 14:10"
    t.offer(candidate("ticket"), at(12))
    t.offer(candidate("meeting_soon", "urgent"), at(13))
    work.state = False
    t.release(at(40))
    t.due(at(40, 30))
    t.offer(candidate("ticket2"), at(41))
    assert explain(t.decisions) == [
        ("bundled", "bundling", "waiting 30 s for related notifications"),
        ("bundled", "bundling", "bundled with 1 related notification (key 'pr:1')"),
        ("delivered", None, "delivered as helpful: 2 related notifications in one"),
        ("bundled", "bundling", "waiting 30 s for related notifications"),
        ("suppressed", "dismissals", "suppressed: digest dismissed 3 times in 7 days without an accept"),
        ("suppressed", "cooldown", "cooling down after a dismissal 4 min ago (30 min)"),
        ("held", "deep_work", "held: deep work in Code since 14:10"),
        ("delivered", None, "delivered as urgent"),
        ("bundled", "bundling", "waiting 30 s for related notifications"),
        ("delivered", None, "delivered as helpful"),
        ("dropped", "hourly_cap", "hourly cap for helpful reached (2/h)"),
    ]


def test_the_decision_log_is_bounded() -> None:
    t = Throttle(keep_decisions=3)
    for i in range(5):
        t.offer(candidate(f"k{i}", "urgent"), at())
    assert [d.candidates[0].kind for d in t.decisions] == ["k2", "k3", "k4"]


# ---- bad input ------------------------------------------------------------------------------------------------------


NAIVE = datetime(2026, 3, 2, 14, 0)


def test_naive_times_are_refused_and_change_nothing() -> None:
    work = DeepWork()
    t = throttle(deep_work=work)
    delivery = deliver(t, candidate("a"), at())
    t.offer(candidate("b"), at(1))
    before = state(t)
    for call in (
        lambda: t.offer(candidate("c"), NAIVE),
        lambda: t.due(NAIVE),
        lambda: t.release(NAIVE),
        lambda: t.respond(delivery.id, "dismiss", NAIVE),
    ):
        with pytest.raises(ValueError, match="now must be a timezone-aware datetime"):
            call()
    assert state(t) == before
    with pytest.raises(ValueError, match="created_at must be a timezone-aware datetime"):
        Candidate(kind="x", tier="urgent", title="", body="", created_at=NAIVE)


def test_an_unknown_tier_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tier 'critical': expected one of urgent, helpful, informational"):
        candidate(tier="critical")
    with pytest.raises(ValueError, match="needs a kind"):
        candidate(kind="")


def test_bad_responses_are_refused_and_change_nothing() -> None:
    t = throttle()
    delivery = deliver(t, candidate(), at())
    before = state(t)
    with pytest.raises(UnknownDelivery, match="no delivery 'nope' awaits a response"):
        t.respond("nope", "accept", at(1))
    with pytest.raises(ValueError, match="unknown response 'ignore': expected one of accept, dismiss, snooze, expand"):
        t.respond(delivery.id, "ignore", at(1))
    with pytest.raises(ValueError, match="snooze_minutes"):
        t.respond(delivery.id, "accept", at(1), snooze_minutes=5)
    with pytest.raises(ValueError, match="snooze_minutes"):
        t.respond(delivery.id, "snooze", at(1), snooze_minutes=0)
    assert state(t) == before
    assert t.history.counts("pr_review", at(-1)) == (0, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("helpful_per_hour", -1), ("bundle_window", timedelta(0)), ("dismissals_to_lower", 0), ("max_held", 0)],
)
def test_settings_that_make_no_sense_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"GateSettings.{field}"):
        GateSettings(**{field: value})  # type: ignore[arg-type]
