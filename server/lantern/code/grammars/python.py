"""Python: classes, functions (methods inside a class), `type` aliases, and module-level
UPPER_CASE constants. A decorated definition starts at its first decorator."""

from __future__ import annotations

import re

from lantern.code.grammars.common import (
    Captures,
    Found,
    Grammar,
    Rule,
    body_end,
    field,
    first_named,
    named,
    simple,
    text,
)

_CONSTANT = re.compile(r"_*[A-Z][A-Z0-9_]*\Z")
_KINDS = {"function_definition": "function", "class_definition": "class"}


def _decorated(captures: Captures, source: bytes) -> list[Found]:
    inner = captures["inner"]
    kind = _KINDS.get(inner.type)
    if kind is None:
        return []
    return named(captures["d"], field(inner, "name"), kind, source, body_end(inner))


def _constant(captures: Captures, source: bytes) -> list[Found]:
    left = field(captures["assignment"], "left")
    if left is None or left.type != "identifier" or not _CONSTANT.match(text(left, source)):
        return []
    return named(captures["d"], left, "constant", source)


def _alias(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]  # `type L[K] = ...`: the name inside the generic
    return named(node, first_named(field(node, "left"), "identifier"), "type", source)


GRAMMAR = Grammar(
    rules=(
        Rule("(function_definition) @d", simple("function")),
        Rule("(class_definition) @d", simple("class")),
        Rule("(decorated_definition definition: (_) @inner) @d", _decorated),
        Rule("(module (expression_statement (assignment) @assignment) @d)", _constant),
        Rule("(type_alias_statement) @d", _alias),
    ),
    identifiers=frozenset({"identifier"}),
)
