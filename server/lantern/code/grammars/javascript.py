"""JavaScript (and what TypeScript shares with it): functions, classes, methods, class
fields holding a function, names bound to a function or class expression at any depth
(`const f = () => …`), top-level `const` constants, and an anonymous `export default`
(named `default`)."""

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
)

FUNCTIONS = "[(arrow_function) (function_expression) (generator_function)]"
_NOT_CONSTANTS = frozenset({"arrow_function", "function_expression", "generator_function", "class"})
_DECLARATIONS = ("lexical_declaration", "variable_declaration")
IDENTIFIERS = frozenset(
    {
        "identifier",
        "property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "type_identifier",
    }
)


def _whole(captures: Captures) -> Node:
    """The declaration when it declares only this name, else the declarator alone."""
    declaration = captures["d"]
    # Its named children are its declarators (or a comment, which only makes this the spec):
    # counted in C, so a declaration of thousands of names stays linear.
    return declaration if declaration.named_child_count == 1 else captures["v"]


def _bound(kind: str, declaration: str) -> Rule:
    value = FUNCTIONS if kind == "function" else "(class)"
    pattern = (
        f"({declaration} "
        f"(variable_declarator name: (identifier) @name value: {value} @value) @v) @d"
    )

    def describe(captures: Captures, source: bytes) -> list[Found]:
        node = _whole(captures)
        return named(node, captures["name"], kind, source, body_end(captures["value"]))

    return Rule(pattern, describe)


def _constant(captures: Captures, source: bytes) -> list[Found]:
    keyword = field(captures["d"], "kind")
    value = field(captures["v"], "value")
    if keyword is None or keyword.type != "const":
        return []
    if value is not None and value.type in _NOT_CONSTANTS:
        return []  # a function or a class: the rules above
    return named(_whole(captures), captures["name"], "constant", source)


def constant_rules(*scopes: str) -> list[Rule]:
    """`const` constants directly in each scope, exported or not."""
    declaration = "(lexical_declaration (variable_declarator name: (identifier) @name) @v) @d"
    rules = []
    for scope in scopes:
        close = ")" * (scope.count("(") - scope.count(")"))
        rules.append(Rule(f"{scope} {declaration}{close}", _constant))
        rules.append(Rule(f"{scope} (export_statement {declaration}){close}", _constant))
    return rules


def _member(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    return named(node, captures["name"], "method", source, body_end(captures["value"]))


def field_rule(node_type: str, name_field: str) -> Rule:
    """A class field whose value is a function: a method."""
    pattern = f"(class_body ({node_type} {name_field}: (_) @name value: {FUNCTIONS} @value) @d)"
    return Rule(pattern, _member)


def _default(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    if field(node, "name") is not None:
        return []
    kind = "class" if node.type == "class" else "function"
    return [Found(node, captures["kw"], "default", kind, body_end(node))]


SHARED_RULES = (
    Rule("(function_declaration) @d", simple("function")),
    Rule("(generator_function_declaration) @d", simple("function")),
    Rule("(class_declaration) @d", simple("class")),
    Rule("(class_body (method_definition) @d)", simple("method")),
    *(_bound(k, d) for k in ("function", "class") for d in _DECLARATIONS),
    *constant_rules("(program"),
    Rule(f'(export_statement "default" @kw value: [(class) {FUNCTIONS[1:-1]}] @d)', _default),
)

GRAMMAR = Grammar(
    rules=(*SHARED_RULES, field_rule("field_definition", "property")),
    identifiers=IDENTIFIERS,
)
