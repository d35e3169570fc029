"""Bytes to the editor's lines, and a header shown on one line.

Lines are numbered as `read_file` numbers them: `\\r\\n`, `\\n` and a lone `\\r` each end
a line, so a definition's lines and a use's line match what the read path shows.
"""

from __future__ import annotations

import operator
import re
from array import array
from bisect import bisect_right
from itertools import accumulate, repeat

_SPACE = re.compile(r"\s+")
SIGNATURE_CHARS = 240
_HEAD_BYTES = 16 * SIGNATURE_CHARS  # of a long header, looked at first
_CUT_CHARS = 4  # at the end of a cut start, characters that may differ from the whole's


class LineTable:
    """Byte offsets to 1-based line numbers and byte columns."""

    __slots__ = ("_starts",)

    def __init__(self, source: bytes) -> None:
        # Same length, every line end one `\n`: `\r\n` -> ` \n`, then a lone `\r` -> `\n`.
        ends = source.replace(b"\r\n", b" \n").replace(b"\r", b"\n") if b"\r" in source else source
        lengths = map(operator.add, map(len, ends.split(b"\n")), repeat(1))
        self._starts: array[int] = array("Q", accumulate(lengths, initial=0))
        self._starts.pop()  # the start past the last line

    def line(self, offset: int) -> int:
        """The 1-based line holding the byte at `offset`."""
        return bisect_right(self._starts, offset)

    def last_line(self, start: int, end: int) -> int:
        """The line of the last byte of the span [start, end)."""
        return self.line(max(start, end - 1))

    def nbytes(self) -> int:
        """What the table keeps in memory, roughly."""
        return self._starts.itemsize * len(self._starts)

    def column(self, offset: int) -> int:
        """The 0-based byte column of `offset` in its line."""
        return offset - self._starts[self.line(offset) - 1]


def _collapsed(raw: bytes) -> str:
    return _SPACE.sub(" ", raw.decode("utf-8", "replace")).strip()


def one_line(raw: bytes) -> str:
    """`raw` decoded, whitespace runs collapsed to one space, cut to 240 characters.
    Of a long `raw` (a table's whole declaration), a start is enough when it alone makes
    more than 240 characters: only its last few can differ from the whole's (a
    character or a whitespace run cut in two), and those are cut off."""
    if len(raw) > _HEAD_BYTES:
        head = _collapsed(raw[:_HEAD_BYTES])
        if len(head) > SIGNATURE_CHARS + _CUT_CHARS:
            return head[: SIGNATURE_CHARS - 1] + "…"
    text = _collapsed(raw)
    if len(text) > SIGNATURE_CHARS:
        return text[: SIGNATURE_CHARS - 1] + "…"
    return text
