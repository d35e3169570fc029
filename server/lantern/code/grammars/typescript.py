"""TypeScript and TSX: what JavaScript has, plus interfaces, type aliases, enums,
namespaces (`namespace A.B {…}`, `declare module "m" {…}`), abstract classes, and the
signatures without a body (`function f(): void;` overloads, interface and abstract
methods), shown whole."""

from __future__ import annotations

from lantern.code.grammars.common import (
    Captures,
    Found,
    Grammar,
    Rule,
    body_end,
    field,
    simple,
    text,
)
from lantern.code.grammars.javascript import (
    IDENTIFIERS,
    SHARED_RULES,
    constant_rules,
    field_rule,
)

WHOLE = ""  # no body field: the signature is the whole node


def _namespace(captures: Captures, source: bytes) -> list[Found]:
    node = captures["d"]
    name = field(node, "name")
    if name is None:
        return []
    shown = text(name, source)
    if name.type == "string":  # declare module "m"
        shown = shown[1:-1]
    token = name
    if name.type == "nested_identifier" and name.named_children:
        token = name.named_children[-1]  # `A.B`: its own use is the last part
    kind = "module" if node.type == "module" else "namespace"
    return [Found(node, token, shown, kind, body_end(node))] if shown else []


GRAMMAR = Grammar(
    rules=(
        *SHARED_RULES,
        field_rule("public_field_definition", "name"),
        *constant_rules(
            "(internal_module body: (statement_block", "(module body: (statement_block"
        ),
        Rule("(abstract_class_declaration) @d", simple("class")),
        Rule("(interface_declaration) @d", simple("interface")),
        Rule("(enum_declaration) @d", simple("enum")),
        Rule("(type_alias_declaration) @d", simple("type", WHOLE)),
        Rule("(function_signature) @d", simple("function", WHOLE)),
        Rule("(interface_body (method_signature) @d)", simple("method", WHOLE)),
        Rule("(class_body (method_signature) @d)", simple("method", WHOLE)),
        Rule("(class_body (abstract_method_signature) @d)", simple("method", WHOLE)),
        Rule("(internal_module) @d", _namespace),
        Rule("(module) @d", _namespace),
    ),
    identifiers=IDENTIFIERS,
)
