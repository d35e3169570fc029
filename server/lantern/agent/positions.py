"""Lengths of text in the units an LSP client counts positions in.

An LSP client and server agree on one position encoding at `initialize`:
`utf-8` (bytes), `utf-16` (code units, the default and what VS Code uses) or
`utf-32` (code points). A reference's range ends at the length of its last
line, and its `span` points into the answer, so both are measured once in all
three units here and the LSP layer picks the negotiated one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


@dataclass(frozen=True)
class Units:
    """One length (or offset) of text in UTF-8 bytes, UTF-16 code units and code points."""

    utf8: int = 0
    utf16: int = 0
    utf32: int = 0

    @classmethod
    def of(cls, text: str) -> Units:
        # `surrogatepass`: a lone surrogate from a decoded file or a model still has a length.
        utf16 = len(text.encode("utf-16-le", "surrogatepass")) // 2
        return cls(len(text.encode("utf-8", "surrogatepass")), utf16, len(text))

    def __add__(self, other: Units) -> Units:
        return Units(self.utf8 + other.utf8, self.utf16 + other.utf16, self.utf32 + other.utf32)

    def get(self, encoding: str) -> int:
        """The length in `encoding` (an LSP `PositionEncodingKind`); unknown ones are UTF-16."""
        if encoding == UTF8:
            return self.utf8
        if encoding == UTF32:
            return self.utf32
        return self.utf16


ZERO = Units()


@dataclass(frozen=True)
class Position:
    """LSP's `Position`: a 0-based line and a character offset in the negotiated unit."""

    line: int
    character: int


@dataclass(frozen=True)
class Range:
    """LSP's `Range`, end exclusive."""

    start: Position
    end: Position


def offsets(text: str, positions: Sequence[int]) -> list[Units]:
    """Each code-point offset of `text` in all units; one pass, in any order of `positions`."""
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    out = [ZERO] * len(positions)
    done, at = ZERO, 0
    for i in order:
        pos = positions[i]
        done += Units.of(text[at:pos])
        at = pos
        out[i] = done
    return out


def line_units(line: bytes | str) -> Units:
    """The length of one line of a file as `lines.lines_at` gives it: the bytes of a UTF-8
    file count as the editor holds them (an invalid byte is one byte, not a U+FFFD's
    three); a decoded UTF-16/32 line is measured as text."""
    if isinstance(line, str):
        return Units.of(line)
    units = Units.of(line.decode("utf-8", "replace"))
    return Units(len(line), units.utf16, units.utf32)
