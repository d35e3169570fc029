"""The uses of a name in a source file: identifier tokens whose text is the name.

One query (run in C) lists the identifier-like tokens of a tree as byte spans, an
`Identifiers` index that is small enough to cache without the tree. A use is a whole-word
occurrence of the name in the bytes whose span is exactly one of those tokens: so a word
inside a comment, a string, a template string's text or a character literal is never a
use (an expression inside `${…}` or an f-string's `{…}` is code, and is).
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass

import tree_sitter

from lantern.code import languages
from lantern.code.definitions import scan
from lantern.code.grammars import grammar_for
from lantern.code.pieces import pieces
from lantern.code.text import LineTable

_WORD = rb"[A-Za-z0-9_$\x80-\xff]"


@dataclass(frozen=True)
class Use:
    """One use: `line` 1-based (numbered as `read_file` numbers lines), `column` the
    0-based byte offset of the name in that line (UTF-8), `is_definition` when the token
    names a definition that `definitions()` reports."""

    line: int
    column: int
    is_definition: bool


@dataclass(frozen=True)
class Identifiers:
    """The byte spans of a tree's identifier tokens, sorted by start."""

    starts: array[int]
    ends: array[int]

    def nbytes(self) -> int:
        return (self.starts.itemsize + self.ends.itemsize) * len(self.starts)

    def has(self, start: int, end: int) -> bool:
        i = bisect_left(self.starts, start)
        return i < len(self.starts) and self.starts[i] == start and self.ends[i] == end


_queries: dict[str, tree_sitter.Query] = {}
_lock = threading.Lock()


def _query(language: str) -> tree_sitter.Query:
    found = _queries.get(language)
    if found is None:
        with _lock:
            found = _queries.get(language)
            if found is None:
                grammar = languages.grammar(language)
                names = sorted(grammar_for(language).identifiers)
                types = " ".join(f"({t})" for t in names if grammar.id_for_node_kind(t, True))
                found = tree_sitter.Query(grammar, f"[{types}] @i")
                _queries[language] = found
    return found


def identifiers(tree: tree_sitter.Tree, language: str) -> Identifiers:
    """The identifier tokens of `tree` (parsed as `language`)."""
    whole, leaves = pieces(tree)
    query = _query(language)
    types = grammar_for(language).identifiers
    nodes = [
        n for piece in whole for n in tree_sitter.QueryCursor(query).captures(piece).get("i", [])
    ]
    nodes.extend(leaf for leaf in leaves if leaf.type in types)
    spans = sorted((node.start_byte, node.end_byte) for node in nodes)
    return Identifiers(array("Q", (s for s, _ in spans)), array("Q", (e for _, e in spans)))


def find_uses(
    source: bytes,
    lines: LineTable,
    tokens: Identifiers,
    name_starts: frozenset[int],
    name: str,
) -> list[Use]:
    """The uses of `name` (a bare identifier) given a file's line table, identifier index
    and the starts of its definitions' names."""
    if not name:
        return []
    word = re.escape(name.encode("utf-8"))
    pattern = re.compile(rb"(?<!" + _WORD + rb")" + word + rb"(?!" + _WORD + rb")")
    found: list[Use] = []
    for match in pattern.finditer(source):
        start, end = match.span()
        if tokens.has(start, end):
            found.append(Use(lines.line(start), lines.column(start), start in name_starts))
    return found


def uses(source: bytes, language: str, name: str) -> list[Use]:
    """Every use of `name` as an identifier in `source`, in source order; never one in a
    comment or a string."""
    parsed = scan(source, language)
    tokens = identifiers(parsed.tree, language)
    return find_uses(source, parsed.lines, tokens, parsed.name_starts, name)
