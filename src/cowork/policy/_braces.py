"""Brace expansion (`{a,b}`, nested): the one expander the command classifier and the glob and grep tools share.

It lives in `cowork.policy` because the classifier needs it and `cowork.tools` already depends on the policy.
"""

from __future__ import annotations

import itertools

__all__ = ["BraceError", "class_end", "expand_braces"]


class BraceError(ValueError):
    """Text whose braces or character classes do not close, or that expands to too many alternatives."""


def expand_braces(text: str, *, limit: int = 256) -> list[str]:
    """Expand every `{a,b}` group (nested allowed, `\\{` escaped, `[...]` classes left alone) into its alternatives,
    in order; text without a group comes back as the only alternative.

    Raises:
        BraceError: an unclosed `{` or `[`, or more than `limit` alternatives.
    """
    results: list[str] = []
    pending = [text]
    while pending:
        current = pending.pop()
        split = _first_group(current)
        if split is None:
            results.append(current)
        else:
            prefix, alternatives, suffix = split
            pending.extend(prefix + alt + suffix for alt in reversed(alternatives))
        if len(results) + len(pending) > limit:
            raise BraceError(f"{text!r} expands to more than {limit} alternatives")
    return results


def class_end(pattern: str, start: int) -> int:
    """Index just past the `]` closing the character class that opens at `start`.

    Raises:
        BraceError: the class does not close.
    """
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a leading `]` is a literal member
    end = pattern.find("]", j)
    if end < 0:
        raise BraceError(f"unclosed character class '[' at position {start} in {pattern!r}")
    return end + 1


def _first_group(pattern: str) -> tuple[str, list[str], str] | None:
    i = 0
    open_at = -1
    depth = 0
    commas: list[int] = []
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = class_end(pattern, i)
            continue
        if ch == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                bounds = [open_at, *commas, i]
                alternatives = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                return pattern[:open_at], alternatives, pattern[i + 1 :]
        elif ch == "," and depth == 1:
            commas.append(i)
        i += 1
    if depth > 0:
        raise BraceError(f"unclosed '{{' at position {open_at} in {pattern!r}")
    return None
