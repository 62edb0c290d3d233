"""The tracker turns samples into spans and focus runs; an hour of switching runs in microseconds on a fake clock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from cowork.capture import Exclusions, Tracker, Window

T0 = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)
EDITOR = Window("Code", "main.py — cowork", 100, "code")
BROWSER = Window("Firefox", "Pull request #12 — Mozilla Firefox", 200, "firefox")
KEEPASS = Window("KeePassXC", "Passwords.kdbx — KeePassXC", 300, "keepassxc")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def tracker(**overrides: object) -> Tracker:
    settings: dict[str, object] = {
        "idle_seconds": 180.0,
        "focus_seconds": 600.0,
        "min_span_seconds": 1.0,
        "exclusions": Exclusions.of([], []),
    }
    settings.update(overrides)
    return Tracker(**settings)  # type: ignore[arg-type]


def feed(t: Tracker, samples: Sequence[tuple[float, Window | None, float]]) -> list:
    """Samples (seconds, window, idle); the final form of every span written, by id, in order of first writing."""
    spans: dict[str, object] = {}
    for seconds, window, idle in samples:
        for span in t.observe(at(seconds), window, idle).spans:
            spans[span.id] = span
    return list(spans.values())


def test_switching_windows_makes_one_span_per_window_with_its_times() -> None:
    t = tracker()
    spans = feed(t, [(0, EDITOR, 0), (30, EDITOR, 0), (60, BROWSER, 0), (90, BROWSER, 0), (120, EDITOR, 0)])
    spans += t.close(at(150)).spans
    assert [(s.app, s.title, s.started_at, s.ended_at) for s in spans] == [
        ("Code", "main.py — cowork", at(0), at(60)),
        ("Firefox", "Pull request #12 — Mozilla Firefox", at(60), at(120)),
        ("Code", "main.py — cowork", at(120), at(150)),
    ]
    assert spans[0].process == "code" and len({s.id for s in spans}) == 3


def test_a_title_change_starts_a_new_span_but_keeps_the_focus_run() -> None:
    t = tracker()
    feed(t, [(0, EDITOR, 0), (300, Window("Code", "app.py — cowork", 100, "code"), 0)])
    assert t.current is not None and t.current.title == "app.py — cowork"
    assert t.focus_app == "Code" and t.focus_since == at(0)
    assert not t.deep_work(at(599)) and t.deep_work(at(600))
    changed = t.observe(at(601), Window("Code", "app.py — cowork", 100, "code"), 0)
    assert changed.changed  # deep work began: clients are told
    t.observe(at(700), BROWSER, 0)
    assert t.focus_app == "Firefox" and not t.deep_work(at(700))


def test_going_idle_closes_the_span_at_the_last_input_and_ends_focus() -> None:
    t = tracker()
    spans = feed(t, [(0, EDITOR, 0), (100, EDITOR, 40), (400, EDITOR, 340)])
    assert [(s.started_at, s.ended_at) for s in spans] == [(at(0), at(60))]  # last input at 400 - 340 = 60 s
    assert t.current is None and t.focus_app is None
    back = t.observe(at(500), EDITOR, 0)
    assert back.changed and t.current is not None and t.current.started_at == at(500)


def test_an_excluded_window_leaves_no_trace_and_closes_what_was_open() -> None:
    private = Window("Firefox", "Bank — Mozilla Firefox Private Browsing", 200, "firefox")
    incognito = Window("Google-chrome", "Mail - Google Chrome (Incognito)", 201, "chrome")
    mine = Window("Slack", "#payroll | Acme", 202, "slack")
    t = tracker(exclusions=Exclusions.of(["slack"], []))
    samples = [(0.0, EDITOR, 0.0)]
    samples += [(10.0 + i, w, 0.0) for i, w in enumerate([KEEPASS, KEEPASS, private, incognito, mine, mine])]
    samples += [(30.0, EDITOR, 0.0), (40.0, EDITOR, 0.0)]
    spans = feed(t, samples)
    assert [(s.app, s.started_at, s.ended_at) for s in spans] == [("Code", at(0), at(10)), ("Code", at(30), at(40))]
    text = repr(spans)
    for secret in ("KeePass", "Passwords", "Bank", "Incognito", "Mail", "Slack", "payroll"):
        assert secret not in text
    assert t.excluded == 6


def test_a_user_title_pattern_excludes_and_patterns_ignore_case() -> None:
    t = tracker(exclusions=Exclusions.of([], ["*salary*"]))
    assert feed(t, [(0, Window("LibreOffice", "SALARY review.ods", None, None), 0), (5, EDITOR, 0)]) == []
    assert t.current is not None and t.current.app == "Code"


def test_windows_passed_through_faster_than_the_minimum_are_not_recorded() -> None:
    t = tracker()
    files = Window("Nautilus", "Home", None, None)
    spans = feed(t, [(0, EDITOR, 0), (10, BROWSER, 0), (20, files, 0), (20.4, EDITOR, 0), (30, EDITOR, 0)])
    assert [s.app for s in spans] == ["Code", "Firefox", "Code"]  # Nautilus, 0.4 s, is gone
    assert spans[1].ended_at == at(20) and spans[2].started_at == at(20.4)


def test_nothing_in_front_closes_the_span() -> None:
    t = tracker()
    spans = feed(t, [(0, EDITOR, 0), (20, None, 0)])
    assert [(s.started_at, s.ended_at) for s in spans] == [(at(0), at(20))] and t.current is None


def test_without_focus_consent_there_is_no_focus_run() -> None:
    t = tracker(focus=False)
    feed(t, [(0, EDITOR, 0), (900, EDITOR, 0)])
    assert t.focus_app is None and not t.deep_work(at(900))


def test_restart_forgets_the_open_spans_past() -> None:
    t = tracker()
    feed(t, [(0, EDITOR, 0), (50, EDITOR, 0)])
    old = t.current.id if t.current else None
    t.restart(at(60))
    assert t.current is not None and t.current.id != old and t.current.started_at == at(60)
