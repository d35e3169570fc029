"""C++: what C has, plus classes, namespaces, `using` aliases, `constexpr` constants,
templates (a template's range starts at `template <…>`), methods declared in a class
without a body, and out-of-class definitions `A::f` named `A.f` (kind `method`)."""

from __future__ import annotations

from tree_sitter import Node

from lantern.code.grammars.c import SHARED_RULES, constant, declared, function, with_body
from lantern.code.grammars.common import (
    Captures,
    Found,
    Grammar,
    Rule,
    body_end,
    field,
    named,
    simple,
    text,
)

WHOLE = ""
_DEPTH = 64


def _qualified(captures: Captures, source: bytes) -> list[Found]:
    """`A::B::f` / `ns::Box<T>::Box`: named `A.B.f`, its token the last part."""
    found = function(captures, source)
    if not found or found[0].name_node.type != "qualified_identifier":
        return found
    node: Node | None = found[0].name_node
    scopes: list[str] = []
    for _ in range(_DEPTH):
        if node is None or node.type != "qualified_identifier":
            break
        scope = field(node, "scope")
        if scope is not None:
            scopes.append(text(field(scope, "name") or scope, source))
        node = field(node, "name")
    if node is None:
        return []
    shown = ".".join([*scopes, text(node, source)])
    return [Found(found[0].node, node, shown, "method", found[0].header_end)]


def _namespace(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    name = field(node, "name")
    if name is None:
        return []  # an anonymous namespace: its members stay at its level
    shown = text(name, source).replace("::", ".").replace(" ", "")
    token = name.named_children[-1] if name.named_children else name
    return [Found(node, token, shown, "namespace", body_end(node))]


def _template(captures: Captures, source: bytes) -> list[Found]:
    """`template <typename T> class Box {…}`: the class, from `template` on."""
    inner = captures["inner"]
    if field(inner, "body") is None:
        return []
    kind = "class" if inner.type == "class_specifier" else "struct"
    return named(captures["d"], field(inner, "name"), kind, source, body_end(inner))


def _member(captures: Captures, source: bytes) -> list[Found]:
    """A method declared in a class without a body: `void run() = 0;`."""
    node = captures["d"]
    return named(node, declared(field(node, "declarator")), "method", source)


_TEMPLATE = "(template_declaration (function_definition) @inner) @d"
_DECLARED = "declarator: (function_declarator)"

GRAMMAR = Grammar(
    rules=(
        Rule("(function_definition) @d", _qualified),
        Rule(_TEMPLATE, _qualified),
        *SHARED_RULES[1:],
        with_body("class"),
        Rule("(template_declaration [(class_specifier) (struct_specifier)] @inner) @d", _template),
        Rule("(namespace_definition) @d", _namespace),
        Rule("(alias_declaration) @d", simple("type", WHOLE)),
        Rule(f"(field_declaration_list (field_declaration {_DECLARED}) @d)", _member),
        Rule(f"(field_declaration_list (declaration {_DECLARED}) @d)", _member),
        Rule("(namespace_definition body: (declaration_list (declaration) @d))", constant),
    ),
    identifiers=frozenset(
        {"identifier", "field_identifier", "type_identifier", "namespace_identifier"}
    ),
)
