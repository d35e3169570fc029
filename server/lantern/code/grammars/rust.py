"""Rust: functions, methods (in an `impl`, named `Type.method`; in a trait,
`Trait.method`, signatures without a body too), structs and unions, enums, traits,
modules, type aliases, and `const`/`static` items outside function bodies. An `impl`
block is not listed itself: it names and nests its members."""

from __future__ import annotations

from tree_sitter import Node

from lantern.code.grammars.common import Captures, Found, Grammar, Rule, field, simple, text

WHOLE = ""  # no body field: the signature is the whole node
_WRAPPERS = {"generic_type": "type", "scoped_type_identifier": "name", "reference_type": "type"}


def _type_name(node: Node | None) -> Node | None:
    """The identifier that names an `impl`'s type: `P` in `impl<T> P<T>`, `&a::P`."""
    for _ in range(8):
        if node is None or node.type == "type_identifier":
            return node
        wrapper = _WRAPPERS.get(node.type)
        if wrapper is None:
            return None
        node = field(node, wrapper)
    return None


def _impl(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    name = _type_name(field(node, "type"))
    if name is None:
        return []
    return [Found(node, name, text(name, source), "impl", listed=False)]


GRAMMAR = Grammar(
    rules=(
        Rule("(function_item) @d", simple("function")),
        Rule("(function_signature_item) @d", simple("function", WHOLE)),
        Rule("(struct_item) @d", simple("struct")),
        Rule("(union_item) @d", simple("struct")),
        Rule("(enum_item) @d", simple("enum")),
        Rule("(trait_item) @d", simple("trait")),
        Rule("(mod_item) @d", simple("module")),
        Rule("(type_item) @d", simple("type", WHOLE)),
        Rule("(const_item) @d", simple("constant", WHOLE)),
        Rule("(static_item) @d", simple("constant", WHOLE)),
        Rule("(impl_item) @d", _impl),
    ),
    identifiers=frozenset(
        {"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier"}
    ),
)
