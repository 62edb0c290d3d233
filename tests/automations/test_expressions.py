"""The condition language: what it means, and that nothing outside its grammar gets through."""

from __future__ import annotations

from typing import Any

import pytest

from cowork.automations import ExpressionError, Reference, parse_expression
from cowork.automations._expressions import MAX_DEPTH

VARS: dict[str, Any] = {
    "fetch": {"count": 3, "status": "open", "tags": ["bug", "ui"], "data": {"id": 7}, "empty": [], "ok": True},
    "input": {"limit": 2.5, "name": "Ada"},
    "flag": False,
    "nothing": None,
    "lists": {"bools": [True], "ints": [1], "floats": [1.0], "obj_a": {"k": [True]}, "obj_b": {"k": [1]}},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${fetch.count} > 0", True),
        ("${fetch.count} >= 3", True),
        ("${fetch.count} < 3", False),
        ("${fetch.count} <= 3.0", True),
        ("${fetch.count} > ${input.limit}", True),
        ("${fetch.count} == 3", True),
        ("${fetch.count} == 3.0", True),
        ("${fetch.count} == '3'", False),
        ("${fetch.count} != '3'", True),
        ("${fetch.status} == 'open'", True),
        ('${fetch.status} == "open"', True),
        ("${fetch.status} != 'open'", False),
        ("'abc' < 'abd'", True),
        ("${fetch.ok} == true", True),
        ("${fetch.ok} == 1", False),  # booleans are not numbers
        ("${flag} == 0", False),
        ("${nothing} == null", True),
        ("${never.ran} == null", True),  # unresolved is null here
        ("${never.ran} != null", False),
        ("${fetch.data} == ${fetch.data}", True),
        ("${lists.bools} == ${lists.ints}", False),  # deep: [true] is not [1]
        ("${lists.ints} == ${lists.floats}", True),
        ("${lists.obj_a} == ${lists.obj_b}", False),
        ("${lists.obj_a} == ${lists.obj_a}", True),
        ("${lists.ints} contains 1.0", True),
        ("${lists.bools} contains 1", False),
        ("${fetch.tags} contains 'ui'", True),
        ("${fetch.tags} contains 'x'", False),
        ("${fetch.status} contains 'pe'", True),
        ("${fetch.data} contains 'id'", True),
        ("${fetch.data} contains 'nope'", False),
        ("not ${flag}", True),
        ("not not ${flag}", False),
        ("${fetch.count} > 0 and ${fetch.status} == 'open'", True),
        ("${fetch.count} > 5 or ${fetch.status} == 'open'", True),
        ("${fetch.count} > 5 or ${flag}", False),
        ("not (${fetch.count} > 5 or ${flag})", True),
        ("true and false or true", True),  # `and` binds tighter than `or`
        ("true and (false or false)", False),
        ("${fetch.empty}", False),
        ("${fetch.tags}", True),
        ("${fetch.ok}", True),
        ("${nothing}", False),
        ("${never}", False),
        ("''", False),
        ("0", False),
        ("-1.5 < 0", True),
        ("1e3 == 1000", True),
        ("'it\\'s' == \"it's\"", True),
        ("'a\\nb' contains '\\n'", True),
    ],
)
def test_meaning(text: str, expected: bool) -> None:
    assert parse_expression(text).holds(VARS) is expected


def test_the_value_of_a_lone_operand() -> None:
    assert parse_expression("${fetch.data}").evaluate(VARS) == {"id": 7}
    assert parse_expression("${fetch.count} > 1").evaluate(VARS) is True


def test_references_are_values_never_expression_text() -> None:
    # A hostile output cannot turn into operators: it is compared as a string.
    hostile = {"out": "x' or 'a' == 'a"}
    assert parse_expression("${out} == 'y'").holds(hostile) is False


def test_references_listed() -> None:
    expression = parse_expression("${a.b} > 1 and (not ${c[0]} or ${a.b} contains 'x')")
    assert [reference.text for reference in expression.references()] == ["${a.b}", "${c[0]}", "${a.b}"]
    assert expression.references()[1] == Reference("c", (0,), "${c[0]}")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${fetch.status} > 1", "cannot order string and number with >"),
        ("${never} < 1", "cannot order null and number with <"),
        ("${fetch.ok} > 0", "cannot order boolean and number"),
        ("${fetch.count} contains 1", "number cannot contain number"),
        ("${fetch.data} contains 1", "object cannot contain number"),
    ],
)
def test_evaluation_errors(text: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        parse_expression(text).evaluate(VARS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os')", "unknown name '__import__' at column 1"),
        ("__import__('os').system('rm -rf ~')", "unknown name '__import__'"),
        ("${a}.__class__", r"unexpected '\.' at column 5"),
        ("${a.__class__.__mro__}", None),  # a valid reference: keys of data, never attributes (resolves to nothing)
        ("open('/etc/passwd')", "unknown name 'open'"),
        ("${a}('x')", r"unexpected '\(' at column 5"),
        ("lambda: 1", "unknown name 'lambda'"),
        ("(lambda x: x)(1)", "unknown name 'lambda'"),
        ("[x for x in ()]", r"unexpected '\['"),
        ("${a}[0]", r"unexpected '\['"),
        ("{'a': 1}", "unexpected '{'"),
        ("eval('1')", "unknown name 'eval'"),
        ("a == 1", "unknown name 'a'"),
        ("True", "unknown name 'True'"),
        ("1 + 1", r"unexpected '\+'"),
        ("`id`", "unexpected '`'"),
        ("${a} is None", "unknown name 'is'"),
        ("${a} in ${b}", "unknown name 'in'"),
        ("${a} ; import os", "unexpected ';'"),
        ("f'{x}'", "unknown name 'f'"),
        ("${a b}", "is not a valid reference"),
        ("${}", "is not a valid reference"),
        ("1 < 2 < 3", "comparisons do not chain"),
        ("(1 == 1", "expected \\) at column 8"),
        ("1 ==", "expected a value at column 5, found the end of the expression"),
        ("and", "expected a value"),
        ("1 2", "unexpected 2 at column 3"),
        ("", "empty expression"),
        ("   ", "empty expression"),
        ("'unterminated", 'unexpected "\'"'),
        ("'bad \\q escape'", r"unknown escape \\q"),
        ("x" * 3000, "longer than"),
        ("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), "nested deeper than"),
        ("not " * (MAX_DEPTH + 1) + "1", "nested deeper than"),
    ],
)
def test_hostile_and_malformed_expressions_are_refused(text: str, message: str | None) -> None:
    if message is None:
        assert parse_expression(text).holds({"a": object()}) is False
        return
    with pytest.raises(ExpressionError, match=message):
        parse_expression(text)


def test_deep_nesting_within_the_limit_parses() -> None:
    text = "(" * MAX_DEPTH + "true" + ")" * MAX_DEPTH
    assert parse_expression(text).holds({}) is True
