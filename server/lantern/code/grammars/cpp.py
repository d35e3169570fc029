"""C++: what C has, plus classes, namespaces, `using` aliases, `constexpr` constants,
templates (a template's range starts at `template <…>`), methods declared in a class
without a body, and out-of-class definitions `A::f` named `A.f` (kind `method`); also
when an export macro stands before the return type or an annotation macro after the
parameters, which the grammar reads as code; attribute macros with literal arguments
are blanked before parsing, as in C."""

from __future__ import annotations

from tree_sitter import Node

from lantern.code.grammars.c import (
    NAMES,
    SHARED_RULES,
    blank_attribute_macros,
    constant,
    declared,
    with_body,
)
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
_WRAPPERS = frozenset({"pointer_declarator", "reference_declarator"})  # `*f()`, `&f()`
_DECLARATORS = _WRAPPERS | {"function_declarator"}


def _function_name(declarator: Node | None, source: bytes) -> tuple[Node, str, bool] | None:
    """The token that names a function's declarator, the name shown (`A::B::f` as
    `A.B.f`, `ns::Box<T>::Box` as `ns.Box.Box`) and whether it has a scope (defined out
    of its class). A scope closed by a `::` the grammar made up is the return type behind
    a macro, not a scope: `API std::string f()` is read as `std::string::f` and
    `API Type* f()` as `Type::* f()`."""
    node = declared(declarator)
    scopes: list[str] = []
    for _ in range(_DEPTH):
        if node is None or node.type != "qualified_identifier":
            break
        if any(child.is_missing for child in node.children):
            scopes = []
        else:
            scope = field(node, "scope")
            if scope is not None:
                scopes.append(text(field(scope, "name") or scope, source))
        node = field(node, "name")
        if node is not None and node.type not in NAMES:
            node = declared(node)  # `* f()` after a made-up `::`
    if node is None or node.type == "qualified_identifier":
        return None
    name = text(node, source)
    return (node, ".".join([*scopes, name]), bool(scopes)) if name else None


def _function_declarator(declarator: Node | None) -> Node | None:
    """The function declarator under any `*` and `&` of a returned pointer or reference
    (None: the declarator declares no function)."""
    node = declarator
    for _ in range(_DEPTH):
        if node is None or node.type == "function_declarator":
            return node
        if node.type not in _WRAPPERS:
            return None
        node = field(node, "declarator") or node.named_child(node.named_child_count - 1)
    return None


def _misread(definition: Node) -> Node | None:
    """`void run() REQUIRES(mu) {…}` (or `;`) in a class: the grammar takes the
    annotation for the declarator and keeps `run()` in an error before it (inside a `*`
    or `&` declarator when the function returns one). That one is the declarator."""
    node: Node | None = definition
    for _ in range(_DEPTH):
        if node is None:
            return None
        for child in node.children:
            if child.type == "ERROR":
                first = child.named_child(0)
                if first is not None and first.type in _DECLARATORS:
                    return first
            elif child.type in _DECLARATORS:
                break
        node = field(node, "declarator")
        if node is None or node.type not in _WRAPPERS:
            return None
    return None


def _found(
    node: Node, declarator: Node | None, source: bytes, header: int | None, tail: Node | None
) -> list[Found]:
    named = _function_name(declarator, source)
    if named is None:
        return []
    token, shown, scoped = named
    return [Found(node, token, shown, "method" if scoped else "function", header, tail=tail)]


def _function(captures: Captures, source: bytes) -> list[Found]:
    """A function definition (or a template of one), named as `_function_name` says."""
    node = captures["d"]
    inner = captures.get("inner", node)
    declarator = _misread(inner) or field(inner, "declarator")
    return _found(node, declarator, source, body_end(inner), None)


def _annotated(captures: Captures, source: bytes) -> list[Found]:
    """`void A::f() LOCKS(mu) {…}`: the grammar reads `void A::f()` as a declaration
    whose `;` is missing and `LOCKS(mu) {…}` as a function without a type (`LOCKS(mu);`
    as a declaration without one). It is one definition, from the declaration to the end
    of what follows."""
    node, tail = captures["d"], captures["tail"]
    last = node.child(node.child_count - 1)
    declarator = field(node, "declarator")
    if last is None or not last.is_missing or _function_declarator(declarator) is None:
        return []
    return _found(node, declarator, source, body_end(tail), tail)


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
    """A method declared in a class without a body: `void run() = 0;`, `T& get();`,
    `void lock() ACQUIRE(mu);`."""
    node = captures["d"]
    declarator = _misread(node) or field(node, "declarator")
    if _function_declarator(declarator) is None:
        return []  # `int* data_;`
    return named(node, declared(declarator), "method", source)


_TEMPLATE = "(template_declaration (function_definition) @inner) @d"
# A function's declarator, or a pointer or reference returned by one (told apart by reading).
_DECLARED = "declarator: [(function_declarator) (pointer_declarator) (reference_declarator)]"
# A declaration, then a function (or a declaration) without a type: see `_annotated`.
_ANNOTATED = "(({} {}) @d . [(function_definition !type) (declaration !type)] @tail)"

GRAMMAR = Grammar(
    rules=(
        Rule("(function_definition) @d", _function),
        Rule(_TEMPLATE, _function),
        Rule(_ANNOTATED.format("declaration", _DECLARED), _annotated),
        Rule(_ANNOTATED.format("field_declaration", _DECLARED), _annotated),
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
    prepare=blank_attribute_macros,
)
