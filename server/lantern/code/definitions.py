"""The definitions in a source file: classes, functions, methods, types, constants.

A tree-sitter query (run in C) finds each language's candidate nodes; its table
(`code/grammars/`) says what each one defines. Nesting is worked out from the nodes'
byte ranges with an explicit stack, never by recursion, so a deeply nested file cannot
exhaust Python's stack. A definition nested deeper than MAX_DEPTH is counted, not
listed; the query itself stops `code/deep.py`'s MAX_DEPTH syntax levels down. A long
qualified name keeps its start and its end (`_qualified`), so memory grows with the
file, never with the square of its nesting.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import tree_sitter

from lantern.code import deep, languages
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
MAX_DEPTH = 100  # a definition nested deeper is counted in `Unlisted`, not listed
MAX_BYTE = 2**32 - 1  # past the end of any source tree-sitter parses
# Of a qualified name's outer part, the characters kept at its start and at its end: at
# least the longest name a lookup takes (`tools/navigation/symbols.py`), so that
# `Outer.member` finds the same definitions, and what is shown (its start) is the same.
_KEPT_CHARS = 200


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
class Unlisted:
    """What a file's definitions leave out: how many definitions are nested deeper than
    MAX_DEPTH and the line of the first (0: none), and the first line of code nested
    deeper than a query searches (`code/deep.py`; 0: none)."""

    nested: int = 0
    nested_line: int = 0
    deep_line: int = 0

    def __bool__(self) -> bool:
        return bool(self.nested or self.deep_line)

    def words(self) -> str:
        """What was left out, in words (empty when nothing was)."""
        parts = []
        if self.nested:
            parts.append(
                f"{self.nested:,} definition(s) nested deeper than {MAX_DEPTH} levels "
                f"(the first at line {self.nested_line:,})"
            )
        if self.deep_line:
            parts.append(deep_words(self.deep_line))
        return "; ".join(parts)


def deep_words(line: int) -> str:
    """Code nested deeper than a query searches, from `line`, in words."""
    return f"code nested deeper than {deep.MAX_DEPTH:,} levels (from line {line:,})"


@dataclass(frozen=True)
class Scan:
    """What parsing a file found, all that the cache keeps of it: its bytes, line table,
    definitions, the start bytes of the identifiers that name those definitions, what
    they leave out, and the first byte of code nested too deep to query (None: none).
    Never the tree (about twenty times the source)."""

    source: bytes
    lines: LineTable
    definitions: list[Definition]
    name_starts: frozenset[int]
    unlisted: Unlisted
    deep_from: int | None


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


def _candidates(
    whole: list[tree_sitter.Node],
    source: bytes,
    language: str,
    spans: Sequence[tuple[int, int]] = ((0, MAX_BYTE),),
) -> list[Found]:
    """What the rules find, one per name token (the widest node wins), in source order
    with an enclosing node before the nodes inside it; only in matches that reach into
    one of `spans` (byte ranges; default: all)."""
    rules = grammar_for(language).rules
    query = _query(language)
    matches = [m for piece in whole for span in spans for m in _cursor(query, span).matches(piece)]
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


def _cursor(query: tree_sitter.Query, span: tuple[int, int]) -> tree_sitter.QueryCursor:
    found = deep.cursor(query)
    if span != (0, MAX_BYTE):
        found.set_byte_range(*span)
    return found


def _qualified(outer: str, name: str) -> str:
    """`outer.name`, with a long `outer` cut in its middle: a definition nested under
    long names does not repeat them all."""
    if len(outer) > 2 * _KEPT_CHARS + 1:
        outer = f"{outer[:_KEPT_CHARS]}…{outer[-_KEPT_CHARS:]}"
    return f"{outer}.{name}"


def _nest(
    found: list[Found], source: bytes, lines: LineTable, public: Judge
) -> tuple[list[Definition], set[int], Unlisted]:
    definitions: list[Definition] = []
    name_starts: set[int] = set()
    nested, nested_start = 0, -1
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
        depth = len(stack)
        if depth > MAX_DEPTH:  # counted; its name is never made
            if item.listed:
                nested += 1
                nested_start = start if nested_start < 0 else nested_start
            if kind in CONTAINERS:
                stack.append(_Open(item.end, "", kind, in_function or kind in _FUNCTIONS))
            continue
        qualname = _qualified(outer.qualname, item.name) if outer and outer.qualname else item.name
        if item.listed:
            end = item.end if item.header_end is None else item.header_end
            signature = one_line(source[start : max(start, end)])
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
    unlisted = Unlisted(nested, lines.line(nested_start) if nested else 0)
    return definitions, name_starts, unlisted


def scan_tree(source: bytes, language: str) -> tuple[Scan, tree_sitter.Tree]:
    """Parse `source` and find its definitions: the scan, and the tree."""
    tree = languages.parse(source, language)
    lines = LineTable(source)
    whole = pieces(tree)[0]
    found = _candidates(whole, source, language)
    definitions, name_starts, unlisted = _nest(found, source, lines, judge(language, tree, source))
    deep_from = deep.first_beyond(whole)
    if deep_from is not None:
        unlisted = replace(unlisted, deep_line=lines.line(deep_from))
    scanned = Scan(source, lines, definitions, frozenset(name_starts), unlisted, deep_from)
    return scanned, tree


def scan(source: bytes, language: str) -> Scan:
    """Parse `source` and find its definitions (what the cache keeps)."""
    return scan_tree(source, language)[0]


def definitions(source: bytes, language: str) -> list[Definition]:
    """Every definition in `source` (to MAX_DEPTH), sorted by (start, depth)."""
    return scan(source, language).definitions


def named_within(
    tree: tree_sitter.Tree,
    source: bytes,
    lines: LineTable,
    language: str,
    spans: Sequence[tuple[int, int]],
) -> frozenset[int] | None:
    """Starts of definitions' names, from only the query matches that reach into one of
    `spans` (byte ranges): within the spans, exactly the `name_starts` of `scan_tree` (a
    definition, and each one around it, spans its name). None where a rule joins a
    definition to the node after it (a `tail`): that one may lie outside every span."""
    if any("@tail" in rule.pattern for rule in grammar_for(language).rules):
        return None
    found = _candidates(pieces(tree)[0], source, language, spans)
    return frozenset(_nest(found, source, lines, lambda _start, _name, _signature: True)[1])
