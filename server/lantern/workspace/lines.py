"""A file's bytes as numbered lines: the capped read, the encoding, the line count.

Every reader of "line N of a file" goes through here (read_file and search by way of
`text.py`, and the references of an answer), so they agree on what line N is: lines are
split on `\\n`, a last line without `\\n` counts, a BOM names the encoding (UTF-8, or
UTF-16/32 in either byte order), and a file without a BOM that has a NUL byte in its
first 8 KiB is binary.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable

from lantern.errors import ToolError

SNIFF_BYTES = 8192
_CHUNK = 1 << 16
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE, whose BOM starts it
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)


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


def line_start(data: bytes, number: int, pos: int = 0) -> int | None:
    """Byte index where 1-based line `number` starts (None past the end), chunk by chunk;
    counted from byte `pos`, the start of line 1."""
    left = number - 1
    while left > 0:
        if pos >= len(data):
            return None
        end = min(pos + _CHUNK, len(data))
        found = data.count(b"\n", pos, end)
        if found >= left:
            rest = data[pos:end].split(b"\n", left)[-1]  # what follows the wanted newline
            return end - len(rest)
        left -= found
        pos = end
    return pos if pos < len(data) else None


def lines_at(data: bytes, numbers: Iterable[int], cap: int) -> tuple[int, dict[int, bytes | str]]:
    """How many lines `data` holds and the lines `numbers` (1-based; past the end left
    out) as an editor holds them, without the line break: the bytes of a UTF-8 file, the
    decoded text of a UTF-16/32 one (invalid code units replaced).

    Of `data` longer than `cap` (a `read_capped` that hit the cap) only the complete
    lines of the first `cap` bytes count. A binary file raises `binary_file`.
    """
    capped = len(data) > cap
    data = data[:cap]
    encoding, skip = bom_encoding(data)
    if encoding != "utf-8":
        texts = data[skip:].decode(encoding, "replace").split("\n")
        if capped or texts[-1] == "":
            texts.pop()
        return len(texts), {
            n: texts[n - 1].removesuffix("\r") for n in numbers if 1 <= n <= len(texts)
        }
    if looks_binary(data):
        raise binary_error("file")
    total = data.count(b"\n")
    if not capped and len(data) > skip and not data.endswith(b"\n"):
        total += 1
    found: dict[int, bytes | str] = {}
    line, pos = 1, skip  # `pos` is where line number `line` starts
    for n in sorted({n for n in numbers if 1 <= n <= total}):
        start = line_start(data, n - line + 1, pos)
        if start is None:  # not reached: line n <= total exists
            break
        line, pos = n, start
        stop = data.find(b"\n", pos)
        found[n] = data[pos : len(data) if stop < 0 else stop].removesuffix(b"\r")
    return total, found
