"""The complexity router: every rule and edge as one table, then validation, tiers, and the text heuristics."""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path
from typing import cast

import pytest

import cowork.routing
from cowork.routing import RouteCode, RouteDecision, Router, RouteRequest, Tier, estimate_tokens, tool_signals

LOCAL = Tier("local", "ollama", "qwen3:8b", local=True)
FREE = Tier("free", "google", "gemini-2.5-flash")
BOOST = Tier("boost", "openrouter", "google/gemini-3-flash")
PRO = Tier("pro", "openrouter", "anthropic/claude-sonnet-4.5")
MAX = Tier("max", "openrouter", "anthropic/claude-opus-4.6")

ROUTERS = {
    "full": Router([LOCAL, FREE, BOOST, PRO, MAX]),
    "only_local": Router([LOCAL]),
    "only_cloud": Router([FREE, BOOST, PRO, MAX]),
}

NOTIFY = {
    RouteCode.PREFER_CLOUD: False,
    RouteCode.SIMPLE: False,
    RouteCode.FITS_LOCAL: False,
    RouteCode.TOO_LONG: True,
    RouteCode.ATTACHMENTS: True,
    RouteCode.MULTI_TOOL: True,
    RouteCode.COMPLEX: True,
    RouteCode.LOCAL_UNAVAILABLE: True,
    RouteCode.TRY_HARDER: False,
    RouteCode.TOP_TIER: True,
    RouteCode.NO_CLOUD: True,
}
"""Notify when the user preferred local and got cloud, or when the router could not do what was asked."""


def local(text: str, **extra: object) -> RouteRequest:
    return RouteRequest(text, preference="local", **extra)  # type: ignore[arg-type]


def cloud(text: str, **extra: object) -> RouteRequest:
    return RouteRequest(text, preference="cloud", **extra)  # type: ignore[arg-type]


def harder(previous: str | None, text: str = "Answer again, better.", **extra: object) -> RouteRequest:
    return RouteRequest(text, try_harder=True, previous_tier=previous, **extra)  # type: ignore[arg-type]


FILLER = "The numbers look fine. " * 300
"""About 6,900 characters (1,725 tokens) with no signal in them: longer than the two edges the heuristics read."""

NOTE = "the preflight check says qwen3:8b needs 9.1 GB but 6.0 GB are free"

CASES = [
    # 2. the user prefers cloud: the first cloud tier, whatever the request
    pytest.param("full", cloud("What's the capital of France?"), "free", RouteCode.PREFER_CLOUD, id="cloud-simple"),
    pytest.param("full", cloud(""), "free", RouteCode.PREFER_CLOUD, id="cloud-empty-text"),
    pytest.param("full", cloud("hi", history_tokens=50_000), "free", RouteCode.PREFER_CLOUD, id="cloud-long"),
    pytest.param("full", cloud("What is this?", attachments=3), "free", RouteCode.PREFER_CLOUD, id="cloud-attachments"),
    pytest.param("full", cloud("Design the system architecture"), "free", RouteCode.PREFER_CLOUD, id="cloud-complex"),
    pytest.param("full", cloud("hi", local_available=False), "free", RouteCode.PREFER_CLOUD, id="cloud-local-off"),
    pytest.param("only_cloud", cloud("hi"), "free", RouteCode.PREFER_CLOUD, id="cloud-only-cloud-tiers"),
    pytest.param("only_local", cloud("hi"), "local", RouteCode.NO_CLOUD, id="cloud-only-local-tier"),
    # 3f/3g. prefers local and the local model can do it
    pytest.param("full", local("What's the capital of France?"), "local", RouteCode.SIMPLE, id="local-simple"),
    pytest.param("full", local(""), "local", RouteCode.SIMPLE, id="local-empty-text"),
    pytest.param("full", local("abcd" * 500), "local", RouteCode.SIMPLE, id="local-exactly-500-tokens"),
    pytest.param("full", local("abcd" * 500 + "a"), "local", RouteCode.FITS_LOCAL, id="local-501-tokens"),
    pytest.param("full", local("hi", history_tokens=499), "local", RouteCode.SIMPLE, id="local-500-with-history"),
    pytest.param("full", local("hi", history_tokens=7999), "local", RouteCode.FITS_LOCAL, id="local-exactly-8000"),
    pytest.param("full", local("请把这段话翻译成英文"), "local", RouteCode.SIMPLE, id="local-cjk-short"),
    pytest.param("full", local("字" * 500), "local", RouteCode.SIMPLE, id="local-cjk-exactly-500"),
    pytest.param("full", local("字" * 501), "local", RouteCode.FITS_LOCAL, id="local-cjk-501"),
    pytest.param("full", local("Fix the typo in README.md"), "local", RouteCode.FITS_LOCAL, id="local-one-tool-edit"),
    pytest.param("full", local("What does https://example.com say?"), "local", RouteCode.FITS_LOCAL, id="local-url"),
    pytest.param(
        "full",
        local("Run the tests for the authentication module"),
        "local",
        RouteCode.FITS_LOCAL,
        id="local-then-inside-authentication",
    ),
    pytest.param("full", local("Say hello, then say goodbye"), "local", RouteCode.SIMPLE, id="local-then-no-tools"),
    pytest.param(
        "full",
        local("Explain step by step how a bill becomes law"),
        "local",
        RouteCode.SIMPLE,
        id="local-steps-no-tools",
    ),
    pytest.param("full", local("Improve the wording of this line"), "local", RouteCode.SIMPLE, id="local-improve"),
    # 3a. prefers local but there is no local model to use
    pytest.param(
        "full", local("hi", local_available=False, local_note=NOTE), "free", RouteCode.LOCAL_UNAVAILABLE, id="local-off"
    ),
    pytest.param("only_cloud", local("hi"), "free", RouteCode.LOCAL_UNAVAILABLE, id="local-only-cloud-tiers"),
    pytest.param(
        "full",
        local("", attachments=1, local_available=False),
        "free",
        RouteCode.LOCAL_UNAVAILABLE,
        id="local-off-first",
    ),
    # 3b. attachments
    pytest.param(
        "full", local("What's in this picture?", attachments=1), "free", RouteCode.ATTACHMENTS, id="attach-short"
    ),
    pytest.param("full", local("", attachments=2), "free", RouteCode.ATTACHMENTS, id="attach-empty-text"),
    pytest.param(
        "full",
        local("hi", attachments=1, history_tokens=9000),
        "free",
        RouteCode.ATTACHMENTS,
        id="attach-before-length",
    ),
    # 3c. too long for the local budget
    pytest.param("full", local("hi", history_tokens=8000), "free", RouteCode.TOO_LONG, id="too-long-8001"),
    pytest.param("full", local("abcd" * 8001), "free", RouteCode.TOO_LONG, id="too-long-text"),
    pytest.param("full", local("字" * 8001), "free", RouteCode.TOO_LONG, id="too-long-cjk"),
    pytest.param(
        "full", local("Prove it", history_tokens=8500), "free", RouteCode.TOO_LONG, id="too-long-before-complex"
    ),
    # 3d. several kinds of tool work, or steps that act
    pytest.param("full", local("Read config.py and fix the bug"), "free", RouteCode.MULTI_TOOL, id="multi-files-edit"),
    pytest.param(
        "full", local("Run the tests and update the failing test"), "free", RouteCode.MULTI_TOOL, id="multi-shell-edit"
    ),
    pytest.param(
        "full",
        local("Download the report and open the spreadsheet"),
        "free",
        RouteCode.MULTI_TOOL,
        id="multi-web-files",
    ),
    pytest.param("full", local("Run the tests, then deploy"), "free", RouteCode.MULTI_TOOL, id="multi-then"),
    pytest.param(
        "full", local("1. run the tests\n2. run the linter"), "free", RouteCode.MULTI_TOOL, id="multi-numbered-steps"
    ),
    pytest.param(
        "full", local("Install the package step by step"), "free", RouteCode.MULTI_TOOL, id="multi-step-by-step"
    ),
    pytest.param(
        "full", local("Refactor the parser and prove it terminates"), "free", RouteCode.COMPLEX, id="one-tool-complex"
    ),
    # the heuristics read a long message's edges, where its instruction is, not the pasted middle
    pytest.param(
        "full", local("Read app.py and fix the bug.\n" + FILLER), "free", RouteCode.MULTI_TOOL, id="edge-head"
    ),
    pytest.param(
        "full", local(FILLER + "\nRead app.py and fix the bug."), "free", RouteCode.MULTI_TOOL, id="edge-tail"
    ),
    pytest.param(
        "full",
        local("Summarize this log.\n" + FILLER + "DEBUG race condition, then deadlock\n" + FILLER),
        "local",
        RouteCode.FITS_LOCAL,
        id="edge-middle-is-material",
    ),
    # 3e. reasoning-heavy
    pytest.param(
        "full", local("Propose an architecture for billing"), "free", RouteCode.COMPLEX, id="complex-architecture"
    ),
    pytest.param("full", local("Prove that sqrt(2) is irrational"), "free", RouteCode.COMPLEX, id="complex-prove"),
    pytest.param("full", local("Help me debug this race condition"), "free", RouteCode.COMPLEX, id="complex-debug"),
    pytest.param(
        "full", local("What are the TRADE-OFFS here?"), "free", RouteCode.COMPLEX, id="complex-case-insensitive"
    ),
    # 4. cloud needed, none configured
    pytest.param("only_local", local("hi"), "local", RouteCode.SIMPLE, id="only-local-simple"),
    pytest.param("only_local", local("", attachments=1), "local", RouteCode.NO_CLOUD, id="only-local-attachments"),
    pytest.param("only_local", local("hi", history_tokens=9000), "local", RouteCode.NO_CLOUD, id="only-local-too-long"),
    pytest.param("only_local", local("hi", local_available=False), "local", RouteCode.NO_CLOUD, id="only-local-off"),
    pytest.param("only_local", local("Design a database schema"), "local", RouteCode.NO_CLOUD, id="only-local-complex"),
    # 1. try harder: the next tier up from the previous turn's tier
    pytest.param("full", harder("local"), "free", RouteCode.TRY_HARDER, id="harder-from-local"),
    pytest.param("full", harder("free"), "boost", RouteCode.TRY_HARDER, id="harder-from-free"),
    pytest.param("full", harder("boost"), "pro", RouteCode.TRY_HARDER, id="harder-from-boost"),
    pytest.param("full", harder("pro"), "max", RouteCode.TRY_HARDER, id="harder-from-pro"),
    pytest.param("full", harder("max"), "max", RouteCode.TOP_TIER, id="harder-at-top"),
    pytest.param("full", harder("local", local_available=False), "free", RouteCode.TRY_HARDER, id="harder-local-off"),
    pytest.param("full", harder(None), "boost", RouteCode.TRY_HARDER, id="harder-no-previous-cloud"),
    pytest.param("full", harder(None, preference="local"), "free", RouteCode.TRY_HARDER, id="harder-no-previous-local"),
    pytest.param(
        "full",
        harder(None, preference="local", history_tokens=9000),
        "boost",
        RouteCode.TRY_HARDER,
        id="harder-no-previous-local-too-long",
    ),
    pytest.param("full", harder("gone"), "boost", RouteCode.TRY_HARDER, id="harder-unknown-previous"),
    pytest.param("only_cloud", harder("free"), "boost", RouteCode.TRY_HARDER, id="harder-only-cloud"),
    pytest.param("only_cloud", harder("max"), "max", RouteCode.TOP_TIER, id="harder-only-cloud-top"),
    pytest.param("only_local", harder("local"), "local", RouteCode.TOP_TIER, id="harder-only-local"),
    pytest.param("only_local", harder(None), "local", RouteCode.TOP_TIER, id="harder-only-local-no-previous"),
]


@pytest.mark.parametrize(("router", "request_", "tier", "code"), CASES)
def test_route(router: str, request_: RouteRequest, tier: str, code: RouteCode) -> None:
    decision = ROUTERS[router].route(request_)
    assert (decision.tier.name, decision.code) == (tier, code)
    assert decision.notify is NOTIFY[code]
    assert decision.estimated_tokens == estimate_tokens(request_.text) + request_.history_tokens
    # One human sentence.
    assert decision.reason[:1].isupper() and decision.reason.endswith(".") and "\n" not in decision.reason


def test_the_table_covers_every_code() -> None:
    assert {param.values[3] for param in CASES} == set(RouteCode)


def test_reasons_say_why() -> None:
    router = ROUTERS["full"]
    off = router.route(local("hi", local_available=False, local_note=NOTE + "."))
    assert off.reason == f"This one needed cloud: the local model is unavailable ({NOTE})."
    too_long = router.route(local("hi", history_tokens=8000))
    assert too_long.reason == (
        "This one needed cloud: at about 8,001 tokens it is longer than the local model's 8,000-token budget."
    )
    assert "then" in router.route(local("Run the tests, then deploy")).reason
    assert "edit, files" in router.route(local("Read config.py and fix the bug")).reason
    assert '"race condition"' in router.route(local("Look at this race condition")).reason
    assert "no local model is configured" in ROUTERS["only_cloud"].route(local("hi")).reason
    no_cloud = ROUTERS["only_local"].route(local("", attachments=1))
    assert no_cloud.reason.startswith("No cloud tier is configured, so this stays on qwen3:8b")
    assert "1 attachment," in no_cloud.reason
    assert ROUTERS["full"].route(harder("pro")).reason.startswith("Trying harder on max (anthropic/claude-opus-4.6)")


def test_custom_limits() -> None:
    router = Router([LOCAL, FREE], local_max_tokens=100, simple_max_tokens=10)
    assert router.route(local("abcd" * 10)).code is RouteCode.SIMPLE
    assert router.route(local("abcd" * 11)).code is RouteCode.FITS_LOCAL
    assert router.route(local("abcd" * 101)).code is RouteCode.TOO_LONG
    assert "100-token budget" in router.route(local("abcd" * 101)).reason


def test_decisions_are_deterministic() -> None:
    requests = [cast(RouteRequest, param.values[1]) for param in CASES]
    for name, router in ROUTERS.items():
        fresh = Router(router.tiers)
        first = [router.route(r) for r in requests]
        assert first == [router.route(r) for r in requests] == [fresh.route(r) for r in requests], name


def test_ten_thousand_decisions_route_and_print_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # Speed is not asserted here: the heuristics are precompiled, linear regexes, and the suite's timeout guards
    # against anything pathological. This only makes sure a realistic volume runs cleanly.
    requests = [cast(RouteRequest, param.values[1]) for param in CASES if param.values[0] == "full"]
    router = ROUTERS["full"]
    codes = [router.route(requests[i % len(requests)]).code for i in range(10_000)]
    assert set(codes) <= set(RouteCode) and len(codes) == 10_000
    # Long, adversarial text (many near-misses for the gapped patterns) is still one pass.
    for text in ["fix " * 7_000, "fix the the " * 2_500 + "file", "1." * 15_000, "where is " * 3_000, "字" * 7_000]:
        assert isinstance(router.route(local(text)), RouteDecision)
    assert tool_signals("fix the the " * 20_000 + "file") == {"edit"}
    assert capsys.readouterr() == ("", "")


# Router construction and tiers


@pytest.mark.parametrize(
    ("tiers", "message"),
    [
        pytest.param([], "at least one tier", id="empty"),
        pytest.param([FREE, FREE], "repeated: free", id="duplicate"),
        pytest.param([FREE, LOCAL], "out of place: local", id="local-not-first"),
        pytest.param([LOCAL, dataclasses.replace(LOCAL, name="local2")], "out of place: local2", id="two-locals"),
        pytest.param([Tier("", "google", "gemini")], "non-empty name", id="empty-name"),
    ],
)
def test_router_rejects_bad_tiers(tiers: list[Tier], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Router(tiers)


@pytest.mark.parametrize(("local_max", "simple_max"), [(0, 0), (100, 101), (100, -1)])
def test_router_rejects_bad_limits(local_max: int, simple_max: int) -> None:
    with pytest.raises(ValueError, match="simple_max_tokens"):
        Router([LOCAL, FREE], local_max_tokens=local_max, simple_max_tokens=simple_max)


def test_tiers_and_next_tier() -> None:
    router = Router([LOCAL, FREE, BOOST, PRO, MAX])
    assert router.tiers == (LOCAL, FREE, BOOST, PRO, MAX)
    assert [router.next_tier(t.name) for t in router.tiers] == [FREE, BOOST, PRO, MAX, None]
    assert ROUTERS["only_local"].next_tier("local") is None
    with pytest.raises(ValueError, match="Unknown tier 'ultra'; the tiers are local, free, boost, pro, max"):
        router.next_tier("ultra")


@pytest.mark.parametrize("extra", [{"history_tokens": -1}, {"attachments": -2}, {"preference": "remote"}])
def test_request_rejects_bad_values(extra: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RouteRequest("hi", **extra)  # type: ignore[arg-type]


# Text heuristics


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("hello world", 3),
        ("你好", 2),
        ("你好世界abcd", 5),
        ("한국어", 3),
        ("カタカナ", 4),
        ("café", 1),
    ],
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("", set()),
        ("What is the capital of France?", set()),
        ("Check the authentication logic", set()),
        ("I installed it yesterday and it executed fine", set()),
        ("Draft a polite reply about the delay", set()),
        ("Run the tests", {"shell"}),
        ("git push the branch", {"shell"}),
        ("Rename parse() to load()", {"edit"}),
        ("Fix the flaky test in test_app.py", {"edit"}),
        ("Read the README and list the files in src", {"files"}),
        ("Summarize notes.md", {"files"}),
        ("grep for TODO", {"search"}),
        ("Where is the config loader defined?", {"search"}),
        ("Search the web for uv docs", {"web"}),
        ("Summarize https://example.com/post", {"web"}),
        ("Send an email to the team and schedule a meeting", {"email", "calendar"}),
        ("Refactor the module and run the test suite", {"edit", "shell"}),
        ("Update and run the tests", {"edit", "shell"}),
        ("Visit www.example.org", {"web"}),
        ("WHERE IS the Config Loader DEFINED?", {"search"}),
    ],
)
def test_tool_signals(text: str, kinds: set[str]) -> None:
    assert tool_signals(text) == kinds


# The package's surface


def test_public_api() -> None:
    assert sorted(cowork.routing.__all__) == [
        "RouteCode",
        "RouteDecision",
        "RouteRequest",
        "Router",
        "Tier",
        "estimate_tokens",
        "tool_signals",
    ]


def test_routing_uses_only_the_standard_library() -> None:
    for path in Path(cowork.routing.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = {node.module.split(".")[0]}
            else:
                continue
            assert tops <= set(sys.stdlib_module_names), f"{path.name} imports {tops}"
