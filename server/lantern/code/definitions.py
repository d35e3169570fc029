"""The definitions in a source file: classes, functions, methods, types, constants.

A tree-sitter query (run in C) finds each language's candidate nodes; its table
(`code/grammars/`) says what each one defines. Nesting is worked out from the nodes'
byte ranges with an explicit stack, never by recursion, so a deeply nested file cannot
exhaust Python's stack.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import tree_sitter

from lantern.code import languages
from lantern.code.grammars import grammar_for
from lantern.code.grammars.common import Found
from lantern.code.pieces import pieces
from lantern.code.text import LineTable, one_line
from lantern.code.visibility import Judge, judge

# Kinds whose members are named under them and count one level deeper.
CONTAINERS = frozenset(
    {
        "class",
        "function",
        "method",
        "struct",
        "interface",
        "enum",
        "trait",
        "module",
        "namespace",
        "impl",
    }
)
# A function directly inside one of these is a method.
MEMBER_HOSTS = frozenset({"class", "struct", "interface", "enum", "trait", "impl"})
_FUNCTIONS = frozenset({"function", "method"})


@dataclass(frozen=True)
class Definition:
    """One definition: `start`/`end` are the 1-based first and last lines of its whole
    node, `signature` its header on one line, `depth` 0 at top level and one more per
    enclosing definition (or Rust `impl`). `public`: for a top-level definition, whether
    its language means it for use outside its file (`code/visibility.py`); a member is
    not judged and is always public."""

    kind: str
    name: str
    start: int
    end: int
    signature: str
    depth: int
    public: bool


@dataclass(frozen=True)
class Scan:
    """A parsed file: its tree, line table, definitions, and the start bytes of the
    identifiers that name those definitions."""

    source: bytes
    language: str
    tree: tree_sitter.Tree
    lines: LineTable
    definitions: list[Definition]
    name_starts: frozenset[int]


@dataclass
class _Open:
    end: int
    qualname: str
    kind: str
    in_function: bool


@functools.cache  # two threads may both compile it once; either result is the same
def _query(language: str) -> tree_sitter.Query:
    """The definition rules of `language` as one compiled query."""
    rules = grammar_for(language).rules
    source = "\n".join(rule.pattern for rule in rules)
    found = tree_sitter.Query(languages.grammar(language), source)
    if found.pattern_count != len(rules):
        raise ValueError(f"{language}: each rule must be one query pattern")
    return found


def _candidates(tree: tree_sitter.Tree, source: bytes, language: str) -> list[Found]:
    """What the rules find, one per name token (the widest node wins), in source order
    with an enclosing node before the nodes inside it."""
    rules = grammar_for(language).rules
    query = _query(language)
    matches = [
        m for piece in pieces(tree)[0] for m in tree_sitter.QueryCursor(query).matches(piece)
    ]
    by_name: dict[int, Found] = {}
    tails: set[tuple[int, int]] = set()
    for index, captured in matches:
        captures = {name: nodes[0] for name, nodes in captured.items() if nodes}
        if "d" not in captures:
            continue
        for found in rules[index].describe(captures, source):
            if found.tail is not None:
                tails.add((found.tail.start_byte, found.tail.end_byte))
            key = found.name_node.start_byte
            kept = by_name.get(key)
            if kept is None or found.end - found.start > kept.end - kept.start:
                by_name[key] = found
    ordered = [f for f in by_name.values() if (f.start, f.end) not in tails]
    ordered.sort(key=lambda f: (f.start, -f.end))
    return ordered


def _nest(
    found: list[Found], source: bytes, lines: LineTable, public: Judge
) -> tuple[list[Definition], set[int]]:
    definitions: list[Definition] = []
    name_starts: set[int] = set()
    stack: list[_Open] = []
    for item in found:
        start = item.start
        while stack and stack[-1].end <= start:
            stack.pop()
        outer = stack[-1] if stack else None
        kind = item.kind
        if kind == "function" and outer is not None and outer.kind in MEMBER_HOSTS:
            kind = "method"
        in_function = outer is not None and outer.in_function
        if kind == "constant" and in_function:
            continue
        qualname = f"{outer.qualname}.{item.name}" if outer and outer.qualname else item.name
        if item.listed:
            end = item.end if item.header_end is None else item.header_end
            signature = one_line(source[start : max(start, end)])
            depth = len(stack)
            definitions.append(
                Definition(
                    kind,
                    qualname,
                    lines.line(start),
                    lines.last_line(start, item.end),
                    signature,
                    depth,
                    depth > 0 or public(start, qualname, signature),
                )
            )
            name_starts.add(item.name_node.start_byte)
        if kind in CONTAINERS:
            inside = in_function or kind in _FUNCTIONS
            stack.append(_Open(item.end, qualname, kind, inside))
    definitions.sort(key=lambda d: (d.start, d.depth))
    return definitions, name_starts


def scan(source: bytes, language: str) -> Scan:
    """Parse `source` and find its definitions (what the cache keeps)."""
    tree = languages.parse(source, language)
    lines = LineTable(source)
    found = _candidates(tree, source, language)
    definitions, name_starts = _nest(found, source, lines, judge(language, tree, source))
    return Scan(source, language, tree, lines, definitions, frozenset(name_starts))


def definitions(source: bytes, language: str) -> list[Definition]:
    """Every definition in `source`, sorted by (start, depth)."""
    return scan(source, language).definitions
