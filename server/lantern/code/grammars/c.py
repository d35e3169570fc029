"""C (and what C++ shares with it): function definitions, structs and unions and enums
that have a body, `typedef`s, object-like `#define` macros, and top-level `const`
variables. Declarations without a body (prototypes, `struct x;`) are not listed."""

from __future__ import annotations

from tree_sitter import Node

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

WHOLE = ""  # no body field: the signature is the whole node
NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "primitive_type",  # `typedef int int32;` in a grammar that reads it so
    }
)
_DEPTH = 64  # declarators nest a few levels: `int (*f(void))(int)`


def declared(declarator: Node | None) -> Node | None:
    """The name inside a declarator: `f` in `*f(int)`, `A::f` in `A::f()`."""
    node = declarator
    for _ in range(_DEPTH):
        if node is None or node.type in NAMES:
            return node
        inner = field(node, "declarator")
        if inner is None and node.named_children:
            inner = node.named_children[0]  # parenthesized_declarator
        node = inner
    return None


def function(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    inner = captures.get("inner", node)
    name = declared(field(inner, "declarator"))
    return named(node, name, "function", source, body_end(inner))


def with_body(kind: str) -> Rule:
    """A struct, union, enum or class that has a body (not a forward declaration)."""
    return Rule(f"({kind}_specifier name: (_) body: (_)) @d", simple(_KIND[kind]))


_KIND = {"struct": "struct", "union": "struct", "enum": "enum", "class": "class"}


def typedef(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    found: list[Found] = []
    for declarator in node.children_by_field_name("declarator"):
        found.extend(named(node, declared(declarator), "type", source))
    return found


def constant(captures: Captures, source: bytes) -> list[Found]:
    """A declaration whose type is `const` (or `constexpr`) and whose declarator is a
    plain name or array, not a pointer to something constant."""
    node = captures["d"]
    qualifiers = {text(c, source) for c in node.named_children if c.type == "type_qualifier"}
    if not qualifiers & {"const", "constexpr"}:
        return []
    found: list[Found] = []
    for declarator in node.children_by_field_name("declarator"):
        inner = field(declarator, "declarator") if declarator.type == "init_declarator" else None
        while inner is not None and inner.type == "array_declarator":
            inner = field(inner, "declarator")
        if inner is not None and inner.type == "identifier":
            found.extend(named(node, inner, "constant", source))
    return found


_FILE_LEVEL = ("translation_unit", "preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif")

SHARED_RULES = (
    Rule("(function_definition) @d", function),
    with_body("struct"),
    with_body("union"),
    with_body("enum"),
    Rule("(type_definition) @d", typedef),
    Rule("(preproc_def) @d", simple("constant", WHOLE)),
    # A constant at file level, also inside `#if…` blocks and `extern "C" {…}` (one in
    # a function body is dropped: constants are never listed inside a function).
    *(Rule(f"({scope} (declaration) @d)", constant) for scope in _FILE_LEVEL),
    Rule("(linkage_specification body: (declaration_list (declaration) @d))", constant),
)

GRAMMAR = Grammar(
    rules=SHARED_RULES,
    identifiers=frozenset({"identifier", "field_identifier", "type_identifier"}),
)
