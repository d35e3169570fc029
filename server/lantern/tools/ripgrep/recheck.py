"""Search never reports a match that lies, even partly, inside a redacted secret.

Every hit line is shown redacted, but whether a line is a hit at all must not depend
on a secret either, or patterns like `ghp_.{4}[A-Z]` would rebuild a token one
character at a time. ripgrep finds candidates in the real file; a candidate line
that redaction changed is searched again, by ripgrep with the same pattern and case,
in its redacted form, and is a hit only when a match there keeps clear of every
changed part (the markers, and any other text that is not the file's own): not
inside one, not touching one, since `\\b` or `$` next to a marker could see a
character that differs from the file's.

A match clear of the changed parts has one character of the file's own text on each
side, so the same match exists in the real line: the recheck only ever removes
candidates, and what is shown is decided by the redacted text alone. Matching the
redacted text and then dropping only the matches that overlap a secret in the real
text would not do: a match that starts inside a secret can swallow text after it
(`X.{12} foo|foo`), so which matches remain would still tell about the secret.

Lines with a lone CR (an editor line inside one of ripgrep's lines) are always
rechecked one editor line at a time: a match across the CR from a secret on the
line before must not make the next line a hit.

The recheck is one rg run for a batch of such lines, from many files at once (up to
2,000 lines or 4 MiB, `hits.Collector`), bounded like every rg run (60 s, 4 GiB);
lines it does not decide (a timeout, an event over MAX_EVENT_BYTES) are no hits.
Cost: a search whose hits all sit on lines with secrets pays one rg start (about
10 ms) per batch, not per file.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import threading
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import IO

from lantern.tools.ripgrep import process as ripgrep

try:
    import resource
except ImportError:  # native Windows
    resource = None  # type: ignore[assignment]

_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]{1,40}+\]")
_REPLACED = "\ufffd"  # stands for bytes that were not UTF-8: not the file's text either
MAX_EVENT_BYTES = 16 << 20  # one rg event (a line with millions of submatches: no hit)


def changed_spans(original: str, redacted: str) -> list[tuple[int, int]]:
    """The character spans of `redacted` that are not the text of `original` (a marker,
    a removed literal, a replaced byte); empty when the two are the same.

    The text between markers must be found in `original`, in order, the first piece at
    its start and the last at its end; if it is not (a rule removed text without a
    marker), everything from the first to the last difference counts as changed.
    """
    if original == redacted:
        return []
    marks = [m.span() for m in _MARKER.finditer(redacted)]
    if not _pieces_found(original, redacted, marks):
        head = _common_prefix(original, redacted)
        room = min(len(original), len(redacted)) - head
        tail = _common_suffix(original, redacted, room)
        marks = [(head, len(redacted) - tail)]
    pos = redacted.find(_REPLACED)
    while pos >= 0:
        marks.append((pos, pos + 1))
        pos = redacted.find(_REPLACED, pos + 1)
    return sorted(marks)


def _pieces_found(original: str, redacted: str, marks: list[tuple[int, int]]) -> bool:
    if not marks:
        return False
    starts = [0, *(end for _, end in marks)]
    ends = [*(start for start, _ in marks), len(redacted)]
    if not original.startswith(redacted[: ends[0]]):
        return False
    if not original.endswith(redacted[starts[-1] :]):
        return False
    at = ends[0]
    for start, end in zip(starts[1:-1], ends[1:-1], strict=True):
        found = original.find(redacted[start:end], at + 1)  # after a secret of 1+ characters
        if found < 0:
            return False
        at = found + end - start
    return len(original) - (len(redacted) - starts[-1]) > at


def _common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search over slice compares (C loops)
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, most: int) -> int:
    low, high = 0, most
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, overlapping ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _byte_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint character spans of `text` as byte spans of its UTF-8 form."""
    out: list[tuple[int, int]] = []
    char = byte = 0
    for start, end in spans:
        byte += len(text[char:start].encode("utf-8", "surrogatepass"))
        length = len(text[start:end].encode("utf-8", "surrogatepass"))
        out.append((byte, byte + length))
        char = end
        byte += length
    return out


class _Walls:
    """One line's changed spans, in bytes, for `clear` to ask about submatches."""

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        walls = _byte_spans(text, _merged(spans))
        self._lows = [low for low, _ in walls]
        self._highs = [high for _, high in walls]

    def clear(self, sub: object) -> bool:
        """Whether a submatch [start, end) neither overlaps nor touches a changed span."""
        if not isinstance(sub, dict):
            return False
        start, end = sub.get("start"), sub.get("end")
        if not isinstance(start, int) or not isinstance(end, int):
            return False
        i = bisect_right(self._lows, end) - 1  # the last span that starts at or before `end`
        return i < 0 or self._highs[i] < start  # spans are disjoint: their ends increase


def clear_lines(
    pattern_flags: Sequence[str], lines: Sequence[tuple[str, list[tuple[int, int]]]]
) -> set[int]:
    """Which of `lines` (redacted text, its changed spans) hold a match of the pattern
    that keeps clear of every changed span: rg searches them once, as its stdin.

    Blocking (a worker thread); `pattern_flags` are the case flag and `--regexp P`.
    A line whose event is larger than MAX_EVENT_BYTES (millions of submatches) is
    left out, like any line rg cannot decide for.
    """
    if not lines:
        return set()
    data = "\n".join(text for text, _ in lines).encode("utf-8", "surrogatepass")
    args = [*ripgrep.COMMON_FLAGS, "--json", "--text", *pattern_flags, "-"]
    walls: dict[int, _Walls] = {}
    clear: set[int] = set()
    for raw in _run(args, data):
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "match":
            continue
        match = event.get("data")
        if not isinstance(match, dict):
            continue
        number = match.get("line_number")
        subs = match.get("submatches")
        if not isinstance(number, int) or not 1 <= number <= len(lines):
            continue
        if number - 1 not in walls:
            walls[number - 1] = _Walls(*lines[number - 1])
        if isinstance(subs, list) and any(map(walls[number - 1].clear, subs)):
            clear.add(number - 1)
    return clear


def _run(args: list[str], data: bytes) -> Iterator[bytes]:
    """rg's output lines over `data` on stdin, each at most MAX_EVENT_BYTES (longer ones
    are skipped); bounded like every rg run, in time and address space."""
    popen = subprocess.Popen(
        [ripgrep.rg_binary(), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if hasattr(resource, "prlimit"):  # as `process.start` caps every rg
        with contextlib.suppress(OSError, ValueError):
            limit = ripgrep.MEMORY_BYTES
            resource.prlimit(popen.pid, resource.RLIMIT_AS, (limit, limit))
    assert popen.stdin is not None and popen.stdout is not None
    stdin, stdout = popen.stdin, popen.stdout
    writer = threading.Thread(target=_write, args=(stdin, data), daemon=True)
    writer.start()
    timer = threading.Timer(ripgrep.TIMEOUT_S, popen.kill)
    timer.start()
    try:
        skipping = False
        while line := stdout.readline(MAX_EVENT_BYTES + 1):
            whole = line.endswith(b"\n")
            if not skipping and whole:
                yield line
            skipping = not whole
    finally:
        timer.cancel()
        popen.kill()
        stdout.close()
        popen.wait()
        writer.join()


def _write(stdin: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError):
        stdin.write(data)
    with contextlib.suppress(OSError):
        stdin.close()
