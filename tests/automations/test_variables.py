"""Every form of `${...}`: paths, types, text, unresolved, escapes, and values never expanded twice."""

from __future__ import annotations

from typing import Any

import pytest

from cowork.automations import MISSING, Reference, find_references, parse_reference, render, resolve, substitute
from cowork.automations._variables import references_in

VARS: dict[str, Any] = {
    "fetch": {
        "data": {"ticketId": 42, "tags": ["a", "b"], "content-type": "json", "odd key": 1, "none": None},
        "items": [{"title": "first"}, {"title": "second"}],
        "ok": True,
    },
    "input": {"name": "Ada", "n": 3.5},
    "trigger": {"path": "notes/today.md"},
    "text": "plain",
    "secret_holder": "${input.name} and ${secret}",
    "nothing": None,
}


@pytest.mark.parametrize(
    ("body", "root", "path"),
    [
        ("a", "a", ()),
        ("step1.data.ticketId", "step1", ("data", "ticketId")),
        ("items[0].title", "items", (0, "title")),
        ("users[2].address.city", "users", (2, "address", "city")),
        ("x[-1]", "x", (-1,)),
        ('h["content-type"]', "h", ("content-type",)),
        ("h['odd key']", "h", ("odd key",)),
        ("h.content-type", "h", ("content-type",)),
        ("m[0][1]", "m", (0, 1)),
        ("_private.x", "_private", ("x",)),
    ],
)
def test_references_parse(body: str, root: str, path: tuple[str | int, ...]) -> None:
    assert parse_reference(body) == Reference(root, path, "${" + body + "}")


@pytest.mark.parametrize("body", ["", " a", "a ", "a.", "a..b", "1a", "a[", "a[x]", "a[0", 'a["x]', "a.b c", "a()"])
def test_what_is_not_a_reference(body: str) -> None:
    assert parse_reference(body) is None
    assert render("${" + body + "}", VARS) == "${" + body + "}"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${fetch.data.ticketId}", 42),
        ("${fetch.data}", VARS["fetch"]["data"]),
        ("${fetch.items[1].title}", "second"),
        ("${fetch.items[-1].title}", "second"),
        ("${fetch.data.tags}", ["a", "b"]),
        ('${fetch.data["content-type"]}', "json"),
        ("${fetch.data['odd key']}", 1),
        ("${fetch.data.content-type}", "json"),
        ("${fetch.ok}", True),
        ("${input.n}", 3.5),
        ("${input}", {"name": "Ada", "n": 3.5}),
        ("${trigger.path}", "notes/today.md"),
        ("${fetch.data.none}", None),
        ("${nothing}", None),
    ],
)
def test_an_exact_reference_keeps_the_type(template: str, expected: Any) -> None:
    assert substitute(template, VARS) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("id=${fetch.data.ticketId}", "id=42"),
        ("${input.name} has ${input.n}", "Ada has 3.5"),
        ("tags: ${fetch.data.tags}", 'tags: ["a", "b"]'),
        ("ok=${fetch.ok}", "ok=true"),
        ("none=${nothing}", "none=null"),
        ("d=${fetch.items[0]}", 'd={"title": "first"}'),
        ("${input.name}${input.name}", "AdaAda"),
        ("${input.name} ", "Ada "),
        ("naïve ${text} ✓", "naïve plain ✓"),
    ],
)
def test_references_inside_text_become_text(template: str, expected: str) -> None:
    assert substitute(template, VARS) == expected
    assert render(template, VARS) == expected


def test_render_always_gives_text_even_for_an_exact_reference() -> None:
    assert render("${fetch.data.ticketId}", VARS) == "42"
    assert render("${fetch.items[0]}", VARS) == '{"title": "first"}'
    assert render("${nothing}", VARS) == "null"


@pytest.mark.parametrize(
    "template",
    [
        "${missing}",
        "${missing.x}",
        "${fetch.nope}",
        "${fetch.items[5].title}",
        "${fetch.items[-3]}",
        "${fetch.data.ticketId.deeper}",
        "${fetch.items.title}",
        "${fetch.items.0}",  # dots are keys; indices use brackets
        "${fetch.data[0]}",
        "${text[0]}",  # strings are not indexed
        "${HOME}",
    ],
)
def test_unresolved_references_stay_as_written(template: str) -> None:
    assert resolve(parse_reference(template[2:-1]) or Reference("", (), ""), VARS) is MISSING
    assert substitute(template, VARS) == template
    assert substitute(f"before {template} after", VARS) == f"before {template} after"
    assert "None" not in render(f"x {template}", VARS)


def test_partial_resolution() -> None:
    assert substitute("${input.name} at ${HOME}/x", VARS) == "Ada at ${HOME}/x"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("$${input.name}", "${input.name}"),
        ("cost: $${x} and ${input.name}", "cost: ${x} and Ada"),
        ("$${", "${"),
        ("$$ stays", "$$ stays"),
        ("$HOME and $ alone", "$HOME and $ alone"),
        ("$$${input.name}", "$${input.name}"),
    ],
)
def test_escapes(template: str, expected: str) -> None:
    assert substitute(template, VARS) == expected
    assert render(template, VARS) == expected


def test_an_escaped_reference_is_not_found() -> None:
    assert find_references("$${a} ${b} ${c.d[0]}") == [
        Reference("b", (), "${b}"),
        Reference("c", ("d", 0), "${c.d[0]}"),
    ]


def test_values_are_never_expanded_again() -> None:
    # The step output holds reference-like text: it is data, inserted as is, in either form.
    assert substitute("${secret_holder}", VARS) == "${input.name} and ${secret}"
    assert substitute("got: ${secret_holder}", VARS) == "got: ${input.name} and ${secret}"
    nested = {"out": {"x": "${input.name}"}}
    assert substitute("${out}", nested) == {"x": "${input.name}"}
    assert substitute(["${out}"], nested) == [{"x": "${input.name}"}]
    assert substitute("${out}", {**nested, "input": {"name": "Ada"}}) == {"x": "${input.name}"}


def test_deep_substitution_walks_values_not_keys() -> None:
    config = {
        "query": "${input.name}",
        "nested": {"list": ["${fetch.data.ticketId}", "n=${input.n}", 7, None, True], "${input.name}": "key kept"},
        "tuple": ("${text}",),
        "number": 1.5,
    }
    assert substitute(config, VARS) == {
        "query": "Ada",
        "nested": {"list": [42, "n=3.5", 7, None, True], "${input.name}": "key kept"},
        "tuple": ["plain"],
        "number": 1.5,
    }
    assert config["query"] == "${input.name}"  # the template is not changed


def test_unencodable_values_still_render() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing"

    assert render("a ${x}", {"x": {"t": Thing()}}) == 'a {"t": "thing"}'


def test_references_in_reports_where() -> None:
    found = list(references_in({"a": ["x ${b.c}", {"d": "${e} ${f[0]}"}], "g": "$${h}"}))
    assert found == [
        (("a", 0), Reference("b", ("c",), "${b.c}")),
        (("a", 1, "d"), Reference("e", (), "${e}")),
        (("a", 1, "d"), Reference("f", (0,), "${f[0]}")),
    ]
