"""The condition language: a few operators over literals and variable references, parsed by hand, never `eval`.

A condition's `when` text comes from a flow file anyone may have written or shared, so nothing in it is Python:
the tokenizer knows only the tokens below and the parser only this grammar, so a name, an attribute, a call, a
subscript or a lambda is a syntax error at validation time, whatever it tries to reach.

    expression := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | comparison
    comparison := operand [("==" | "!=" | "<" | "<=" | ">" | ">=" | "contains") operand]
    operand    := literal | reference | "(" expression ")"
    literal    := 'text' | "text" | number | true | false | null

References are the variables' `${root.path[0]}` form. They are values, never text pasted into the expression, so
an output cannot change what a condition means. An unresolved reference is null here (`${skipped} == null` asks
whether a step ran). `==` and `!=` compare JSON values (1 == 1.0, "1" != 1, true != 1); ordering compares two
numbers or two strings and is an error otherwise; `a contains b` is a substring test on strings, membership in a
list and a key test on an object. `and`, `or` and `not` use JSON truthiness (false, null, 0, "", [] and {} are false)
and give booleans.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._variables import MISSING, Reference, parse_reference, resolve

__all__ = ["Expression", "ExpressionError", "parse_expression", "truthy"]

MAX_LENGTH = 2000
MAX_DEPTH = 32  # nested parentheses and `not`s: a recursive parser must not be driven into the recursion limit

CompareOp = Literal["==", "!=", "<", "<=", ">", ">=", "contains"]


class ExpressionError(ValueError):
    """A condition that does not parse, or (when evaluated) compares what cannot be compared."""


@dataclass(frozen=True)
class _Token:
    kind: Literal["string", "number", "word", "ref", "op", "(", ")", "end"]
    value: Any
    position: int


_TOKENS = re.compile(
    r"""(?P<space>\s+)
    |(?P<ref>\$\{[^}]*\})
    |(?P<number>-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    |(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<op>==|!=|<=|>=|<|>)
    |(?P<paren>[()])
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
_WORDS = {"and", "or", "not", "contains", "true", "false", "null"}
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def _unquote(text: str, position: int) -> str:
    out = []
    chars = iter(enumerate(text[1:-1]))
    for _, char in chars:
        if char != "\\":
            out.append(char)
            continue
        offset, escaped = next(chars)
        if escaped not in _ESCAPES:
            raise ExpressionError(f"unknown escape \\{escaped} at column {position + offset + 1}")
        out.append(_ESCAPES[escaped])
    return "".join(out)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKENS.match(text, position)
        if match is None:
            raise ExpressionError(f"unexpected {text[position]!r} at column {position + 1}")
        kind = match.lastgroup
        token = match.group()
        if kind == "ref":
            reference = parse_reference(token[2:-1])
            if reference is None:
                raise ExpressionError(f"{token} at column {position + 1} is not a valid reference")
            tokens.append(_Token("ref", reference, position))
        elif kind == "number":
            tokens.append(_Token("number", float(token) if any(c in token for c in ".eE") else int(token), position))
        elif kind == "string":
            tokens.append(_Token("string", _unquote(token, position), position))
        elif kind == "op":
            tokens.append(_Token("op", token, position))
        elif kind == "paren":
            tokens.append(_Token("(" if token == "(" else ")", token, position))
        elif kind == "word":
            if token not in _WORDS:
                raise ExpressionError(
                    f"unknown name {token!r} at column {position + 1}: variables are written ${{name}}, "
                    "and only and, or, not, contains, true, false and null are words here"
                )
            tokens.append(_Token("word", token, position))
        position = match.end()
    tokens.append(_Token("end", None, len(text)))
    return tokens


@dataclass(frozen=True)
class _Literal:
    value: Any


@dataclass(frozen=True)
class _Ref:
    reference: Reference


@dataclass(frozen=True)
class _Not:
    operand: _Node


@dataclass(frozen=True)
class _Bool:
    op: Literal["and", "or"]
    operands: tuple[_Node, ...]


@dataclass(frozen=True)
class _Compare:
    op: CompareOp
    left: _Node
    right: _Node


_Node = _Literal | _Ref | _Not | _Bool | _Compare


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.index = 0
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def is_word(self, word: str) -> bool:
        token = self.peek()
        return token.kind == "word" and token.value == word

    def parse(self) -> _Node:
        node = self.parse_or()
        token = self.peek()
        if token.kind != "end":
            raise ExpressionError(f"unexpected {_describe(token)} at column {token.position + 1}")
        return node

    def parse_or(self) -> _Node:
        return self._chain("or", self.parse_and)

    def parse_and(self) -> _Node:
        return self._chain("and", self.parse_not)

    def _chain(self, word: Literal["and", "or"], operand: Callable[[], _Node]) -> _Node:
        operands = [operand()]
        while self.is_word(word):
            self.take()
            operands.append(operand())
        return operands[0] if len(operands) == 1 else _Bool(word, tuple(operands))

    def parse_not(self) -> _Node:
        if self.is_word("not"):
            self.take()
            with self.nested():
                return _Not(self.parse_not())
        return self.parse_comparison()

    def parse_comparison(self) -> _Node:
        left = self.parse_operand()
        token = self.peek()
        if token.kind == "op" or (token.kind == "word" and token.value == "contains"):
            self.take()
            right = self.parse_operand()
            after = self.peek()
            if after.kind == "op" or (after.kind == "word" and after.value == "contains"):
                raise ExpressionError(f"comparisons do not chain (column {after.position + 1}): join them with `and`")
            return _Compare(token.value, left, right)
        return left

    def parse_operand(self) -> _Node:
        token = self.take()
        if token.kind in ("string", "number"):
            return _Literal(token.value)
        if token.kind == "ref":
            return _Ref(token.value)
        if token.kind == "word" and token.value in ("true", "false", "null"):
            return _Literal({"true": True, "false": False, "null": None}[token.value])
        if token.kind == "(":
            with self.nested():
                node = self.parse_or()
            closing = self.take()
            if closing.kind != ")":
                raise ExpressionError(f"expected ) at column {closing.position + 1}, found {_describe(closing)}")
            return node
        raise ExpressionError(f"expected a value at column {token.position + 1}, found {_describe(token)}")

    def nested(self) -> _Depth:
        return _Depth(self)


class _Depth:
    def __init__(self, parser: _Parser) -> None:
        self.parser = parser

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_DEPTH:
            raise ExpressionError(f"nested deeper than {MAX_DEPTH} levels")

    def __exit__(self, *_: object) -> None:
        self.parser.depth -= 1


def _describe(token: _Token) -> str:
    if token.kind == "end":
        return "the end of the expression"
    if token.kind == "ref":
        return f"reference {token.value.text}"
    return repr(token.value)


def truthy(value: Any) -> bool:
    """JSON truthiness: false, null, 0, "", [] and {} are false; an unresolved reference is null."""
    return value is not MISSING and bool(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    if value is None or value is MISSING:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _equal(left: Any, right: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1 (Python says True == 1), at any depth."""
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(_equal(left[key], right[key]) for key in left)
    if type(left) is not type(right):
        return False
    return bool(left == right)


def _compare(op: CompareOp, left: Any, right: Any) -> bool:
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if op == "contains":
        if isinstance(left, str) and isinstance(right, str):
            return right in left
        if isinstance(left, list | tuple):
            return any(_equal(item, right) for item in left)
        if isinstance(left, Mapping) and isinstance(right, str):
            return right in left
        raise ExpressionError(f"{_type_name(left)} cannot contain {_type_name(right)}")
    if not ((_is_number(left) and _is_number(right)) or (isinstance(left, str) and isinstance(right, str))):
        raise ExpressionError(f"cannot order {_type_name(left)} and {_type_name(right)} with {op}")
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _evaluate(node: _Node, variables: Mapping[str, Any]) -> Any:
    match node:
        case _Literal(value):
            return value
        case _Ref(reference):
            value = resolve(reference, variables)
            return None if value is MISSING else value
        case _Not(operand):
            return not truthy(_evaluate(operand, variables))
        case _Bool("and", operands):
            return all(truthy(_evaluate(operand, variables)) for operand in operands)
        case _Bool(_, operands):
            return any(truthy(_evaluate(operand, variables)) for operand in operands)
        case _Compare(op, left, right):
            return _compare(op, _evaluate(left, variables), _evaluate(right, variables))
    raise AssertionError(node)  # pragma: no cover - the match above covers every node


def _references(node: _Node) -> list[Reference]:
    match node:
        case _Literal():
            return []
        case _Ref(reference):
            return [reference]
        case _Not(operand):
            return _references(operand)
        case _Bool(_, operands):
            return [reference for operand in operands for reference in _references(operand)]
        case _Compare(_, left, right):
            return [*_references(left), *_references(right)]
    raise AssertionError(node)  # pragma: no cover


@dataclass(frozen=True)
class Expression:
    """A parsed condition: evaluate it against the run's variables, or list the references it reads."""

    text: str
    _root: _Node

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """The expression's value (a boolean unless it is a lone operand).

        Raises:
            ExpressionError: an ordering or `contains` between values that do not support it.
        """
        return _evaluate(self._root, variables)

    def holds(self, variables: Mapping[str, Any]) -> bool:
        """Whether the expression is true (JSON truthiness of its value)."""
        return truthy(self.evaluate(variables))

    def references(self) -> list[Reference]:
        """Every reference the expression reads, in order."""
        return _references(self._root)


def parse_expression(text: str) -> Expression:
    """Parse a condition.

    Raises:
        ExpressionError: anything outside the grammar, with the column where it went wrong.
    """
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"longer than {MAX_LENGTH} characters")
    if not text.strip():
        raise ExpressionError("empty expression")
    return Expression(text, _Parser(text).parse())
