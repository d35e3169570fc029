"""A file's bytes as numbered lines: the capped read, the encoding, the line count.

Every reader of "line N of a file" goes through here (read_file and search by way of
`text.py`, and the references of an answer), so they agree on what line N is. Lines are
numbered as VS Code and the LSP number them: `\\r\\n`, `\\n` and a lone `\\r` each end a
line (`x\\r\\ny\\rz` is three lines), a last line without a line end counts, a BOM names
the encoding (UTF-8, or UTF-16/32 in either byte order), and a file without a BOM that
has a NUL byte in its first 8 KiB is binary. ripgrep counts `\\n` only: `ripgrep_lines`
and `breaks_before` turn its line numbers and match offsets into these.

Only bytes methods (C loops) and, where a chunk holds a CR, one linear regex touch the
bytes; a file without a CR costs what it did when lines were split on `\\n` alone.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable

from lantern.errors import ToolError

SNIFF_BYTES = 8192
MAX_LINES = 400  # the most lines one read shows (read_file's window; `lantern/info` says it)
_CHUNK = 1 << 16
_SMALL = 1 << 12  # where a chunk holds a lone CR, the wanted line end is sought in these
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE, whose BOM starts it
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)
_EOL = re.compile(rb"\r\n?|\n")  # a line end; matched where it starts, so linear
_LONE_CR = re.compile(rb"\r(?!\n)")  # one C scan: cheaper than counting CRLFs
_CR, _LF = 13, 10


def bom_encoding(data: bytes) -> tuple[str, int]:
    """The encoding a BOM at the start of `data` names, and the BOM's length; UTF-8 and 0
    without one."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return "utf-8", 0


def looks_binary(data: bytes) -> bool:
    """No BOM, and a NUL byte in the first SNIFF_BYTES: read_file refuses such a file."""
    return not data.startswith(BOM_PREFIXES) and b"\0" in data[:SNIFF_BYTES]


def binary_error(rel: str) -> ToolError:
    return ToolError("binary_file", f"{rel} looks binary (it contains NUL bytes)")


def read_capped(fd: int, cap: int, size_hint: int) -> bytes:
    """At most `cap` + 1 bytes of an open file, whatever st_size said: one byte more than
    the cap tells the caller the file is larger. `size_hint` (st_size) only sizes the
    first read. Blocking: call it on a worker thread from async code."""
    chunks: list[bytes] = []
    left = cap + 1
    want = min(left, size_hint + 1)
    while left > 0:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        want = min(left, _CHUNK)  # the file grew, or the hint was wrong
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def split_lines(data: bytes) -> list[bytes]:
    """`data` cut at every line end, the ends dropped; like `bytes.split(b"\\n")`, a text
    that ends with a line end gives a last empty piece."""
    if data.find(b"\r") >= 0:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data.split(b"\n")


def split_text(text: str) -> list[str]:
    """`split_lines` for decoded text (a UTF-16/32 file)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def ends_open(data: bytes) -> bool:
    """Whether `data` (not empty) ends inside a line: the last line has no line end."""
    return not data.endswith((b"\n", b"\r"))


def _lone_crs(data: bytes, start: int, end: int) -> int:
    """CRs in `data[start:end]` not followed by `\\n` there (a memchr when there is none)."""
    if data.find(b"\r", start, end) < 0 or _LONE_CR.search(data, start, end) is None:
        return 0  # no CR, or CRLFs only
    return data.count(b"\r", start, end) - data.count(b"\r\n", start, end)


def count_breaks(data: bytes, start: int = 0, end: int | None = None) -> int:
    """Line ends that start in `data[start:end]` (a `\\r\\n` cut by `end` counts, one cut
    by `start` does not)."""
    stop = len(data) if end is None else min(end, len(data))
    found = data.count(b"\n", start, stop) + _lone_crs(data, start, stop)
    if 0 < start < stop and data[start] == _LF and data[start - 1] == _CR:
        found -= 1
    return found


def breaks_before(data: bytes, pos: int) -> int:
    """Line ends wholly before byte `pos`: the 0-based line of `data` that `pos` is on."""
    found = count_breaks(data, 0, pos)
    if 0 < pos < len(data) and data[pos] == _LF and data[pos - 1] == _CR:
        found -= 1  # `pos` is the LF of a CRLF: still on the line that CRLF ends
    return found


def _cut(data: bytes, end: int) -> int:
    """`end`, moved one byte on when it would split a `\\r\\n`."""
    if end >= len(data):
        return len(data)
    return end + 1 if data[end] == _LF and data[end - 1] == _CR else end


def line_start(data: bytes, number: int, pos: int = 0, *, lone_cr: bool = True) -> int | None:
    """Byte index where 1-based line `number` starts (None past the end), chunk by chunk;
    counted from byte `pos`, the start of line 1. With `lone_cr=False`, lines end at
    `\\n` only, as ripgrep counts them."""
    left = number - 1
    step = _CHUNK
    while left > 0:
        if pos >= len(data):
            return None
        end = _cut(data, pos + step)  # chunks never split a CRLF
        lone = _lone_crs(data, pos, end) if lone_cr else 0
        found = data.count(b"\n", pos, end) + lone
        if found >= left:  # the wanted line end is in this chunk: what follows it
            if not lone:  # every line end here is, or ends with, a `\\n`
                return end - len(data[pos:end].split(b"\n", left)[-1])
            if step == _SMALL:  # (one byte more where `_cut` kept a CRLF whole)
                return end - len(_EOL.split(data[pos:end], left)[-1])
            step = _SMALL  # the regex only ever splits a small piece
            continue
        left -= found
        pos = end
    return pos if pos < len(data) else None


def line_end(data: bytes, pos: int) -> int:
    """Byte index of the line end of the line that starts at `pos` (len(data) if none)."""
    newline = data.find(b"\n", pos)
    stop = len(data) if newline < 0 else newline
    cr = data.find(b"\r", pos, stop)
    return stop if cr < 0 else cr


def lines_from(data: bytes, start: int, want: int) -> tuple[list[bytes], int]:
    """`want` lines (fewer at the end of `data`) from byte `start`, without their line
    ends, and the byte index after the last one's line end; copies only about as much
    as they hold."""
    span = _CHUNK
    while True:
        stop = _cut(data, start + span)
        piece = data[start:stop]
        lone = _lone_crs(piece, 0, len(piece))
        if stop >= len(data) or piece.count(b"\n") + lone >= want:
            break
        span *= 4
    if lone:
        parts = _EOL.split(piece, want)  # stops at the wanted line end
    else:
        parts = piece.split(b"\n", want)
        if piece.find(b"\r") >= 0:  # CRLF
            parts = [part.removesuffix(b"\r") for part in parts[:want]] + parts[want:]
    if len(parts) <= want:
        return parts, stop
    return parts[:want], stop - len(parts[-1])


def line_above(data: bytes, pos: int) -> int:
    """Where the line above the line that starts at byte `pos` (> 0) starts."""
    end = pos - 1  # the line end above; searched before it
    if end > 0 and data[end] == _LF and data[end - 1] == _CR:
        end -= 1
    span = 256
    while end > 0:  # windows that grow backwards: linear in the line's length
        low = max(0, end - span)
        found = max(data.rfind(b"\n", low, end), data.rfind(b"\r", low, end))
        if found >= 0:
            return found + 1
        end, span = low, span * 2
    return 0


def ripgrep_lines(data: bytes, numbers: Iterable[int]) -> dict[int, int]:
    """The editor line on which each of ripgrep's lines `numbers` starts (past the end
    left out). ripgrep ends lines at `\\n` only (and reads UTF-16/32 as UTF-8), so its
    line L starts on editor line L plus the lone CRs above it."""
    wanted = sorted({n for n in numbers if n >= 1})
    encoding, skip = bom_encoding(data)
    if encoding == "utf-8":
        text = data[skip:]
    else:
        text = data[skip:].decode(encoding, "replace").encode("utf-8", "replace")
    if text.find(b"\r") < 0:
        return {n: n for n in wanted}
    found: dict[int, int] = {}
    line, pos, lone = 1, 0, 0
    for n in wanted:
        start = line_start(text, n - line + 1, pos, lone_cr=False)
        if start is None or start >= len(text):
            break
        lone += text.count(b"\r", pos, start) - text.count(b"\r\n", pos, start)
        line, pos = n, start
        found[n] = n + lone
    return found


def lines_at(data: bytes, numbers: Iterable[int], cap: int) -> tuple[int, dict[int, bytes | str]]:
    """How many lines `data` holds and the lines `numbers` (1-based; past the end left
    out) as an editor holds them, without the line end: the bytes of a UTF-8 file, the
    decoded text of a UTF-16/32 one (invalid code units replaced).

    Of `data` longer than `cap` (a `read_capped` that hit the cap) only the complete
    lines of the first `cap` bytes count. A binary file raises `binary_file`.
    """
    capped = len(data) > cap
    data = data[:cap]
    encoding, skip = bom_encoding(data)
    if encoding != "utf-8":
        texts = split_text(data[skip:].decode(encoding, "replace"))
        if capped or texts[-1] == "":
            texts.pop()
        return len(texts), {n: texts[n - 1] for n in numbers if 1 <= n <= len(texts)}
    if looks_binary(data):
        raise binary_error("file")
    total = count_breaks(data, skip)
    if not capped and len(data) > skip and ends_open(data):
        total += 1
    found: dict[int, bytes | str] = {}
    line, pos = 1, skip  # `pos` is where line number `line` starts
    for n in sorted({n for n in numbers if 1 <= n <= total}):
        start = line_start(data, n - line + 1, pos)
        if start is None:  # not reached: line n <= total exists
            break
        line, pos = n, start
        found[n] = data[pos : line_end(data, pos)]
    return total, found
