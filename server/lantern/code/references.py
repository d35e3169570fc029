"""The uses of a name in a source file: identifier tokens whose text is the name.

The name is looked for in the bytes first, as a whole word. Only over the spans of those
occurrences, a batch at a time, a query (run in C) lists the identifier tokens whose
text is the name (`#eq?`): no object is made for any other identifier, and the search
stops once it has uses on as many lines as will be shown. A word inside a comment, a
string, a template string's text or a character literal is never a use (an expression
inside `${…}` or an f-string's `{…}` is code, and is). The query stops `code/deep.py`'s
MAX_DEPTH levels down; `FileUses.unsearched` says when the name occurs where it did not
look.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from lantern.code import deep, languages
from lantern.code.definitions import Scan, Unlisted, named_within, scan_tree
from lantern.code.grammars import grammar_for
from lantern.code.pieces import pieces
from lantern.code.text import LineTable

_WORD = rb"[A-Za-z0-9_$\x80-\xff]"
_WORD_BYTE = re.compile(_WORD)
_NAME = re.compile(_WORD + rb"+")
# Occurrences one query looks up: the first batch, doubling up to the last size. Two
# occurrences farther apart than _GAP bytes go to separate queries, so the identifiers
# between them are not looked at.
_FIRST_BATCH = 256
_LAST_BATCH = 1 << 16
_GAP = 4096


@dataclass(frozen=True)
class Use:
    """One use: `line` 1-based (numbered as `read_file` numbers lines), `column` the
    0-based byte offset of the name in that line (UTF-8), `is_definition` when the token
    names a definition that `definitions()` reports."""

    line: int
    column: int
    is_definition: bool


@dataclass(frozen=True)
class FileUses:
    """A file's uses of a name, in source order; `unsearched`: the first line of code
    nested too deep to search when the name occurs there or after it where no use was
    found (0: none)."""

    uses: list[Use]
    unsearched: int = 0


@functools.lru_cache(maxsize=64)  # two threads may both compile one; either is the same
def _query(language: str, name: str) -> tree_sitter.Query:
    """The identifier-like tokens of `language` whose text is `name` (a checked word)."""
    grammar = languages.grammar(language)
    names = sorted(grammar_for(language).identifiers)
    types = " ".join(f"({t})" for t in names if grammar.id_for_node_kind(t, True))
    return tree_sitter.Query(grammar, f'([{types}] @i (#eq? @i "{name}"))')


class _Tokens:
    """The identifier tokens of one word in a tree, looked up a byte span at a time."""

    def __init__(self, tree: tree_sitter.Tree, language: str, source: bytes, word: bytes):
        whole, leaves = pieces(tree)
        self._query = _query(language, word.decode("utf-8"))
        self._source = source
        self._word = word
        self._pieces = sorted(whole, key=lambda n: n.start_byte)
        self._ends = [piece.end_byte for piece in self._pieces]
        types = grammar_for(language).identifiers
        self.leaves = {
            leaf.start_byte
            for leaf in leaves
            if leaf.type in types and source[leaf.start_byte : leaf.end_byte] == word
        }

    def starts(self, low: int, high: int) -> set[int]:
        """Where the word's identifier tokens in [low, high) start."""
        found: set[int] = set()
        for at in range(bisect_right(self._ends, low), len(self._pieces)):
            piece = self._pieces[at]
            if piece.start_byte >= high:
                break
            cursor = deep.cursor(self._query)
            cursor.set_byte_range(low, high)
            for node in cursor.captures(piece).get("i", []):
                if self._source[node.start_byte : node.end_byte] == self._word:
                    found.add(node.start_byte)
        return found


def _occurrences(source: bytes, word: bytes) -> Iterator[int]:
    """Where `word` stands as a whole word in `source`."""
    # The name first, so the regex engine scans for a literal; the byte before is
    # checked here (a lookbehind first would make it try every position).
    pattern = re.compile(re.escape(word) + rb"(?!" + _WORD + rb")")
    for match in pattern.finditer(source):
        start = match.start()
        if not (start and _WORD_BYTE.fullmatch(source, start - 1, start)):
            yield start


def _batches(starts: Iterator[int]) -> Iterator[list[int]]:
    """The occurrences in batches: each full one twice as long as the one before (up to
    _LAST_BATCH), and a new one after a gap of more than _GAP bytes."""
    size = _FIRST_BATCH
    batch: list[int] = []
    for start in starts:
        if batch and (len(batch) == size or start - batch[-1] > _GAP):
            if len(batch) == size:
                size = min(2 * size, _LAST_BATCH)
            yield batch
            batch = []
        batch.append(start)
    if batch:
        yield batch


def search(
    scanned: Scan,
    tree: tree_sitter.Tree,
    language: str,
    name: str,
    max_lines: int | None = None,
) -> FileUses:
    """The uses of `name` (a bare identifier) in a scanned file, given its tree: all of
    them, or those on the first `max_lines` lines with uses."""
    source, lines = scanned.source, scanned.lines
    word = name.encode("utf-8")
    if not _NAME.fullmatch(word):
        return FileUses([])  # not one identifier (`a.b`, `~A`, empty): no token is that text
    tokens = _Tokens(tree, language, source, word)
    found: list[Use] = []
    line_count, last_line, unsearched = 0, 0, 0
    for batch in _batches(_occurrences(source, word)):
        hits = tokens.starts(batch[0], batch[-1] + len(word))
        for start in batch:
            if start not in hits and start not in tokens.leaves:
                if scanned.deep_from is not None and start >= scanned.deep_from:
                    unsearched = unsearched or lines.line(scanned.deep_from)
                continue
            line = lines.line(start)
            if line != last_line:
                if line_count == max_lines:
                    return FileUses(found, unsearched)
                line_count, last_line = line_count + 1, line
            found.append(Use(line, lines.column(start), start in scanned.name_starts))
    return FileUses(found, unsearched)


def naming(scanned: Scan, name: str) -> list[Use]:
    """The uses of `name` that name a definition, found without a tree: the occurrences
    that start where a definition's name does."""
    word = name.encode("utf-8")
    if not _NAME.fullmatch(word):
        return []
    lines = scanned.lines
    return [
        Use(lines.line(start), lines.column(start), True)
        for start in _occurrences(scanned.source, word)
        if start in scanned.name_starts
    ]


def find_uses(source: bytes, language: str, name: str, max_lines: int | None = None) -> FileUses:
    """The uses of `name` in `source`: all of them, or those on the first `max_lines`
    lines with uses."""
    scanned, tree = scan_tree(source, language)
    return search(scanned, tree, language, name, max_lines)


def quick_uses(source: bytes, language: str, name: str, max_lines: int | None = None) -> FileUses:
    """As `find_uses`, without listing the file's definitions: only the definitions around
    the name's occurrences are found (`definitions.named_within`), for `is_definition`."""
    word = name.encode("utf-8")
    if not _NAME.fullmatch(word):
        return FileUses([])
    tree = languages.parse(source, language)
    lines = LineTable(source)
    spans = [(b[0], b[-1] + len(word)) for b in _batches(_occurrences(source, word))]
    named = named_within(tree, source, lines, language, spans)
    if named is None:
        return search(scan_tree(source, language)[0], tree, language, name, max_lines)
    scanned = Scan(source, lines, [], named, Unlisted(), deep.first_beyond(pieces(tree)[0]))
    return search(scanned, tree, language, name, max_lines)


def uses(source: bytes, language: str, name: str) -> list[Use]:
    """Every use of `name` as an identifier in `source`, in source order; never one in a
    comment or a string."""
    return find_uses(source, language, name).uses
