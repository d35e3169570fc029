"""Where the text redacted with some shown lines of a file starts (`text.py`).

A shown line is redacted with the lines back to the nearest unindented one above it (not
blank, no space or tab first), so that a YAML value below its key, or a value on the
lines below `NAME = (`, is redacted with its key. At most MAX_CONTEXT_LINES lines are
looked at: when all of them are indented or blank, the context starts at the topmost of
them, and the caller must redact the whole text if a YAML key may be above that
(`YamlHint`, `yaml_above`).

The lines above are walked back one `rfind` at a time, the bytes never split, so
finding the context of a hit costs what the lines between it and its context cost,
not what the file does. Shown lines asked in order share the work: the walk for one
stops at the line asked before, whose answer then holds for the lines between them.
"""

from __future__ import annotations

from dataclasses import dataclass

from lantern.workspace.lines import line_above, line_start, split_lines
from lantern.workspace.redact.redactor import YAML_HINT

MAX_CONTEXT_LINES = 256
_INDENTED_OR_BLANK = (b" ", b"\t", b"\r", b"\n")


@dataclass(frozen=True)
class Context:
    """Where the context of a shown line starts."""

    line: int  # 0-based
    start: int  # byte index
    reached: bool  # False: every line of MAX_CONTEXT_LINES above was indented or blank


class ContextAbove:
    """The context of lines of `data`, asked in increasing order of line."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._up = line_above if data.find(b"\r") >= 0 else _line_above
        self._last: tuple[int, int, Context] | None = None  # the line asked before

    def __call__(self, line: int, start: int) -> Context:
        """The context of line `line` (0-based), which starts at byte `start`."""
        found = self._find(line, start)
        self._last = (line, start, found)
        return found

    def _find(self, line: int, start: int) -> Context:
        data = self._data
        floor = 0 if self._last is None else self._last[1]
        pos, up = start, 0
        while pos > floor and up < MAX_CONTEXT_LINES:  # up to the line asked before
            pos, up = self._up(data, pos), up + 1
            if data[pos : pos + 1] not in _INDENTED_OR_BLANK:
                return Context(line - up, pos, True)
        if pos > floor:
            return Context(line - up, pos, False)
        if self._last is None:  # the first line of the text: where any context stops
            return Context(0, 0, True)
        before = self._last[2]  # above the line asked before: its answer
        if before.reached and line - before.line <= MAX_CONTEXT_LINES:
            return before
        top = line - MAX_CONTEXT_LINES  # at or below `before.line`
        at = line_start(data, top - before.line + 1, before.start)
        assert at is not None  # a line above `line`
        return Context(top, at, False)


def _line_above(data: bytes, pos: int) -> int:
    """`line_above` in a text without a CR."""
    return data.rfind(b"\n", 0, pos - 1) + 1


def yaml_above(head: bytes) -> bool:
    """Whether `YAML_HINT` matches `head` (whose `^` and `$` know only `\\n` and `\\r\\n`)."""
    if head.find(b"\r") >= 0:
        head = b"\n".join(split_lines(head))
    return YAML_HINT.search(head) is not None


class YamlHint:
    """Whether `YAML_HINT` matches lines [0, n) of a text, for any n, searched once: the
    pattern never crosses a line, so that is whether its first match is above n."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._first: int | None = None  # line of the first match; past the last when none

    def above(self, n: int) -> bool:
        if self._first is None:
            text = self._data
            if text.find(b"\r") >= 0:  # `^` and `$` know only `\n` (and `\r\n`)
                text = b"\n".join(split_lines(text))
            match = YAML_HINT.search(text)
            self._first = len(text) + 1 if match is None else text.count(b"\n", 0, match.start())
        return self._first < n
