"""C (and what C++ shares with it): function definitions, structs and unions and enums
that have a body, `typedef`s, object-like `#define` macros (as constants), function-like
ones at file level (as macros), and top-level `const` variables. Declarations without a
body (prototypes, `struct x;`) are not listed.

An attribute macro called with literal arguments before a declaration's name
(`static __always_inline __alloc_size(1) void *f(…)`, `__printf(1, 2)` on the line
before, `SEC("xdp")`) is not C the grammar can read: it takes the call for the
declarator, names the function after the macro and loses the definitions after it. The
parser is given such calls blanked (`blank_attribute_macros`); what is shown, the
signature included, is still the file's own text.
"""

from __future__ import annotations

import re

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

_LITERAL = rb"(?:\d[\w.']*|\"(?:[^\"\\\n]|\\.)*\")"  # `1`, `0x1fUL`, `"xdp"`
_OPENS = re.compile(rb'\([ \t]*[\d"]')  # where such a call may be: `(` and a literal
# From a line's start: only words (`static __always_inline`), then NAME(LITERALS), then a
# name or `*` (on the same line or the next): where no call can stand in C.
_ATTRIBUTE = re.compile(
    rb"[ \t]*(?:[A-Za-z_]\w*[ \t]+)*?"
    rb"(?P<call>(?P<name>[A-Za-z_]\w*)[ \t]*\([ \t]*"
    + _LITERAL
    + rb"(?:[ \t]*,[ \t]*"
    + _LITERAL
    + rb")*[ \t]*\))(?=[ \t]*\n?[ \t]*[A-Za-z_*])"
)
# Words that take parentheses and may be followed by a name (`if (1) x = 2;`).
_KEYWORDS = frozenset(
    b"if while for switch return sizeof alignof _Alignof alignas _Alignas typeof "
    b"__typeof__ __typeof decltype _Generic static_assert _Static_assert case do else "
    b"goto defined noexcept throw new delete operator requires explicit co_return "
    b"co_yield co_await asm __asm__ __asm".split()
)


def blank_attribute_macros(source: bytes) -> bytes:
    """`source` with each attribute macro call (see the module's note) turned into
    spaces, every other byte kept in its place."""
    out: bytearray | None = None
    done = -1  # the start of the last line looked at
    for opening in _OPENS.finditer(source):
        line = source.rfind(b"\n", 0, opening.start()) + 1
        if line == done:
            continue
        done = line
        while (found := _ATTRIBUTE.match(source if out is None else out, line)) is not None:
            if found["name"] in _KEYWORDS:
                break
            if out is None:
                out = bytearray(source)
            start, end = found.span("call")
            out[start:end] = b" " * (end - start)
    return source if out is None else bytes(out)


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


def macro(captures: Captures, source: bytes) -> list[Found]:
    """A function-like macro: its signature is its name and parameters (not the
    expansion, nor a `\\` that continues it on the next line)."""
    node = captures["d"]
    parameters = field(node, "parameters")
    end = None if parameters is None else parameters.end_byte
    return named(node, field(node, "name"), "macro", source, end)


SHARED_RULES = (
    Rule("(function_definition) @d", function),
    with_body("struct"),
    with_body("union"),
    with_body("enum"),
    Rule("(type_definition) @d", typedef),
    Rule("(preproc_def) @d", simple("constant", WHOLE)),
    # A function-like macro at file level, also inside `#if…` blocks (one defined in a
    # function's body is left out, as a constant there is).
    *(Rule(f"({scope} (preproc_function_def) @d)", macro) for scope in _FILE_LEVEL),
    # A constant at file level, also inside `#if…` blocks and `extern "C" {…}` (one in
    # a function body is dropped: constants are never listed inside a function).
    *(Rule(f"({scope} (declaration) @d)", constant) for scope in _FILE_LEVEL),
    Rule("(linkage_specification body: (declaration_list (declaration) @d))", constant),
)

GRAMMAR = Grammar(
    rules=SHARED_RULES,
    identifiers=frozenset({"identifier", "field_identifier", "type_identifier"}),
    prepare=blank_attribute_macros,
)
