"""Ignore patterns with several `**`, matched component by component in linear time.

pathspec turns `**/a/**/b/**/c` into `^(?:.+/)?a(?:/.+)?/b(?:/.+)?/c…`: each `.+`
can start anywhere, so Python's backtracking tries O(n^k) splits of an n-character
path for k of them. One such line in a `.gitignore` and a 2,000-component path cost
over 20 s of CPU. Here the same regex is cut into groups of component patterns
(split at each `**`), and each group is placed at the earliest component where it
fits: placing a group earlier never leaves less room for the ones after it, so this
finds a match whenever one exists, in O(path components x pattern components).
"""

from __future__ import annotations

import re

_UNANCHORED = "^(?:.+/)?"
_MIDDLE = "(?:/.+)?/"  # `/**/`
_SLASH_CLASS = "[^/]"
_HOLE = "\x00"  # stands for `[^/]` while the body is cut at slashes


class ComponentGlob:
    """A drop-in for a compiled ignore regex (`match(text) -> bool`) for one shape:
    `body` + `end`, where `end` is `/?\\Z` (file or folder), `/\\Z` (folder) or
    `.+\\Z` (what is inside)."""

    __slots__ = ("_anchored", "_end", "_groups", "needs")

    def __init__(self, anchored: bool, groups: list[list[re.Pattern[str]]], end: str) -> None:
        self._anchored = anchored
        self._groups = groups
        self._end = end
        # Names the path must hold for a match: checked first, against the set of the
        # path's names, so many rules cost little where their names are absent.
        self.needs = frozenset(
            text
            for group in groups
            for pattern in group
            if (text := _literal(pattern.pattern.removesuffix(r"\Z"))) is not None
        )

    @classmethod
    def build(cls, body: str, end: str) -> ComponentGlob | None:
        """The matcher for `body + end`, or None for a shape it does not know (then the
        regex is used as it is)."""
        if body.count(".+") < 2 or end not in ("/?\\Z", "/\\Z", ".+\\Z"):
            return None
        anchored = not body.startswith(_UNANCHORED)
        body = body[len(_UNANCHORED) :] if not anchored else body.removeprefix("^")
        if end == ".+\\Z":
            if not body.endswith("/"):
                return None
            body = body[:-1]
        groups: list[list[re.Pattern[str]]] = []
        for group in body.replace(_SLASH_CLASS, _HOLE).split(_MIDDLE):
            parts = group.split("/")
            if not group or any(not p or ".+" in p or "(" in p for p in parts):
                return None
            try:
                groups.append([re.compile(p.replace(_HOLE, _SLASH_CLASS) + r"\Z") for p in parts])
            except re.error:
                return None
        return cls(anchored, groups, end)

    def match(self, text: str) -> bool:
        is_dir = text.endswith("/")
        if self._end == "/\\Z" and not is_dir:
            return False
        comps = text[:-1].split("/") if is_dir else text.split("/")
        if self._end == ".+\\Z":  # every group in order, then at least one more component
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
        return _fits(last, comps, limit)


def _literal(fragment: str) -> str | None:
    """The name a component pattern stands for, or None when it has wildcards."""
    text = re.sub(r"\\(.)", r"\1", fragment)
    return text if re.escape(text) == fragment else None


def _fits(group: list[re.Pattern[str]], comps: list[str], at: int) -> bool:
    return all(p.match(comps[at + i]) is not None for i, p in enumerate(group))


def _first_fit(
    group: list[re.Pattern[str]], comps: list[str], pos: int, last_start: int, *, fixed: bool
) -> int:
    """The first start in pos..last_start (only pos when `fixed`) where `group` fits, or -1."""
    for at in range(pos, (pos if fixed else last_start) + 1):
        if at > last_start:
            return -1
        if _fits(group, comps, at):
            return at
    return -1
