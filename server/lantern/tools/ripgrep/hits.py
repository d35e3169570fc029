"""Turning ripgrep's `--json` events into hits Lantern may show.

rg reports a file (`begin`), its matching line numbers (`match`) and the end of
the file (`end`); names come from the JSON (`text`, or `bytes` for a name that
is not UTF-8), never parsed out of text, so a name holding a newline cannot
pass for another file. The matched text rg prints is never shown: at `end`,
the file is opened through the jail and read by Lantern, redacted as a whole,
and the hit lines are taken from that redacted text. A hit line that redaction
changed is searched again in its redacted form (`recheck.py`): a match inside a
secret is no hit, and is dropped before it counts against `want`. Those lines are
searched again together, many files' in one rg run (`_Waiting`): a file's hits wait,
in order, until enough lines are waiting to fill `want`, or a batch is full, or rg's
output has ended (`finish`).

rg ends lines at `\\n` only; Lantern (like VS Code) also at a lone `\\r`. So a
match is kept as rg's line number and the editor lines within that rg line its
submatches touch (from their byte offsets into the line rg printed), and turned
into editor line numbers once the file is read (`lines.ripgrep_lines`): the hit
shows the editor line holding the match. Each editor line it touches is then
searched again on its own (`recheck.py`), so a match across a lone CR is no hit.

Runs in a worker thread, one `feed` per batch of rg output; a short last batch
of small files is handled on the event loop (see `inline_only`), which spares
the common small search a hop to the thread.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lantern.errors import ToolError
from lantern.tools.ripgrep.recheck import changed_spans, clear_lines
from lantern.tools.ripgrep.result_filter import ResultFilter, split_rel
from lantern.workspace.ignore.files import NeedsWorker, inline_now
from lantern.workspace.lines import breaks_before, ripgrep_lines
from lantern.workspace.roots import Opened, Workspace
from lantern.workspace.text import MAX_FILE_BYTES, HitLine, hit_texts

INLINE_READ_BYTES = 256 * 1024  # on the event loop: no file larger than this,
INLINE_TOTAL_BYTES = 1 << 20  # no more than this in all,
INLINE_DEPTH = 32  # and no deeper path (the rest is done in a worker thread)
MAX_EVENT_BYTES = 64 << 20  # one JSON line (a match line of a file up to 8 MiB, escaped)


RECHECK_LINES = 2000  # redacted hit lines searched again in one rg run at most,
RECHECK_BYTES = 4 << 20  # and bytes of them


@dataclass(frozen=True)
class Hit:
    path: str  # as the model writes it (raw; escaped when rendered)
    line: int
    text: str  # redacted
    redactions: int


@dataclass
class _Waiting:
    """One file's hit lines (`numbers`, in order) waiting for the recheck of those that
    redaction changed (`again`); the others keep rg's verdict (`kept`)."""

    named: str
    numbers: list[int]
    found: dict[int, HitLine]
    kept: set[int]
    again: list[int]


def _read(fd: int) -> bytes | None:
    """The whole file from offset 0, or None when it holds more than MAX_FILE_BYTES."""
    chunks: list[bytes] = []
    total = 0
    while total <= MAX_FILE_BYTES:
        chunk = os.pread(fd, 1 << 20, total)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    return None


def rg_text(field: Any) -> str | None:
    """A ripgrep JSON text field (`{"text": …}`, or `{"bytes": base64}` for bytes that are
    not UTF-8, decoded as a name is: `os.fsdecode`); None when it is neither."""
    if not isinstance(field, dict):
        return None
    if isinstance(field.get("text"), str):
        return str(field["text"])
    if isinstance(field.get("bytes"), str):
        try:
            return os.fsdecode(base64.b64decode(field["bytes"], validate=True))
        except (binascii.Error, ValueError):
            return None
    return None


def _line_bytes(data: dict[str, Any]) -> bytes | None:
    """The line rg printed for a match, as the bytes its submatch offsets count."""
    lines = data.get("lines")
    if not isinstance(lines, dict):
        return None
    try:
        if isinstance(lines.get("text"), str):
            return str(lines["text"]).encode("utf-8")
        if isinstance(lines.get("bytes"), str):
            return base64.b64decode(lines["bytes"], validate=True)
    except (binascii.Error, ValueError):  # UnicodeEncodeError is a ValueError
        pass
    return None


def _sub_lines(data: dict[str, Any]) -> tuple[list[int], bool]:
    """The editor lines (0 = the first) within rg's line that the match's submatches
    touch (a lone CR in rg's line starts a new editor line), and whether there is more
    than one."""
    line = _line_bytes(data)
    subs = data.get("submatches")
    if line is None or not isinstance(subs, list):
        return [0], False
    body = len(line) - line.endswith(b"\n")
    body -= body > 0 and line[body - 1] == 13  # the CR of a last CRLF
    if line.find(b"\r", 0, body) < 0:  # one editor line
        return [0], False
    found: set[int] = set()
    for sub in subs:
        start, end = (sub.get("start"), sub.get("end")) if isinstance(sub, dict) else (0, 0)
        if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end:
            first = breaks_before(line, start)
            found.update(range(first, breaks_before(line, max(start, end - 1)) + 1))
    return sorted(found) or [0], True


class Collector:
    """Hits of one rg run, checked and redacted, up to `want`."""

    def __init__(
        self,
        workspace: Workspace,
        handle: Opened,
        check: ResultFilter | None,
        want: int,
        pattern_flags: Sequence[str],
    ) -> None:
        self.workspace = workspace
        self.pattern_flags = pattern_flags  # to search redacted hit lines again (`recheck`)
        self.handle = handle
        self.check = check  # None: rg searched the single file `handle` on stdin
        self.want = want
        self.hits: list[Hit] = []
        self.more = False
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._skipping = False
        self._file: tuple[str, ...] | None = None
        # rg's line number, editor line within it, and whether rg's line holds several
        self._lines: list[tuple[int, int, bool]] = []
        self._early = 0  # lines of this file that end a batch early, once one did
        self._queue: deque[bytes] = deque()
        self._inline_read = 0
        self._waiting: list[_Waiting] = []  # files whose hits wait for a batched recheck
        self._waiting_lines = 0  # their hit lines, and of those the lines to check again
        self._again_lines = 0
        self._again_bytes = 0

    @property
    def full(self) -> bool:
        return self.more

    def feed(self, chunk: bytes, final: bool = False) -> None:
        """Take the next piece of rg's stdout and handle every complete line (at the
        `final` piece, the last line too).

        On the event loop (`inline_only`), a line that needs heavy work raises
        `NeedsWorker` and stays queued; `drain` in a worker thread goes on from it.
        """
        if final:
            chunk += b"\n"  # completes a last line without one
        while chunk:
            cut = chunk.find(b"\n")
            if cut < 0:
                self._keep(chunk)
                break
            self._keep(chunk[:cut])
            line = b"".join(self._pending)
            skipped = self._skipping
            self._pending, self._pending_bytes, self._skipping = [], 0, False
            chunk = chunk[cut + 1 :]
            if line and not skipped:
                self._queue.append(line)
        self.drain()

    def drain(self) -> None:
        """Handle the queued lines, each removed only once it is done."""
        while self._queue and not self.full:
            self._event(self._queue[0])
            self._queue.popleft()

    def _keep(self, piece: bytes) -> None:
        if self._skipping:
            return
        self._pending_bytes += len(piece)
        if self._pending_bytes > MAX_EVENT_BYTES:  # drop the event, keep reading
            self._pending, self._skipping = [], True
            return
        self._pending.append(piece)

    def _event(self, raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            return
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            return
        kind, data = event.get("type"), event["data"]
        if kind == "begin":
            self._begin(data)
        elif kind == "match" and self._file is not None:
            number = data.get("line_number")
            if isinstance(number, int) and number > 0:
                subs, several = _sub_lines(data)
                self._lines += [(number, sub, several) for sub in subs]
                room = max(self._early, self.want - len(self.hits))
                if len(self._lines) > room:  # enough to fill and see more
                    self._finish(self._file, self._lines)
                    # Lines inside a secret may have been dropped: the file goes on (the
                    # next batch twice as large), or what is shown would tell about them.
                    self._lines, self._early = [], 2 * room
        elif kind == "end":
            if self._file is not None and self._lines:
                self._finish(self._file, self._lines)
            self._file, self._lines = None, []

    def _budget(self, size: int) -> None:
        """On the event loop, only small files, and a little in all, are read and redacted."""
        if not inline_now():
            return
        if size > INLINE_READ_BYTES or self._inline_read + size > INLINE_TOTAL_BYTES:
            raise NeedsWorker
        self._inline_read += size

    def _begin(self, data: dict[str, Any]) -> None:
        self._file, self._lines, self._early = None, [], 0
        if self.check is None:
            self._file = ()
            return
        name = rg_text(data.get("path"))
        rel = split_rel(name) if name is not None else ()
        if len(rel) > INLINE_DEPTH and inline_now():  # deep: checked in a worker thread
            raise NeedsWorker
        if rel and self.check.name_allowed(rel):
            self._file = rel

    def _finish(self, rel: tuple[str, ...], spots: list[tuple[int, int, bool]]) -> None:
        if self.check is None:
            self._budget(self.handle.stat.st_size)
            data = _read(self.handle.fd)
        else:
            opened = self.check.open_file(rel)
            if opened is None:  # swapped, linked, or gone since rg saw it: not shown
                return
            fd, st = opened
            try:
                self._budget(st.st_size)
                data = _read(fd) if st.st_size <= MAX_FILE_BYTES else None
            finally:
                os.close(fd)
        if data is None:
            return
        starts = ripgrep_lines(data, (line for line, _, _ in spots))
        several = {starts[line] + sub for line, sub, many in spots if line in starts and many}
        numbers = sorted({starts[line] + sub for line, sub, _ in spots if line in starts})
        try:
            found, _ = hit_texts(data, numbers)
        except ToolError:  # binary (NUL bytes): read_file would refuse it too
            return
        kept = {n for n, hit in found.items() if n not in several and hit.redacted == hit.original}
        again = [n for n in found if n not in kept]
        if (again or self._waiting) and inline_now():  # rg may run again: in a worker
            raise NeedsWorker
        named = self.workspace.relative(self.handle.target.root, (*self.handle.target.parts, *rel))
        waiting = _Waiting(named, numbers, found, kept, again)
        if not again and not self._waiting:
            self._show(waiting, kept)
            return
        self._waiting.append(waiting)
        self._waiting_lines += len(found)
        self._again_lines += len(again)
        self._again_bytes += sum(len(found[n].redacted) for n in again)
        if (
            len(self.hits) + self._waiting_lines > self.want  # enough to fill, and see more
            or self._again_lines >= RECHECK_LINES
            or self._again_bytes >= RECHECK_BYTES
        ):
            self._recheck()

    def finish(self) -> None:
        """Settle the hits still waiting for their recheck, once rg's output has ended
        (or stopped): blocking, from a worker thread."""
        if self._waiting:
            self._recheck()

    @property
    def waiting(self) -> bool:
        """Whether hits wait for `finish`."""
        return bool(self._waiting)

    def _recheck(self) -> None:
        """Search the waiting files' changed lines again, all in one rg run, and show
        the hits that keep clear of every secret, file by file in order."""
        waiting, self._waiting = self._waiting, []
        self._waiting_lines = self._again_lines = self._again_bytes = 0
        lines = [
            (w.found[n].redacted, changed_spans(w.found[n].original, w.found[n].redacted))
            for w in waiting
            for n in w.again
        ]
        clear = clear_lines(self.pattern_flags, lines)
        at = 0
        for w in waiting:
            kept = w.kept | {n for i, n in enumerate(w.again, start=at) if i in clear}
            at += len(w.again)
            if not self.more:
                self._show(w, kept)

    def _show(self, waiting: _Waiting, kept: set[int]) -> None:
        """The file's hit lines that are hits, up to `want`; past it, `more`."""
        for number in waiting.numbers:
            hit = waiting.found.get(number)
            if hit is None or number not in kept:  # past the end, or only inside a secret
                continue
            if len(self.hits) >= self.want:
                self.more = True
                return
            count = hit.shown.count("[REDACTED:")
            self.hits.append(Hit(waiting.named, number, hit.shown, count))
