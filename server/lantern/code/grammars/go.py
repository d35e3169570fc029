"""Go: functions, methods (named `Type.Method` from the receiver, at depth 0 as Go writes
them), structs, interfaces (their methods as `Iface.Method`), other named types and
aliases, and package-level `const`s."""

from __future__ import annotations

from tree_sitter import Node

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

_RECEIVER = "(parameter_declaration type: (_) @recv)"


def _whole(captures: Captures) -> Node:
    """The declaration when it holds only this spec, else the spec alone."""
    declaration = captures["d"]
    # Its named children are its specs (or a comment, which only makes this the spec):
    # counted in C, so a declaration of thousands of names stays linear.
    return declaration if declaration.named_child_count == 1 else captures["s"]


def _method(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    name = field(node, "name")
    receiver = first_named(captures["recv"], "type_identifier")
    if name is None or receiver is None:
        return []
    shown = f"{text(receiver, source)}.{text(name, source)}"
    return [Found(node, name, shown, "method", body_end(node))]


def _brace(node: Node | None) -> int | None:
    """Where `{` opens `node`'s members (an interface has no body node)."""
    if node is None:
        return None
    return next((c.start_byte for c in node.children if c.type == "{"), None)


def _type(captures: Captures, source: bytes) -> list[Found]:
    spec = captures["s"]
    shape = field(spec, "type")
    node = _whole(captures)
    if spec.type == "type_spec" and shape is not None and shape.type == "struct_type":
        members = next(
            (c for c in shape.named_children if c.type == "field_declaration_list"), None
        )
        return named(node, field(spec, "name"), "struct", source, _brace(members))
    if spec.type == "type_spec" and shape is not None and shape.type == "interface_type":
        return named(node, field(spec, "name"), "interface", source, _brace(shape))
    return named(node, field(spec, "name"), "type", source)


def _constant(captures: Captures, source: bytes) -> list[Found]:
    node = _whole(captures)
    spec = captures["s"]
    found: list[Found] = []
    for name in spec.children_by_field_name("name"):
        if name.type == "identifier":  # the field also holds the commas between names
            found.extend(named(node, name, "constant", source))
    return found


GRAMMAR = Grammar(
    rules=(
        Rule("(function_declaration) @d", simple("function")),
        Rule(f"(method_declaration receiver: (parameter_list {_RECEIVER})) @d", _method),
        Rule("(type_declaration [(type_spec) (type_alias)] @s) @d", _type),
        Rule("(interface_type (method_elem) @d)", simple("method", "")),
        Rule("(source_file (const_declaration (const_spec) @s) @d)", _constant),
    ),
    identifiers=frozenset(
        {"identifier", "type_identifier", "field_identifier", "package_identifier"}
    ),
)
