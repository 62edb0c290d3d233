"""The complexity router: which model tier answers a turn, and why, decided by rules in well under a millisecond.

Tiers are given weakest first: an optional local tier (always first), then cloud tiers in ascending strength and
cost (seed 002: local, free, boost, pro, max). Rules, first match wins:

| step | when                                                           | tier        | code                | notify |
|------|----------------------------------------------------------------|-------------|---------------------|--------|
| 1    | try harder, previous tier below the top                        | next up     | `try_harder`        | no     |
| 1    | try harder, previous tier is the top                           | the top     | `top_tier`          | yes    |
| 1    | try harder, no previous tier (or an unknown one): one above    | next up     | `try_harder`        | no     |
|      | the tier steps 2-4 pick; the top tier if that is the top       | (the top)   | (`top_tier`)        | (yes)  |
| 2    | prefers cloud                                                  | first cloud | `prefer_cloud`      | no     |
| 3a   | prefers local, but no local tier or it is off (note in reason) | first cloud | `local_unavailable` | yes    |
| 3b   | prefers local, attachments (the local model has no vision)     | first cloud | `attachments`       | yes    |
| 3c   | prefers local, text + history tokens > `local_max_tokens`      | first cloud | `too_long`          | yes    |
| 3d   | prefers local, >= 2 kinds of tool work, or one kind and a      | first cloud | `multi_tool`        | yes    |
|      | sequence marker (then, after that, step by step, 1. 2.)        |             |                     |        |
| 3e   | prefers local, reasoning-heavy words (architect, prove, debug) | first cloud | `complex`           | yes    |
| 3f   | prefers local, tokens <= `simple_max_tokens`, no tool work     | local       | `simple`            | no     |
| 3g   | prefers local, anything else (one kind of tool work is fine)   | local       | `fits_local`        | no     |
| 4    | a step above needs cloud, but no cloud tier is configured      | local       | `no_cloud`          | yes    |

The text heuristics (tool work, sequence markers, keywords) read only the first and last 2,000 characters of a
long message, where its instruction is (see `instruction_excerpt`). Token counts are estimates (`estimate_tokens`
of the text plus the caller's `history_tokens`); both limits are inclusive, so exactly 500 tokens is still simple
and exactly 8,000 still fits. "Try harder" does not notify: the user asked for the stronger model, and the caller
shows the cost estimate before it runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from ._signals import complexity_marker, estimate_tokens, instruction_excerpt, multi_step_marker, tool_signals

__all__ = ["RouteCode", "RouteDecision", "RouteRequest", "Router", "Tier"]


class RouteCode(StrEnum):
    """Why a tier was chosen: stable codes shown to users and recorded in events."""

    PREFER_CLOUD = "prefer_cloud"
    SIMPLE = "simple"
    FITS_LOCAL = "fits_local"
    TOO_LONG = "too_long"
    ATTACHMENTS = "attachments"
    MULTI_TOOL = "multi_tool"
    COMPLEX = "complex"
    LOCAL_UNAVAILABLE = "local_unavailable"
    TRY_HARDER = "try_harder"
    TOP_TIER = "top_tier"
    NO_CLOUD = "no_cloud"


@dataclass(frozen=True)
class Tier:
    """One model tier, e.g. `Tier("pro", "openrouter", "anthropic/claude-sonnet-4.5")`."""

    name: str
    provider: str
    model: str
    local: bool = False


@dataclass(frozen=True)
class RouteRequest:
    """What the router knows about a turn: the new message, the conversation's size and the user's wishes."""

    text: str
    history_tokens: int = 0
    attachments: int = 0
    preference: Literal["local", "cloud"] = "cloud"
    try_harder: bool = False
    previous_tier: str | None = None
    local_available: bool = True
    local_note: str | None = None

    def __post_init__(self) -> None:
        if self.history_tokens < 0 or self.attachments < 0:
            raise ValueError("history_tokens and attachments must not be negative.")
        if self.preference not in ("local", "cloud"):
            raise ValueError(f"preference must be 'local' or 'cloud', not {self.preference!r}.")


@dataclass(frozen=True)
class RouteDecision:
    """The chosen tier, a stable code, one human sentence, and whether to tell the user about it."""

    tier: Tier
    code: RouteCode
    reason: str
    notify: bool
    estimated_tokens: int


class Router:
    """Pick a tier per turn by rules (see the module docstring); pure, deterministic, no I/O."""

    def __init__(self, tiers: Sequence[Tier], *, local_max_tokens: int = 8000, simple_max_tokens: int = 500) -> None:
        """Check and keep the tiers.

        Args:
            tiers: weakest and cheapest first; at most one local tier, and only in first place.
            local_max_tokens: the local model's context budget (prompt plus history).
            simple_max_tokens: the largest request that counts as simple.

        Raises:
            ValueError: no tiers, a repeated or empty name, a local tier not in first place, or bad limits.
        """
        tiers = tuple(tiers)
        if not tiers:
            raise ValueError("A router needs at least one tier.")
        names = [tier.name for tier in tiers]
        if not all(names):
            raise ValueError("Every tier needs a non-empty name.")
        if repeated := sorted({name for name in names if names.count(name) > 1}):
            raise ValueError(f"Tier names must be unique; repeated: {', '.join(repeated)}.")
        if misplaced := [tier.name for tier in tiers[1:] if tier.local]:
            raise ValueError(
                f"Only the first tier may be local (the weakest); local tier(s) out of place: {', '.join(misplaced)}."
            )
        if local_max_tokens <= 0 or not 0 <= simple_max_tokens <= local_max_tokens:
            raise ValueError(
                "Limits must satisfy 0 <= simple_max_tokens <= local_max_tokens and local_max_tokens > 0; "
                f"got simple_max_tokens={simple_max_tokens}, local_max_tokens={local_max_tokens}."
            )
        self._tiers = tiers
        self._index = {tier.name: i for i, tier in enumerate(tiers)}
        self._local = tiers[0] if tiers[0].local else None
        self._cloud = next((tier for tier in tiers if not tier.local), None)
        self.local_max_tokens = local_max_tokens
        self.simple_max_tokens = simple_max_tokens

    @property
    def tiers(self) -> tuple[Tier, ...]:
        """The tiers, weakest first."""
        return self._tiers

    def next_tier(self, name: str) -> Tier | None:
        """Return the tier above `name`, or None when `name` is the top tier.

        Raises:
            ValueError: `name` is not one of the router's tiers.
        """
        index = self._index.get(name)
        if index is None:
            raise ValueError(f"Unknown tier {name!r}; the tiers are {', '.join(self._index)}.")
        return self._tiers[index + 1] if index + 1 < len(self._tiers) else None

    def route(self, request: RouteRequest) -> RouteDecision:
        """Decide which tier answers `request`.

        Args:
            request: the new message and what is known about the conversation.

        Returns:
            The decision: tier, code, a one-sentence reason, whether to notify, and the estimated tokens.
        """
        tokens = estimate_tokens(request.text) + request.history_tokens
        if request.try_harder:
            return self._try_harder(request, tokens)
        if request.preference == "cloud":
            return self._to_cloud(RouteCode.PREFER_CLOUD, "", tokens)
        return self._prefer_local(request, tokens)

    def _prefer_local(self, request: RouteRequest, tokens: int) -> RouteDecision:
        local = self._local
        if local is None or not request.local_available:
            why = "no local model is configured" if local is None else "the local model is unavailable"
            if request.local_note:
                why += f" ({request.local_note.rstrip('.')})"
            return self._to_cloud(RouteCode.LOCAL_UNAVAILABLE, why, tokens)
        if request.attachments:
            plural = "attachment" if request.attachments == 1 else "attachments"
            why = f"it has {request.attachments} {plural}, and the local model cannot read images or files"
            return self._to_cloud(RouteCode.ATTACHMENTS, why, tokens)
        if tokens > self.local_max_tokens:
            budget = f"{self.local_max_tokens:,}-token budget"
            why = f"at about {tokens:,} tokens it is longer than the local model's {budget}"
            return self._to_cloud(RouteCode.TOO_LONG, why, tokens)
        text = instruction_excerpt(request.text)
        tools = tool_signals(text)
        if len(tools) >= 2:
            why = f"it needs several kinds of tool work ({', '.join(sorted(tools))})"
            return self._to_cloud(RouteCode.MULTI_TOOL, why, tokens)
        if tools and (marker := multi_step_marker(text)):
            why = f"it is a multi-step {next(iter(tools))} task ({_quote(marker)})"
            return self._to_cloud(RouteCode.MULTI_TOOL, why, tokens)
        if marker := complexity_marker(text):
            why = f"it asks for reasoning-heavy work ({_quote(marker)})"
            return self._to_cloud(RouteCode.COMPLEX, why, tokens)
        if tokens <= self.simple_max_tokens and not tools:
            reason = f"A short, simple request, so the local model ({local.model}) answers it for free."
            return RouteDecision(local, RouteCode.SIMPLE, reason, notify=False, estimated_tokens=tokens)
        doing = f"one kind of tool work ({next(iter(tools))})" if tools else "nothing it cannot do"
        reason = f"It fits the local model ({local.model}): about {tokens:,} tokens and {doing}."
        return RouteDecision(local, RouteCode.FITS_LOCAL, reason, notify=False, estimated_tokens=tokens)

    def _try_harder(self, request: RouteRequest, tokens: int) -> RouteDecision:
        previous = request.previous_tier
        if previous is not None and previous in self._index:
            base = self._tiers[self._index[previous]]
            since = f"the previous answer came from {base.name}"
        else:
            # No (or a no-longer-configured) previous tier: one step above what this turn would get anyway.
            base = self.route(dataclasses.replace(request, try_harder=False, previous_tier=None)).tier
            since = f"this would normally go to {base.name}"
            if previous is not None:
                since = f"{previous!r} is no longer a tier, and {since}"
        above = self.next_tier(base.name)
        if above is None:
            reason = f"Trying harder, but {base.name} ({base.model}) is already the strongest tier, so it stays there."
            return RouteDecision(base, RouteCode.TOP_TIER, reason, notify=True, estimated_tokens=tokens)
        reason = f"Trying harder on {above.name} ({above.model}), the next tier up: {since}."
        return RouteDecision(above, RouteCode.TRY_HARDER, reason, notify=False, estimated_tokens=tokens)

    def _to_cloud(self, code: RouteCode, why: str, tokens: int) -> RouteDecision:
        """The first cloud tier, or the local one when there is none; tell the user unless they asked for cloud."""
        cloud = self._cloud
        if cloud is None:
            # Tiers are never empty, so with no cloud tier the first one is local.
            local = self._tiers[0]
            if code is RouteCode.PREFER_CLOUD:
                reason = f"You prefer cloud, but no cloud tier is configured, so this stays on {local.model}."
            else:
                reason = f"No cloud tier is configured, so this stays on {local.model} although it needed cloud: {why}."
            return RouteDecision(local, RouteCode.NO_CLOUD, reason, notify=True, estimated_tokens=tokens)
        if code is RouteCode.PREFER_CLOUD:
            reason = f"You prefer cloud, so this goes to {cloud.name} ({cloud.model})."
        else:
            reason = f"This one needed cloud: {why}."
        return RouteDecision(cloud, code, reason, notify=code is not RouteCode.PREFER_CLOUD, estimated_tokens=tokens)


def _quote(marker: str) -> str:
    """Quote the words a heuristic matched ("then"); "numbered steps" describes a shape, not words."""
    return marker if marker == "numbered steps" else f'"{marker}"'
