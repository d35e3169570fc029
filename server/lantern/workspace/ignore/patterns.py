"""Gitignore patterns, translated and matched here, in time linear in the path.

`parse_line` reads one ignore-file line (git's rules: `#` comments, `!` negation,
trailing spaces unless escaped, a leading or inner `/` anchors, a trailing `/` means
folders only, `**` spans folders, `*`/`?`/`[...]` stay within a name, `\\` escapes)
and gives a `Pattern`: groups of name globs, split at each `**`.

Nothing here is a backtracking regex over the whole path:
- a `NameGlob` (one path component) is cut at its `*`s into fixed-length pieces; the
  first piece must start the name, the last must end it, and each middle piece is
  placed at its earliest fit. Placing a piece earlier never leaves less room for the
  ones after it, so this finds a match whenever one exists, in O(name x pattern):
  `*a*a*a*a*b` against a million `a`s costs one pass, not n^k tries.
- a `PathGlob` does the same one level up: each group of name globs is placed at the
  earliest component where it fits, in O(path components x pattern components).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# What follows the last name glob: the path itself (file or folder), a folder only, or
# something inside it (`dir/**`).
End = Literal["any", "dir", "inside"]

_ANY_CHAR = "[^/]"
# git's character classes (`[[:digit:]]`), as ranges of a regex class
_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class BadPattern(ValueError):
    """A line git would not use (an unclosed `[`, a lone trailing `\\`)."""


def _bracket(glob: str, i: int) -> tuple[str, int]:
    """The regex class for the bracket expression opening at `glob[i]` (`[`), and the
    index after its `]`."""
    i += 1
    negate = i < len(glob) and glob[i] in "!^"
    i += negate
    items: list[str] = []
    first = True
    while i < len(glob) and (glob[i] != "]" or first):
        first = False
        close = glob.find(":]", i + 2) if glob.startswith("[:", i) else -1
        if close > 0:
            name = glob[i + 2 : close]
            if name not in _CLASSES:
                raise BadPattern(f"unknown character class in {glob!r}")
            items.append(_CLASSES[name])
            i = close + 2
            continue
        char, i = _bracket_char(glob, i)
        if glob.startswith("-", i) and i + 1 < len(glob) and glob[i + 1] != "]":
            high, i = _bracket_char(glob, i + 1)
            if char <= high:
                items.append(f"{re.escape(char)}-{re.escape(high)}")
        else:
            items.append(re.escape(char))
    if i >= len(glob):
        raise BadPattern(f"unclosed [ in {glob!r}")
    body = "".join(items)
    if not body:  # a range that holds nothing (`[z-a]`)
        return ("[^\\s\\S]" if not negate else _ANY_CHAR), i + 1
    return ("[^/" if negate else "[") + body + "]", i + 1


def _bracket_char(glob: str, i: int) -> tuple[str, int]:
    if glob[i] == "\\":
        if i + 1 >= len(glob):
            raise BadPattern(f"lone \\ in {glob!r}")
        return glob[i + 1], i + 2
    return glob[i], i + 1


_Piece = list[tuple[str, str | None]]  # (regex atom, the literal character it stands for)


def _glob_pieces(glob: str) -> list[_Piece]:
    """A name glob cut at its `*`s: the atoms between them (a run of `*` is one `*`)."""
    pieces: list[_Piece] = [[]]
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
            i += 1
        elif char == "?":
            pieces[-1].append((_ANY_CHAR, None))
            i += 1
        elif char == "[":
            atom, i = _bracket(glob, i)
            pieces[-1].append((atom, None))
        else:
            char, i = _bracket_char(glob, i)
            pieces[-1].append((re.escape(char), char))
    return pieces


def _plain(piece: _Piece) -> str | None:
    """The text a piece of literal characters stands for; None when it holds a wildcard."""
    return "".join(c or "" for _, c in piece) if all(c for _, c in piece) else None


class NameGlob:
    """One path component's glob (no `/`), matched in linear time."""

    __slots__ = ("_compiled", "_sources", "literal", "prefix", "suffix")

    def __init__(self, glob: str) -> None:
        pieces = _glob_pieces(glob)
        texts = [_plain(piece) for piece in pieces]
        self._sources = [("".join(a for a, _ in p), len(p)) for p in pieces]
        self._compiled: list[tuple[re.Pattern[str], int]] | None = None
        # The plain text this glob stands for, or what it starts/ends with around one `*`.
        self.literal = texts[0] if len(pieces) == 1 else None
        two = len(pieces) == 2
        self.prefix = texts[0] if two and texts[0] and not pieces[1] else None
        self.suffix = texts[1] if two and texts[1] and not pieces[0] else None

    def _pieces(self) -> list[tuple[re.Pattern[str], int]]:
        if self._compiled is None:  # compiled on first use: most of a big file never is
            self._compiled = [(re.compile(source), size) for source, size in self._sources]
        return self._compiled

    def match(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        pieces = self._pieces()
        if len(pieces) == 1:
            regex, size = pieces[0]
            return len(name) == size and regex.match(name) is not None
        (head, head_size), (tail, tail_size) = pieces[0], pieces[-1]
        end = len(name) - tail_size
        if end < head_size or head.match(name) is None or tail.match(name, end) is None:
            return False
        pos = head_size
        for regex, _ in pieces[1:-1]:  # each at its earliest fit
            found = regex.search(name, pos, end)
            if found is None:
                return False
            pos = found.end()
        return True


@dataclass(frozen=True)
class Pattern:
    """One ignore line: `ignores` False for `!`; `groups` of name globs joined by `**`."""

    ignores: bool
    anchored: bool  # the first group starts at the ignore file's folder
    groups: tuple[tuple[NameGlob, ...], ...]  # empty: every path (`**`) or folder (`**/`)
    end: End


def parse_line(line: str) -> Pattern | None:
    """The pattern on one ignore-file line, or None for a blank line, a comment or a
    line git skips."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    ignores = not text.startswith("!")
    segments, folder_only = _segments(text.removeprefix("!"))
    if not segments:
        return None
    if segments == ["**"]:
        return Pattern(ignores, False, (), "dir" if folder_only else "any")
    anchored = segments[0] != "**"
    end: End = "any"
    if segments[-1] == "**":
        end = "dir" if folder_only else "inside"
        segments.pop()
    try:
        groups = _groups(segments[0 if anchored else 1 :])
    except BadPattern:
        return None
    return Pattern(ignores, anchored, groups, end)


def _segments(pattern: str) -> tuple[list[str], bool]:
    """The names of a pattern (without its `!`) between its `/`s, with `**` in front when
    it matches at any depth, for a trailing `/`, and never twice in a row; and whether
    the pattern is for folders only (a trailing `/`)."""
    segments = pattern.split("/")
    folder_only = segments[-1] == ""
    if segments[0] == "":
        del segments[0]  # `/x`: at this folder only
    elif len(segments) - folder_only == 1 and segments[0] != "**":
        segments.insert(0, "**")  # `x` or `x/`: at any depth
    if segments and segments[-1] == "":
        segments[-1] = "**"
    kept = [s for i, s in enumerate(segments) if s != "**" or segments[i - 1 : i] != ["**"]]
    return kept, folder_only


def _groups(segments: list[str]) -> tuple[tuple[NameGlob, ...], ...]:
    """Name globs in groups split at each `**`; raises `BadPattern`."""
    groups: list[list[NameGlob]] = [[]]
    for segment in segments:
        if segment == "**":
            groups.append([])
        else:
            groups[-1].append(NameGlob(segment))
    return tuple(map(tuple, groups))


class PathGlob:
    """A pattern matched against `rel` (a file) or `rel/` (a folder), relative to the
    ignore file's folder."""

    __slots__ = ("_anchored", "_end", "_groups", "depth", "needs")

    def __init__(self, pattern: Pattern) -> None:
        self._anchored = pattern.anchored
        self._groups = pattern.groups
        self._end = pattern.end
        # Names the path must hold for a match: checked first, against the set of the
        # path's names, so many rules cost little where their names are absent.
        self.needs = frozenset(
            glob.literal for group in self._groups for glob in group if glob.literal is not None
        )
        # The number of components of every path it matches, when that is fixed (`/a/*.c`).
        fixed = self._anchored and len(self._groups) == 1 and self._end != "inside"
        self.depth = len(self._groups[0]) if fixed else None

    def match(self, text: str) -> bool:
        is_dir = text.endswith("/")
        if self._end == "dir" and not is_dir:
            return False
        if not self._groups:  # `**` or `**/`
            return True
        comps = text[:-1].split("/") if is_dir else text.split("/")
        found = self._before_last(comps)
        return found if isinstance(found, bool) else found.match(comps[-1])

    def in_folder(self, folder: list[str]) -> NameGlob | bool:
        """For the files directly in `folder` (relative to the ignore file): True when
        this pattern matches every one, False when none, else the glob a file's name must
        match. `match(folder/name)` equals this for every name."""
        if self._end == "dir":
            return False
        if not self._groups:
            return True
        return self._before_last([*folder, ""])  # the name is looked at by the last glob only

    def _before_last(self, comps: list[str]) -> NameGlob | bool:
        """The match of `comps` as far as it goes without looking at the last component:
        False, True (it holds whatever that is) or the glob the last component must match.
        Every group but the one that ends the path is placed before the last component."""
        if self._end == "inside":  # every group in order, then at least one more component
            placed, last, limit = self._groups, None, len(comps) - 1
        else:  # the last group ends the path
            placed, last = self._groups[:-1], self._groups[-1]
            limit = len(comps) - len(last)
        pos = 0
        for i, group in enumerate(placed):
            fixed = self._anchored and i == 0
            at = _first_fit(group, comps, pos, limit - len(group), fixed=fixed)
            if at < 0:
                return False
            pos = at + len(group)
        if last is None:
            return True
        if limit < pos or (self._anchored and not placed and limit != 0):
            return False
        return _fits(last[:-1], comps, limit) and last[-1]


def _fits(group: tuple[NameGlob, ...], comps: list[str], at: int) -> bool:
    return all(glob.match(comps[at + i]) for i, glob in enumerate(group))


def _first_fit(
    group: tuple[NameGlob, ...], comps: list[str], pos: int, last_start: int, *, fixed: bool
) -> int:
    """The first start in pos..last_start (only pos when `fixed`) where `group` fits, or -1."""
    for at in range(pos, (pos if fixed else last_start) + 1):
        if at > last_start:
            return -1
        if _fits(group, comps, at):
            return at
    return -1
