"""The one brace expander, as the glob tools and the command classifier use it."""

from __future__ import annotations

import pytest

from cowork.policy import BraceError, classify, expand_braces
from cowork.tools._fsutil import GlobError
from cowork.tools._fsutil import expand_braces as glob_braces


def test_groups_nest_and_keep_their_order() -> None:
    assert expand_braces("src/{a,b{1,2}}.py") == ["src/a.py", "src/b1.py", "src/b2.py"]
    assert expand_braces("{x,y}-{1,2}") == ["x-1", "x-2", "y-1", "y-2"]
    assert expand_braces("plain.txt") == ["plain.txt"]


def test_escaped_braces_and_character_classes_are_left_alone() -> None:
    assert expand_braces(r"\{a,b}") == [r"\{a,b}"]
    assert expand_braces("[{,}]x") == ["[{,}]x"]


def test_unclosed_and_explosive_text_is_refused() -> None:
    with pytest.raises(BraceError, match="unclosed"):
        expand_braces("{a,b")
    with pytest.raises(BraceError, match="more than 8 alternatives"):
        expand_braces("{a,b}{c,d}{e,f}{g,h}", limit=8)


def test_the_glob_tools_see_glob_errors() -> None:
    assert glob_braces("*.{py,md}") == ["*.py", "*.md"]
    with pytest.raises(GlobError, match="unclosed"):
        glob_braces("*.{py")


def test_the_classifier_expands_braces_before_judging() -> None:
    assert classify("{rm,-rf,/}").verdict == "dangerous"
    assert classify("echo {a,b}").verdict == "safe"
