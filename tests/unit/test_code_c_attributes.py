"""C and C++ definitions behind attribute macros called with literal arguments
(`__alloc_size(1)`, `__printf(1, 2)`, `SEC("xdp")`), which the grammar alone reads as a
function named after the macro (or loses, with what follows), and function-like
`#define` macros, listed as macros; calls that are code stay code."""

from __future__ import annotations

import pytest
from lantern.code.definitions import definitions
from lantern.code.grammars.c import blank_attribute_macros
from lantern.code.references import uses

# Shaped like a kernel header: an attribute macro before the return type (inside
# `#ifndef` and at file level), one on the line before the function, a BPF section
# name, and both kinds of `#define`.
HEADER = b"""\
#ifndef CONFIG_TINY
static __always_inline __alloc_size(1) void *pool_get_node(size_t size, int node)
{
\treturn pool_get(size, node);
}
#else
static inline int pool_fallback(void) { return 0; }
#endif

static __always_inline __alloc_size(1, 2) void *pool_get_array(size_t n, size_t size)
{
\treturn pool_get(n * size, 0);
}

static inline __printf(1, 2)
void check_format(const char *fmt, ...)
{
}

SEC("xdp")
int drop_all(void *ctx)
{
\treturn 1;
}

#define alloc_widget(size_of_priv) alloc_widget_mq(size_of_priv, 1)
#define WIDGET_MAX 4

static inline char *pack_byte(char *buf, unsigned char byte)
{
\treturn buf;
}

#define widget_each(w, list) \\
\tfor ((w) = (list); (w); (w) = (w)->next)
"""


def test_functions_behind_attribute_macros_are_named_for_themselves() -> None:
    found = [(d.kind, d.name, d.start, d.end, d.public) for d in definitions(HEADER, "c")]
    assert found == [
        ("function", "pool_get_node", 2, 5, False),
        ("function", "pool_fallback", 7, 7, False),
        ("function", "pool_get_array", 10, 13, False),
        ("function", "check_format", 15, 18, False),
        ("function", "drop_all", 21, 24, True),  # a line of its own before it is not part
        ("macro", "alloc_widget", 26, 26, True),
        ("constant", "WIDGET_MAX", 27, 27, True),
        ("function", "pack_byte", 29, 32, False),
        ("macro", "widget_each", 34, 35, True),
    ]


def test_signatures_keep_the_files_own_text() -> None:
    signatures = {d.name: d.signature for d in definitions(HEADER, "c")}
    assert signatures["pool_get_node"] == (
        "static __always_inline __alloc_size(1) void *pool_get_node(size_t size, int node)"
    )
    assert signatures["check_format"] == (
        "static inline __printf(1, 2) void check_format(const char *fmt, ...)"
    )
    assert signatures["drop_all"] == "int drop_all(void *ctx)"
    assert signatures["alloc_widget"] == "#define alloc_widget(size_of_priv)"
    assert signatures["widget_each"] == "#define widget_each(w, list)"


def test_a_definition_is_a_marked_use_and_the_macro_is_not_one() -> None:
    marked = [(u.line, u.is_definition) for u in uses(HEADER, "c", "pool_get_node")]
    assert marked == [(2, True)]
    assert [(u.line, u.is_definition) for u in uses(HEADER, "c", "alloc_widget")] == [(26, True)]
    # The parser never saw the attribute calls: they are not uses of anything.
    assert uses(HEADER, "c", "__alloc_size") == []


def test_only_the_attribute_calls_are_blanked_in_place() -> None:
    blanked = blank_attribute_macros(HEADER)
    assert len(blanked) == len(HEADER)
    changed = bytes(a for a, b in zip(HEADER, blanked, strict=True) if a != b)
    assert changed.replace(b" ", b"") == b'__alloc_size(1)__alloc_size(1,2)__printf(1,2)SEC("xdp")'
    assert all(b == ord(" ") for a, b in zip(HEADER, blanked, strict=True) if a != b)


@pytest.mark.parametrize(
    "code",
    [
        b"int f(int x)\n{\n\tif (1) x = 2;\n\twhile (0) x++;\n\treturn x;\n}\n",
        b"int f(int x)\n{\n\tlist_walk(x, 1)\n\t\tx++;\n\treturn sizeof(1) * x;\n}\n",
        b"#if KERNEL_VERSION(2, 6, 0)\nint x;\n#endif\n",
        b'int f(int x)\n{\n\tprint("a")\n\t\t;\n\treturn g(1) + x;\n}\n',
        b"struct s { int a[4] __aligned(8); };\n",
    ],
)
def test_calls_that_are_code_are_left_alone(code: bytes) -> None:
    assert blank_attribute_macros(code) == code


def test_cpp_shares_it() -> None:
    source = (
        b'DEPRECATED("use area") int legacy_area(int s) { return s; }\n'
        b"#define AREA(s) ((s) * (s))\n"
        b"namespace geo {\nALIGNED(16) struct Box { int x; };\n}\n"
    )
    found = [(d.kind, d.name) for d in definitions(source, "cpp")]
    assert found == [
        ("function", "legacy_area"),
        ("macro", "AREA"),
        ("namespace", "geo"),
        ("struct", "geo.Box"),
    ]
