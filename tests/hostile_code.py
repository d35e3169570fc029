"""Source files made to hurt the code engine (`lantern.code`): deep nesting and one name
used millions of times. Used by tests/unit/test_code_hardening.py and by
benchmarks/code_bench.py --hostile.
"""

from __future__ import annotations


def nested_functions(depth: int) -> bytes:
    """JavaScript: `function f0() {`, `function f1() {` inside it, and so on, `depth`
    deep (20,000 deep: about 500 KB)."""
    return "".join(f"function f{i}() {{\n" for i in range(depth)).encode() + b"}\n" * depth


def nested_modules(depth: int) -> bytes:
    """Rust: `mod m0 {`, `mod m1 {` inside it, and so on, `depth` deep."""
    return "".join(f"mod m{i} {{\n" for i in range(depth)).encode() + b"}\n" * depth


def uses_only(count: int, name: str = "x") -> bytes:
    """Python: `count` lines, each one use of `name` (3.9 million: 7.8 MB)."""
    return f"{name}\n".encode() * count


def one_use_among(count: int, name: str = "target") -> bytes:
    """Python: a definition of `name`, then `count` lines that each hold one other
    identifier (1 million: 2 MB)."""
    return f"def {name}(): pass\n".encode() + b"a\n" * count


def deep_generic(depth: int, leaf: str = "Leaf") -> bytes:
    """TypeScript: `type T = Array<Array<…<Leaf>…>>;` on one line, `depth` deep
    (100,000 deep: 700 KB)."""
    return b"type T = " + b"Array<" * depth + leaf.encode() + b">" * depth + b";\n"
