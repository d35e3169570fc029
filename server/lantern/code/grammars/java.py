"""Java: classes and records, interfaces and annotation types, enums, methods and
constructors (nested types named `Outer.Inner`), and constants: `static final` fields
and the fields of an interface."""

from __future__ import annotations

from lantern.code.grammars.common import Captures, Found, Grammar, Rule, named, simple

WHOLE = ""  # no body field: the signature is the whole node
_DECLARATOR = "declarator: (variable_declarator name: (identifier) @name)"


def _static_final(captures: Captures, source: bytes) -> list[Found]:
    words = {child.type for child in captures["mods"].children}
    if not {"static", "final"} <= words:
        return []
    return named(captures["d"], captures["name"], "constant", source)


def _interface_field(captures: Captures, source: bytes) -> list[Found]:
    return named(captures["d"], captures["name"], "constant", source)


GRAMMAR = Grammar(
    rules=(
        Rule("(class_declaration) @d", simple("class")),
        Rule("(record_declaration) @d", simple("class")),
        Rule("(interface_declaration) @d", simple("interface")),
        Rule("(annotation_type_declaration) @d", simple("interface")),
        Rule("(enum_declaration) @d", simple("enum")),
        Rule("(method_declaration) @d", simple("method")),
        Rule("(constructor_declaration) @d", simple("method")),
        Rule("(annotation_type_element_declaration) @d", simple("method", WHOLE)),
        Rule(f"(field_declaration (modifiers) @mods {_DECLARATOR}) @d", _static_final),
        Rule(f"(constant_declaration {_DECLARATOR}) @d", _interface_field),
    ),
    identifiers=frozenset({"identifier", "type_identifier"}),
)
