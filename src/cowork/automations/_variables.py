"""Variable references in a flow's step configs: `${root.key[0]["odd key"]}`, resolved against earlier outputs.

The rules (docs in `cowork.automations`' docstring) are the whole contract, so every function here is pure:

- A reference is `${` root, then any number of `.key`, `[index]` or `["key"]`/`['key']` accessors, then `}`; no
  spaces. Anything else that looks similar (`${ a }`, `${a.}`, `$HOME`) is plain text.
- A string that is exactly one reference becomes the referenced value with its type (a dict stays a dict); inside a
  longer string the value is stringified (strings as they are, everything else as JSON: `null`, `true`, `{"a": 1}`).
- A reference that does not resolve stays in the text as written: partial resolution, and `${HOME}` in a shell
  command reaches the shell. It is never an error and never the text "None".
- `$${` is a literal `${`: `$${a}` renders as `${a}`.
- Substitution is one pass over the template: an inserted value is never scanned again, so an output that contains
  `${secret}` stays that text. Mapping keys are never substituted: they are the names the author chose (a tool's
  argument names), and data must not be able to choose which argument it fills.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MISSING",
    "Reference",
    "find_references",
    "parse_reference",
    "references_in",
    "render",
    "resolve",
    "substitute",
]

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOT_KEY = r"[A-Za-z0-9_-]+"
_ACCESSOR = rf"(?:\.{_DOT_KEY}|\[-?[0-9]+\]|\[\"[^\"\\\]]*\"\]|\['[^'\\\]]*'\])"
_BODY = rf"{_IDENT}{_ACCESSOR}*"
# Alternation order matters: an escape `$${` is consumed before it can start a reference.
_TOKEN = re.compile(rf"\$\$\{{|\$\{{({_BODY})\}}")
_EXACT = re.compile(rf"\$\{{({_BODY})\}}")
_BODY_ONLY = re.compile(_BODY)
_ACCESSORS = re.compile(rf"\.({_DOT_KEY})|\[(-?[0-9]+)\]|\[\"([^\"\\\]]*)\"\]|\['([^'\\\]]*)'\]")


class _Missing:
    """The value of a reference that does not resolve (distinct from a resolved `None`, which is JSON null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Reference:
    """One parsed reference: its root variable and the accessors after it (str: a mapping key, int: a list index)."""

    root: str
    path: tuple[str | int, ...]
    text: str  # as written, with `${` and `}`


def parse_reference(body: str) -> Reference | None:
    """Parse the inside of `${...}`; None when it is not a valid reference."""
    if not _BODY_ONLY.fullmatch(body):
        return None
    root = re.match(_IDENT, body)
    assert root is not None  # the full match above starts with an identifier
    path: list[str | int] = []
    for match in _ACCESSORS.finditer(body, root.end()):
        dot, index, double, single = match.groups()
        if index is not None:
            path.append(int(index))
        else:
            path.append(next(part for part in (dot, double, single) if part is not None))
    return Reference(root.group(), tuple(path), "${" + body + "}")


def find_references(template: str) -> list[Reference]:
    """Every reference in a string, in order, escaped ones (`$${...}`) left out."""
    found = []
    for match in _TOKEN.finditer(template):
        if match.group(1) is not None:
            reference = parse_reference(match.group(1))
            assert reference is not None  # the token pattern only matches valid bodies
            found.append(reference)
    return found


def resolve(reference: Reference, variables: Mapping[str, Any]) -> Any:
    """The value a reference points at, or `MISSING`.

    Keys look into mappings only and indices into lists and tuples only (negative ones count from the end): a
    string is not indexed, and a dict with a key "0" is not reached by `[0]`.
    """
    if reference.root not in variables:
        return MISSING
    value = variables[reference.root]
    for step in reference.path:
        if isinstance(step, int):
            if not isinstance(value, list | tuple) or not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        else:
            if not isinstance(value, Mapping) or step not in value:
                return MISSING
            value = value[step]
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # default=str: a runner may return something JSON cannot encode; it still renders, never raises.
    return json.dumps(value, ensure_ascii=False, default=str)


def render(template: str, variables: Mapping[str, Any]) -> str:
    """The template with every resolvable reference replaced by its value as text; always a string."""

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return "${"
        reference = parse_reference(match.group(1))
        assert reference is not None
        value = resolve(reference, variables)
        return match.group(0) if value is MISSING else _as_text(value)

    return _TOKEN.sub(replace, template)


def substitute(value: Any, variables: Mapping[str, Any]) -> Any:
    """Deep substitution in every string value of a config (mapping values, list items), keys left as written.

    A string that is exactly one resolvable reference becomes the value itself, with its type; any other string is
    rendered as text. What comes out is a new structure: the input is not changed, and inserted values are not
    walked (they are data, never templates).
    """
    if isinstance(value, str):
        exact = _EXACT.fullmatch(value)
        if exact is not None:
            reference = parse_reference(exact.group(1))
            assert reference is not None
            resolved = resolve(reference, variables)
            return value if resolved is MISSING else resolved
        return render(value, variables)
    if isinstance(value, Mapping):
        return {key: substitute(item, variables) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [substitute(item, variables) for item in value]
    return value


def references_in(value: Any, where: Sequence[str | int] = ()) -> Iterator[tuple[tuple[str | int, ...], Reference]]:
    """Every reference in the string values of a config, with where it was found (for validation messages)."""
    if isinstance(value, str):
        for reference in find_references(value):
            yield tuple(where), reference
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from references_in(item, [*where, key])
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from references_in(item, [*where, index])
