"""Text heuristics for the router: a token estimate, the kinds of tool work a message asks for, multi-step
markers and reasoning-heavy keywords.

Every heuristic is a regex compiled once at import, with word boundaries, matched against the lower-cased text,
so one message costs a few linear scans. The word lists are data: short, English, chosen for a coding and office
coworker. A false positive only moves a turn to a stronger model; it never refuses anything.
"""

from __future__ import annotations

import re

__all__ = [
    "COMPLEX_PATTERNS",
    "EDGE_CHARS",
    "MULTI_STEP_PATTERNS",
    "TOOL_PATTERNS",
    "complexity_marker",
    "estimate_tokens",
    "instruction_excerpt",
    "multi_step_marker",
    "tool_signals",
]

_GAP = r"(?:\W+\w+){0,3}?\W+"
"""Up to three words between a verb and its object ("fix *the flaky* test"): bounded, so matching stays linear."""

_FILE_NAME = (
    r"[\w./-]+\.(?:py|js|ts|tsx|jsx|md|rst|txt|json|toml|ya?ml|ini|cfg|csv|tsv|html|css|sh|rs|go|java|c|h|cpp"
    r"|ipynb|docx?|xlsx?|pptx?|pdf)"
)
"""A file name with a common extension ("notes.md", "src/app.py")."""


def _acting_on(verbs: str, objects: str) -> str:
    """`verbs` when one of `objects` follows within a few words; only the verb is consumed, so a tool word in the
    gap ("update and *run* the tests") is still found by its own pattern."""
    return rf"(?:{verbs})(?={_GAP}(?:{objects})\b)"


# Every pattern is lower case: the text is lower-cased once instead of using re.IGNORECASE, which makes each
# scan about five times slower.
TOOL_PATTERNS: dict[str, tuple[str, ...]] = {
    "shell": (
        _acting_on("run", r"tests?|test suite|commands?|scripts?|build|linter|benchmarks?|migrations?|server"),
        r"execute|terminal|shell command|command line|bash|zsh",
        r"install|uninstall|pip|npm|yarn|pnpm|cargo|docker|kubectl|makefile|pytest|tox|nox",
        r"git (?:add|commit|push|pull|clone|status|log|diff|checkout|switch|rebase|merge|stash|bisect)",
        r"compile|deploy",
    ),
    "edit": (
        r"edit|modify|refactor|rename|patch",
        _acting_on(
            r"change|update|fix|rewrite|replace|delete|remove|add|insert|create|write",
            r"files?|functions?|methods?|class(?:es)?|code|lines?|tests?|modules?|imports?|config|bug|typo"
            r"|docstrings?|comments?|readme|changelog|" + _FILE_NAME,
        ),
    ),
    "files": (
        _acting_on(
            r"read|open|list|load|scan|inspect|summari[sz]e|go through|look at|look through",
            r"files?|folders?|director(?:y|ies)|documents?|docs|pdfs?|spreadsheets?|attachments?|repo(?:sitory)?"
            r"|codebase|project|logs?|" + _FILE_NAME,
        ),
    ),
    "search": (
        r"grep|ripgrep|rg",
        r"find (?:all|every|where|usages?|occurrences|references|callers)",
        r"search (?:the |this |my |our )?(?:code|codebase|repo|repository|project|files|folder|notes|docs|logs)",
        _acting_on(r"where (?:is|are)", r"defined|used|called|declared|implemented|configured"),
        r"(?:usages?|occurrences|references|callers) of",
    ),
    "web": (
        r"search the (?:web|internet)|web search|google|browse|on the (?:web|internet)",
        r"look (?:it |this |that )?up online",
        r"website|web ?page|download|" + _acting_on("fetch", r"url|page|site"),
        r"latest (?:news|version|release)s?",
    ),
    "email": (
        _acting_on(r"send|forward|reply to|answer", r"e-?mails?|messages?"),
        r"inbox",
    ),
    "calendar": (
        _acting_on(r"schedule|book|reschedule|cancel|move", r"meetings?|calls?|events?|appointments?"),
        r"calendar",
    ),
}
"""The kinds of tool work, a few patterns each; a link (`https://`, `www.`) counts as web work too."""

MULTI_STEP_PATTERNS: tuple[str, ...] = (
    r"then",
    r"after that|afterwards|once (?:that|it) is done|when (?:that|it) is done|and finally",
    r"step by step|step-by-step",
)
"""Sequencing words. They make a request multi-step only together with a tool signal (steps that act)."""

COMPLEX_PATTERNS: tuple[str, ...] = (
    r"architect(?:ure|ural|ing)?|system design",
    r"design (?:an? |the )?(?:system|service|architecture|schema|database|api|protocol|data model)",
    r"prove|proof|theorem|lemma|formally verify",
    r"plan (?:out|the)|(?:implementation|migration|project|detailed|step-by-step) plan",
    r"strateg(?:y|ies|ic)|roadmap",
    r"trade-?offs?|pros and cons|compare and contrast",
    r"debug(?:ging)?|root cause|race conditions?|deadlocks?|memory leaks?|segfaults?",
    r"optimi[sz]e|time complexity|big-?o",
    r"concurrency|thread-?safe(?:ty)?|distributed systems?",
    r"security (?:audit|review)|threat model|vulnerabilit(?:y|ies)",
    r"in-? ?depth|thoroughly|rigorous(?:ly)?",
    r"think (?:hard|harder|carefully|deeply)|reason (?:through|about)",
)
"""Reasoning-heavy requests: the local model's weak spot ("complex multi-step planning" in the seed)."""


EDGE_CHARS = 2000
"""How much of a long message's start and end the router's heuristics read (about 500 tokens each)."""

# One scan finds every kind: a named group per kind. The leading word boundary is shared, so positions inside a
# word fail at once (three times faster than a boundary per kind); a link has no boundary after it.
_TOOLS = re.compile(
    r"\b(?:(?P<url>https?://(?=\S)|www\.(?=\w))|"
    + "|".join(rf"(?P<{kind}>(?:{'|'.join(patterns)})\b)" for kind, patterns in TOOL_PATTERNS.items())
    + ")"
)
_MULTI_STEP = re.compile(rf"\b(?:{'|'.join(MULTI_STEP_PATTERNS)})\b")
# Two or more numbered items ("1. run the tests 2. fix them", or one per line; "step 1", "step 2").
_NUMBERED = re.compile(r"(?:^|\s)\(?(?:\d{1,2}[.)]|step \d{1,2}:?)\s+[^\W\d]")
_COMPLEX = re.compile(rf"\b(?:{'|'.join(COMPLEX_PATTERNS)})\b")
# Runs of Han, kana and Hangul: roughly one token per character in common tokenizers.
_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]+")


def estimate_tokens(text: str) -> int:
    """Estimate how many tokens `text` costs: about four characters per token, one per CJK character.

    Args:
        text: any text.

    Returns:
        A non-negative estimate; 0 for the empty string.
    """
    cjk = 0 if text.isascii() else len(text) - len(_CJK.sub("", text))
    rest = len(text) - cjk
    return cjk + -(-rest // 4)


def instruction_excerpt(text: str) -> str:
    """Return the part of `text` the routing heuristics read: all of it, or the first and last `EDGE_CHARS`.

    A request's instruction sits at its start or end; the middle of a long message is pasted material (a log, a
    document) whose words say nothing about the task (a log full of DEBUG lines is not a debugging request).
    Reading only the edges also caps the heuristics' cost, so routing stays well under a millisecond.
    """
    if len(text) <= 2 * EDGE_CHARS:
        return text
    # The newline keeps a word cut at the start of the tail from joining the last word of the head.
    return f"{text[:EDGE_CHARS]}\n{text[-EDGE_CHARS:]}"


def tool_signals(text: str) -> frozenset[str]:
    """Say which kinds of tool work a message asks for.

    Args:
        text: the user's message.

    Returns:
        A subset of `shell`, `edit`, `files`, `search`, `web`, `email`, `calendar`.
    """
    kinds = {match.lastgroup for match in _TOOLS.finditer(text.lower())}
    return frozenset("web" if kind == "url" else kind for kind in kinds if kind)


def multi_step_marker(text: str) -> str | None:
    """Return the words that make `text` a sequence of steps ("then", "step by step", numbered items), if any."""
    lowered = text.lower()
    if match := _MULTI_STEP.search(lowered):
        return match.group(0)
    items = _NUMBERED.finditer(lowered)
    if next(items, None) and next(items, None):
        return "numbered steps"
    return None


def complexity_marker(text: str) -> str | None:
    """Return the first reasoning-heavy keyword in `text` ("architecture", "prove", "debug"...), if any."""
    match = _COMPLEX.search(text.lower())
    return match.group(0) if match else None
