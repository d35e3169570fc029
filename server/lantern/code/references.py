"""The uses of a name in a source file: identifier tokens whose text is the name.

One query (run in C) lists the identifier-like tokens of a tree as byte spans, an
`Identifiers` index that is small enough to cache without the tree. A use is a whole-word
occurrence of the name in the bytes whose span is exactly one of those tokens: so a word
inside a comment, a string, a template string's text or a character literal is never a
use (an expression inside `${…}` or an f-string's `{…}` is code, and is).
"""

from __future__ import annotations

import functools
import re
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
_WORD_BYTE = re.compile(_WORD)
_NAME = re.compile(_WORD + rb"+")


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
    """Where a tree's identifier tokens start, sorted. (Their ends need not be kept: a
    whole-word match that starts where an identifier starts ends where it ends, since
    identifier tokens are made of word characters.)"""

    starts: array[int]

    def nbytes(self) -> int:
        return self.starts.itemsize * len(self.starts)

    def has(self, start: int) -> bool:
        i = bisect_left(self.starts, start)
        return i < len(self.starts) and self.starts[i] == start


@functools.cache  # two threads may both compile it once; either result is the same
def _query(language: str) -> tree_sitter.Query:
    """One query capturing every identifier-like token type `language`'s grammar has."""
    grammar = languages.grammar(language)
    names = sorted(grammar_for(language).identifiers)
    types = " ".join(f"({t})" for t in names if grammar.id_for_node_kind(t, True))
    return tree_sitter.Query(grammar, f"[{types}] @i")


def identifiers(tree: tree_sitter.Tree, language: str) -> Identifiers:
    """The identifier tokens of `tree` (parsed as `language`)."""
    whole, leaves = pieces(tree)
    query = _query(language)
    types = grammar_for(language).identifiers
    nodes = [
        n for piece in whole for n in tree_sitter.QueryCursor(query).captures(piece).get("i", [])
    ]
    nodes.extend(leaf for leaf in leaves if leaf.type in types)
    starts = [node.start_byte for node in nodes]
    starts.sort()
    return Identifiers(array("Q", starts))


def find_uses(
    source: bytes,
    lines: LineTable,
    tokens: Identifiers,
    name_starts: frozenset[int],
    name: str,
) -> list[Use]:
    """The uses of `name` (a bare identifier) given a file's line table, identifier index
    and the starts of its definitions' names."""
    word = name.encode("utf-8")
    if not _NAME.fullmatch(word):
        return []  # not one identifier (`a.b`, `~A`, empty): no token is that text
    # The name first, so the regex engine scans for a literal; the byte before is
    # checked here (a lookbehind first would make it try every position).
    pattern = re.compile(re.escape(word) + rb"(?!" + _WORD + rb")")
    found: list[Use] = []
    for match in pattern.finditer(source):
        start = match.start()
        if start and _WORD_BYTE.fullmatch(source, start - 1, start):
            continue
        if tokens.has(start):
            found.append(Use(lines.line(start), lines.column(start), start in name_starts))
    return found


def uses(source: bytes, language: str, name: str) -> list[Use]:
    """Every use of `name` as an identifier in `source`, in source order; never one in a
    comment or a string."""
    parsed = scan(source, language)
    tokens = identifiers(parsed.tree, language)
    return find_uses(source, parsed.lines, tokens, parsed.name_starts, name)
