"""The throttle: every candidate passes six gates, in the seed's order, before it becomes a delivery.

1. priority tier — the candidate's tier and what `TIER_RULES` asks of it;
2. hourly cap per tier — a sliding hour of deliveries;
3. deep-work suppression — helpful and informational wait out deep work, urgent passes;
4. dismissal history — a kind the user keeps dismissing drops a tier; informational ones are suppressed instead;
5. bundling — helpful and informational wait `bundle_window` for related ones (same `key`) and go out as one;
6. cooldown — a kind dismissed recently is suppressed.

Gate 4 can lower the tier, which changes what gates 2 and 3 ask, so gates 2-4 run until the tier settles (at most
twice: the lowering depends only on the declared tier). Gates 5 and 6 act when a delivery would go out — for a bundle,
when its window closes — so a dismissal during the window still counts, and gate 2 is asked again then with the
bundle's tier: no tier ever gets more than its cap of deliveries in an hour.

Pure and clocked from outside, like `cowork.capture`'s tracker and `cowork.runtime`'s `decide`: every call takes a
tz-aware `now`, nothing sleeps or reads a clock, and the only effects are on this object and the injected history.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ._history import DismissalHistory, MemoryHistory
from ._settings import GateSettings
from ._tiers import TIER_RULES, TIERS, Tier, check_tier, highest, lower
from ._values import (
    Candidate,
    Decision,
    Delivery,
    Gate,
    Outcome,
    Response,
    UnknownDelivery,
    Verdict,
    require_aware,
    span,
)

__all__ = ["DeepWork", "Lowered", "Throttle"]

DeepWork = Callable[[datetime], bool | str]
"""Whether the user is in deep work at a time: False, True, or a description ("deep work in Code since 14:02")."""

_HOUR = timedelta(hours=1)


def _never(now: datetime) -> bool:
    return False


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Lowered:
    """Gate 4's answer when it lets a candidate through one tier lower."""

    tier: Tier
    reason: str


@dataclass(frozen=True, slots=True)
class _Member:
    candidate: Candidate
    tier: Tier
    notes: tuple[str, ...]


@dataclass(slots=True)
class _Bundle:
    key: str
    closes_at: datetime
    members: list[_Member]


@dataclass(frozen=True, slots=True)
class _Held:
    candidate: Candidate
    held_at: datetime


@dataclass(frozen=True, slots=True)
class _Snoozed:
    due_at: datetime
    candidates: tuple[Candidate, ...]


class Throttle:
    """Candidates in (`offer`), deliveries out (`offer` for urgent ones, `due` for the rest), answers back (`respond`).

    The caller drives time: `due(now)` every few seconds closes bundling windows and brings back snoozed deliveries,
    `release(now)` when deep work ends lets held candidates through the other gates.
    """

    def __init__(
        self,
        settings: GateSettings | None = None,
        *,
        history: DismissalHistory | None = None,
        deep_work: DeepWork = _never,
        new_id: Callable[[], str] = _new_id,
        keep_decisions: int = 200,
    ) -> None:
        self.settings = settings or GateSettings()
        self.history: DismissalHistory = history if history is not None else MemoryHistory()
        self._deep_work = deep_work
        self._new_id = new_id
        self._sent: dict[Tier, deque[datetime]] = {tier: deque() for tier in TIERS}
        self._held: deque[_Held] = deque()
        self._bundles: list[_Bundle] = []
        self._snoozed: list[_Snoozed] = []
        self._open: dict[str, Delivery] = {}
        self._dismissed_at: dict[str, datetime] = {}
        self._log: deque[Decision] = deque(maxlen=keep_decisions)

    # ---- reading -------------------------------------------------------------------------------------------------

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """The latest decisions, oldest first: offers, and what `due` and `release` decided later."""
        return tuple(self._log)

    @property
    def held(self) -> tuple[Candidate, ...]:
        """Candidates waiting out deep work, in the order they came."""
        return tuple(item.candidate for item in self._held)

    @property
    def bundling(self) -> tuple[Candidate, ...]:
        """Candidates waiting for their bundling window to close."""
        return tuple(member.candidate for bundle in self._bundles for member in bundle.members)

    @property
    def snoozed(self) -> tuple[Candidate, ...]:
        """Candidates of snoozed deliveries, waiting to be offered again."""
        return tuple(candidate for item in self._snoozed for candidate in item.candidates)

    @property
    def awaiting_response(self) -> tuple[Delivery, ...]:
        """Deliveries the user can still answer."""
        return tuple(self._open.values())

    # ---- the gates, in order -------------------------------------------------------------------------------------

    def gate_tier(self, candidate: Candidate) -> Tier:
        """Gate 1: the tier the candidate starts through the gates with (its own, checked)."""
        return check_tier(candidate.tier)

    def gate_hourly_cap(self, tier: Tier, now: datetime) -> Verdict | None:
        """Gate 2: stop the candidate when `tier` already had its cap of deliveries in the hour before `now`."""
        cap = self.settings.hourly_cap(tier)
        if self._sent_in_hour(tier, now) < cap:
            return None
        return Verdict(Outcome.DROPPED, Gate.HOURLY_CAP, f"hourly cap for {tier} reached ({cap}/h)")

    def gate_deep_work(self, tier: Tier, now: datetime) -> Verdict | None:
        """Gate 3: hold the candidate while the user is in deep work, unless its tier never waits."""
        if not TIER_RULES[tier].waits_out_deep_work:
            return None
        state = self._deep_work(now)
        if not state:
            return None
        return Verdict(Outcome.HELD, Gate.DEEP_WORK, f"held: {state if isinstance(state, str) else 'deep work'}")

    def gate_dismissals(self, candidate: Candidate, now: datetime) -> Verdict | Lowered | None:
        """Gate 4: lower a kind the user dismissed often lately and never took up; suppress it if it cannot drop."""
        settings = self.settings
        dismissed, engaged = self.history.counts(candidate.kind, now - settings.dismissal_lookback)
        if engaged or dismissed < settings.dismissals_to_lower:
            return None
        why = f"{candidate.kind} dismissed {dismissed} times in {span(settings.dismissal_lookback)} without an accept"
        tier = lower(candidate.tier)
        if tier is None:
            return Verdict(Outcome.SUPPRESSED, Gate.DISMISSALS, f"suppressed: {why}")
        return Lowered(tier, f"lowered from {candidate.tier} to {tier}: {why}")

    def gate_bundling(self, candidate: Candidate, tier: Tier, now: datetime, notes: tuple[str, ...]) -> Verdict | None:
        """Gate 5: keep the candidate for the bundling window, with related ones if a window for its key is open."""
        if not TIER_RULES[tier].bundles:
            return None
        member = _Member(candidate, tier, notes)
        for bundle in self._bundles:
            if bundle.key == candidate.key and now < bundle.closes_at:
                bundle.members.append(member)
                others = len(bundle.members) - 1
                plural = "s" if others != 1 else ""
                reason = f"bundled with {others} related notification{plural} (key {candidate.key!r})"
                return Verdict(Outcome.BUNDLED, Gate.BUNDLING, reason)
        window = self.settings.bundle_window
        self._bundles.append(_Bundle(candidate.key, now + window, [member]))
        return Verdict(Outcome.BUNDLED, Gate.BUNDLING, f"waiting {span(window)} for related notifications")

    def gate_cooldown(self, kind: str, now: datetime) -> Verdict | None:
        """Gate 6: suppress `kind` for the cooldown after the user dismissed it."""
        dismissed_at = self._dismissed_at.get(kind)
        if dismissed_at is None or now - dismissed_at >= self.settings.cooldown:
            return None
        ago, cooldown = span(now - dismissed_at), span(self.settings.cooldown)
        return Verdict(Outcome.SUPPRESSED, Gate.COOLDOWN, f"cooling down after a dismissal {ago} ago ({cooldown})")

    # ---- driving -------------------------------------------------------------------------------------------------

    def offer(self, candidate: Candidate, now: datetime) -> Decision:
        """Put `candidate` through the gates.

        Returns:
            The decision; it carries the delivery when the candidate went out at once (urgent ones). A bundled or held
            candidate's later fate is decided by `due` or `release` and recorded in `decisions`.

        Raises:
            ValueError: `now` is naive or the candidate's tier unknown (nothing changes).
        """
        require_aware(now)
        return self._offer(candidate, now, after_deep_work=False)

    def due(self, now: datetime) -> list[Delivery]:
        """Close the bundling windows that ended by `now` and offer snoozed deliveries whose time came.

        Returns:
            The deliveries that go out now, oldest window first.

        Raises:
            ValueError: `now` is naive (nothing changes).
        """
        require_aware(now)
        deliveries: list[Delivery] = []
        closed = [bundle for bundle in self._bundles if bundle.closes_at <= now]
        self._bundles = [bundle for bundle in self._bundles if bundle.closes_at > now]
        for bundle in closed:
            if (delivery := self._close(bundle, now)) is not None:
                deliveries.append(delivery)
        woken = [item for item in self._snoozed if item.due_at <= now]
        self._snoozed = [item for item in self._snoozed if item.due_at > now]
        for item in woken:
            for candidate in item.candidates:
                if (delivery := self._offer(candidate, now, after_deep_work=False).delivery) is not None:
                    deliveries.append(delivery)
        return deliveries

    def release(self, now: datetime) -> list[Decision]:
        """Deep work ended: let the held candidates, in the order they came, through the other gates.

        Ones held for `held_expiry` or longer are dropped as stale. The caller calls this at the context switch; the
        deep-work gate is not asked again for these.

        Returns:
            One decision per held candidate, in order.

        Raises:
            ValueError: `now` is naive (nothing changes).
        """
        require_aware(now)
        held, self._held = self._held, deque()
        return [
            self._drop_stale(item, now)
            if self._stale(item, now)
            else self._offer(item.candidate, now, after_deep_work=True)
            for item in held
        ]

    def respond(
        self, delivery_id: str, outcome: Response | str, now: datetime, *, snooze_minutes: float | None = None
    ) -> None:
        """Take the user's answer to a delivery.

        Every answer is recorded in the history for each kind in the delivery. Dismiss starts the cooldown of those
        kinds; accept and expand are engagement, which stops a kind's dismissals from lowering it; snooze offers the
        delivery's candidates again after `snooze_minutes` (default `GateSettings.snooze`). A delivery takes one
        answer.

        Raises:
            ValueError: `now` is naive, `outcome` unknown, or `snooze_minutes` not positive or given without snooze.
            UnknownDelivery: no delivery with this id awaits an answer.
        """
        require_aware(now)
        try:
            response = Response(outcome)
        except ValueError:
            allowed = ", ".join(Response)
            raise ValueError(f"unknown response {outcome!r}: expected one of {allowed}") from None
        if snooze_minutes is not None and (response is not Response.SNOOZE or snooze_minutes <= 0):
            raise ValueError(f"snooze_minutes must be positive and goes only with snooze, got {snooze_minutes}")
        delivery = self._open.get(delivery_id)
        if delivery is None or now - delivery.delivered_at >= self.settings.answerable_for:
            raise UnknownDelivery(
                f"no delivery {delivery_id!r} awaits a response "
                f"(unknown, already answered, or older than {span(self.settings.answerable_for)})"
            )
        del self._open[delivery_id]
        self._forget_old(now)
        for kind in dict.fromkeys(candidate.kind for candidate in delivery.candidates):
            self.history.record(kind, response, now)
            if response is Response.DISMISS:
                self._dismissed_at[kind] = now
        if response is Response.SNOOZE:
            wait = self.settings.snooze if snooze_minutes is None else timedelta(minutes=snooze_minutes)
            self._snoozed.append(_Snoozed(now + wait, delivery.candidates))

    # ---- inside --------------------------------------------------------------------------------------------------

    def _offer(self, candidate: Candidate, now: datetime, *, after_deep_work: bool) -> Decision:
        tier = self.gate_tier(candidate)
        notes: tuple[str, ...] = ()
        while True:  # gates 2-4 until the tier settles
            if verdict := self.gate_hourly_cap(tier, now):
                return self._decide(verdict, [candidate], tier, now)
            if not after_deep_work and (verdict := self.gate_deep_work(tier, now)):
                return self._hold(candidate, verdict, tier, now)
            lowered = self.gate_dismissals(candidate, now)
            if isinstance(lowered, Verdict):
                return self._decide(lowered, [candidate], tier, now)
            if lowered is None or lowered.tier == tier:
                break
            tier, notes = lowered.tier, (lowered.reason,)
        if verdict := self.gate_bundling(candidate, tier, now, notes):
            return self._decide(verdict, [candidate], tier, now, notes)
        if verdict := self.gate_cooldown(candidate.kind, now):
            return self._decide(verdict, [candidate], tier, now, notes)
        return self._deliver([_Member(candidate, tier, notes)], tier, now)

    def _close(self, bundle: _Bundle, now: datetime) -> Delivery | None:
        """A bundling window ended: gate 6 for each member, gate 2 again for the bundle's tier, then out it goes."""
        members: list[_Member] = []
        for member in bundle.members:
            if verdict := self.gate_cooldown(member.candidate.kind, now):
                self._decide(verdict, [member.candidate], member.tier, now, member.notes)
            else:
                members.append(member)
        if not members:
            return None
        tier = highest(member.tier for member in members)
        if verdict := self.gate_hourly_cap(tier, now):
            self._decide(verdict, [member.candidate for member in members], tier, now)
            return None
        return self._deliver(members, tier, now).delivery

    def _hold(self, candidate: Candidate, verdict: Verdict, tier: Tier, now: datetime) -> Decision:
        for item in [item for item in self._held if self._stale(item, now)]:  # stale ones make room
            self._held.remove(item)
            self._drop_stale(item, now)
        if len(self._held) >= self.settings.max_held:
            reason = f"dropped: {len(self._held)} notifications already held for deep work"
            return self._decide(Verdict(Outcome.DROPPED, Gate.DEEP_WORK, reason), [candidate], tier, now)
        self._held.append(_Held(candidate, now))
        return self._decide(verdict, [candidate], tier, now)

    def _stale(self, item: _Held, now: datetime) -> bool:
        return now - item.held_at >= self.settings.held_expiry

    def _drop_stale(self, item: _Held, now: datetime) -> Decision:
        reason = f"dropped: held for deep work {span(self.settings.held_expiry)} or more"
        return self._decide(Verdict(Outcome.DROPPED, Gate.DEEP_WORK, reason), [item.candidate], None, now)

    def _deliver(self, members: list[_Member], tier: Tier, now: datetime) -> Decision:
        candidates = tuple(member.candidate for member in members)
        lead = next(member.candidate for member in members if member.tier == tier)
        bundled = len(candidates) > 1
        delivery = Delivery(
            id=self._new_id(),
            tier=tier,
            kind=lead.kind,
            key=lead.key,
            title=f"{lead.title} (+{len(candidates) - 1} more)" if bundled else lead.title,
            body="\n".join(candidate.title for candidate in candidates) if bundled else lead.body,
            candidates=candidates,
            delivered_at=now,
        )
        self._sent[tier].append(now)
        self._forget_old(now)
        self._open[delivery.id] = delivery
        notes = tuple(dict.fromkeys(note for member in members for note in member.notes))
        reason = f"delivered as {tier}" + (f": {len(candidates)} related notifications in one" if bundled else "")
        return self._decide(None, list(candidates), tier, now, notes, reason=reason, delivery=delivery)

    def _decide(
        self,
        verdict: Verdict | None,
        candidates: list[Candidate],
        tier: Tier | None,
        now: datetime,
        notes: tuple[str, ...] = (),
        *,
        reason: str = "",
        delivery: Delivery | None = None,
    ) -> Decision:
        decision = Decision(
            outcome=verdict.outcome if verdict else Outcome.DELIVERED,
            reason="; ".join([verdict.reason if verdict else reason, *notes]),
            candidates=tuple(candidates),
            at=now,
            gate=verdict.gate if verdict else None,
            tier=tier,
            delivery=delivery,
        )
        self._log.append(decision)
        return decision

    def _sent_in_hour(self, tier: Tier, now: datetime) -> int:
        sent = self._sent[tier]
        while sent and now - sent[0] >= _HOUR:
            sent.popleft()
        return len(sent)

    def _forget_old(self, now: datetime) -> None:
        for delivery_id in [d.id for d in self._open.values() if now - d.delivered_at >= self.settings.answerable_for]:
            del self._open[delivery_id]
        self._dismissed_at = {k: at for k, at in self._dismissed_at.items() if now - at < self.settings.cooldown}
