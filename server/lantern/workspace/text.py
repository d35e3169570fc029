"""Check 8 and the shape of read_file output: decode, pick lines, redact, cut, escape.

See docs/read-path.md#check-8 and #check-9.

What a line is (`\\r\\n`, `\\n` and a lone `\\r` each end one, as in VS Code), which
encoding a BOM names and what counts as binary come from `lines.py`, which search and
the references of an answer use too, so all number lines alike. Lines are redacted
joined by `\\n` (no CR is left in them), so redaction keeps each on its number.

Only the lines that will be shown are decoded and redacted, so reading 400
lines from the middle of a large file costs one split of the bytes. They are
redacted together with one line above and below (a token split over a line
break) and with the lines back to the nearest unindented one (a YAML value
below its key). When a key block may be involved (`redact.BLOCK_HINT` up to
the last line shown) the whole text is redacted first, so a block that starts
above the window cannot leak its body.

Every shown line is escaped: a VT, FF, NEL, U+2028/U+2029 or other control
character inside a line (anything a reader could take for a line break, and
terminal or bidi controls) is written as `\\v`, `\\uXXXX`, so no text from a
file can start a line of its own without its line number. (A CR is never inside
a line of a file: it ends one.)
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from lantern.errors import ToolError
from lantern.workspace.lines import (
    BOM_PREFIXES,
    MAX_LINES,
    binary_error,
    bom_encoding,
    count_breaks,
    ends_open,
    line_end,
    line_start,
    lines_from,
    looks_binary,
    split_lines,
    split_text,
)
from lantern.workspace.redact.redactor import BLOCK_HINT, CUT_MARGIN, redact
from lantern.workspace.redact_context import ContextAbove, YamlHint, yaml_above

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_OUTPUT_BYTES = 32 * 1024
MAX_LINE_CHARS = 2000
# Controls other than TAB, C1 (NEL), line/paragraph separators, bidi embeddings/isolates.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\n{_CONTROLS}]")
_CONTROL_IN_LINES = re.compile(f"[{_CONTROLS}]")  # the same, but for "\n" between lines
_SHORT = {"\r": "\\r", "\n": "\\n", "\x0b": "\\v", "\x0c": "\\f"}
_FIRST_PIECE = 1 << 12  # `_line_starts` counts line ends in pieces of these bytes,
_LAST_PIECE = 1 << 16  # growing up to this,
_FEW_LINES = 32  # and finds the last few one by one


@dataclass(frozen=True)
class Window:
    """The lines of a file chosen for one read_file call, ready to show."""

    lines: list[str]  # redacted, cut, without line ends
    first: int  # 1-based number of lines[0]
    total: int
    replaced: bool  # invalid bytes were replaced
    redactions: dict[str, int]
    cut_lines: int  # lines longer than MAX_LINE_CHARS that were shortened
    byte_capped: bool  # stopped early because of MAX_OUTPUT_BYTES

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1


def _split(data: bytes) -> tuple[str, list[bytes] | list[str]]:
    """Detect the encoding and split into lines (bytes for UTF-8, str otherwise)."""
    encoding, skip = bom_encoding(data)
    if encoding != "utf-8":
        return encoding, split_text(data[skip:].decode(encoding, "replace"))
    if looks_binary(data):
        raise ToolError("binary_file", "")
    return encoding, split_lines(data[skip:])


def _decode(line: bytes | str) -> tuple[str, bool]:
    if isinstance(line, str):
        return line, "\ufffd" in line
    try:
        return line.decode("utf-8"), False
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace"), True


def _decode_all(lines: list[bytes] | list[str]) -> tuple[list[str], bool]:
    """Decode lines, in one call when they are valid UTF-8; and whether bytes were replaced."""
    if lines and isinstance(lines[0], bytes):
        try:
            joined = b"\n".join(line for line in lines if isinstance(line, bytes))
            return joined.decode("utf-8").split("\n"), False
        except UnicodeDecodeError:
            pass
    pairs = [_decode(line) for line in lines]
    return [text for text, _ in pairs], any(bad for _, bad in pairs)


def escape_content(line: str) -> str:
    """One line of file content as the model sees it: every control character but TAB,
    and U+2028/U+2029 and bidi controls, written as `\\r`, `\\v`, `\\f` or `\\uXXXX`.

    Use it on every line of file content shown with a prefix (`12│…`, `path:12: …`).
    """
    if _CONTROL.search(line) is None:
        return line
    return _CONTROL.sub(lambda m: _SHORT.get(m[0]) or f"\\u{ord(m[0]):04x}", line)


@dataclass(frozen=True)
class _Picked:
    """Decoded lines to redact together: the window with its context."""

    total: int  # lines in the file
    texts: list[str]  # context above, the window, context below
    first: int  # index in texts of the window's first line
    count: int  # lines of the window
    replaced: bool  # invalid bytes were replaced in the window
    whole: bool  # texts is the whole file: redact it uncut


def _slow_window(data: bytes, rel: str, offset: int, want: int) -> _Picked:
    """The whole file, decoded (a BOM, or a key block that may reach into the window)."""
    try:
        _, raw_lines = _split(data)
    except ToolError:
        raise binary_error(rel) from None
    if raw_lines and raw_lines[-1] in (b"", ""):
        raw_lines.pop()
    total = len(raw_lines)
    texts, any_replaced = _decode_all(raw_lines)
    count = max(0, min(want, total - offset + 1))
    # Only when some line had invalid bytes: was one of them in the window?
    replaced = any_replaced and _decode_all(raw_lines[offset - 1 : offset - 1 + count])[1]
    return _Picked(total, texts, offset - 1, count, replaced, whole=True)


def _context_start(data: bytes, start: int, line: int) -> int | None:
    """Where to start redacting for a window at byte `start`, line `line` (0-based); None
    when a YAML key with its value below may be above that: then the whole text must be
    redacted."""
    context = ContextAbove(data)(line, start)
    return context.start if context.reached or not yaml_above(data[: context.start]) else None


def _fast_window(data: bytes, rel: str, offset: int, want: int) -> _Picked | None:
    """The window of a plain UTF-8 file and its context, without splitting all of it.

    Each byte is counted once (up to the window, then after it). None means the slow
    path must run: a BOM, or a key block that may start above or inside the window
    (it must be redacted with the whole text so its body cannot leak).
    """
    if data.startswith(BOM_PREFIXES):
        return None
    if looks_binary(data):
        raise binary_error(rel)
    unterminated = 1 if data and ends_open(data) else 0
    start = line_start(data, offset)
    if start is None:
        return _Picked(count_breaks(data) + unterminated, [], 0, 0, False, False)
    total = offset - 1 + count_breaks(data, start) + unterminated
    count = min(want, total - offset + 1)
    chosen, end = lines_from(data, start, count + 1)  # one line of context below
    if BLOCK_HINT.search(data, 0, end) is not None:
        return None
    above = _context_start(data, start, offset - 1)
    if above is None:
        return None
    before, _ = _decode_all(split_lines(data[above:start])[:-1])
    texts, replaced = _decode_all(chosen[:count])
    after, _ = _decode_all(chosen[count:])
    return _Picked(total, before + texts + after, len(before), count, replaced, whole=False)


def window(data: bytes, rel: str, offset: int, limit: int) -> Window:
    """Choose, decode, redact, cut and escape the lines [offset, offset+limit) of `data`."""
    want = min(limit, MAX_LINES)
    picked = _fast_window(data, rel, offset, want) or _slow_window(data, rel, offset, want)
    if picked.total == 0:
        return Window([], 1, 0, False, {}, 0, False)
    if offset > picked.total:
        raise ToolError(
            "invalid_arguments",
            f"offset: {rel} has {picked.total} lines; offset {offset} is past the end",
        )
    # Keep a margin past the cut so a secret that straddles it is still recognised.
    source = (
        picked.texts if picked.whole else [t[: MAX_LINE_CHARS + CUT_MARGIN] for t in picked.texts]
    )
    redacted = redact("\n".join(source))
    out = redacted.text.split("\n")
    escape = escape_content if _CONTROL_IN_LINES.search(redacted.text) else str
    lines: list[str] = []
    cut = 0
    used = 0
    capped = False
    for i in range(picked.first, picked.first + picked.count):
        text, was_cut = _fit_line(out[i], len(picked.texts[i]), escape)
        cut += was_cut
        size = len(text.encode("utf-8", "replace")) + len(str(offset + len(lines))) + 4
        if lines and used + size > MAX_OUTPUT_BYTES:
            capped = True
            break
        used += size
        lines.append(text)
    counts = redacted.counts_in(picked.first, picked.first + len(lines) - 1) if lines else {}
    return Window(lines, offset, picked.total, picked.replaced, counts, cut, capped)


@dataclass(frozen=True)
class HitLine:
    """One line of a file as search shows it, and what it was shown from."""

    shown: str  # redacted, cut at MAX_LINE_CHARS, escaped
    redacted: str  # the whole line, redacted, neither cut nor escaped
    original: str  # the whole line as decoded, before redaction


def hit_lines(data: bytes, numbers: Iterable[int]) -> tuple[dict[int, str], dict[str, int]]:
    """Lines `numbers` (1-based) of a file as search should show them, and the secrets
    redacted in them; see `hit_texts`."""
    found, counts = hit_texts(data, numbers)
    return {n: hit.shown for n, hit in found.items()}, counts


def hit_texts(data: bytes, numbers: Iterable[int]) -> tuple[dict[int, HitLine], dict[str, int]]:
    """Lines `numbers` (1-based) of a file as search should show them, and the secrets
    redacted in them: each line redacted as read_file would (a body line of a key block
    shows as the marker, a YAML value below its key is redacted), cut at MAX_LINE_CHARS
    and escaped; with the whole line redacted and as it was, so that search can tell
    whether a match lies inside a secret. Numbers past the end are left out; NUL bytes
    raise `binary_file`.

    Costs one redaction of each run of hit lines with their context (runs whose contexts
    overlap are redacted together, so no line is redacted twice; hit lines whole, context
    lines cut), found without splitting the file; or one redaction of the whole text when
    the file may hold a key block.
    """
    wanted = sorted({n for n in numbers if n >= 1})
    if not wanted:
        return {}, {}
    if data.startswith(BOM_PREFIXES) or BLOCK_HINT.search(data) is not None:
        return _hits_in_whole(data, wanted)
    if looks_binary(data):
        raise binary_error("file")
    runs = _runs(data, wanted)
    if runs is None:
        return _hits_in_whole(data, wanted)
    return _hits_in_runs(data, runs)


@dataclass
class _Run:
    """Hit lines redacted together with their context."""

    start: int  # byte index of the first line of context
    first: int  # its line, 0-based
    hits: list[tuple[int, int]]  # each hit line's number (1-based) and byte index, in order


def _runs(data: bytes, wanted: list[int]) -> list[_Run] | None:
    """The hit lines `wanted` (in order; those past the end left out) in runs redacted
    together. Runs whose contexts overlap or touch are one. None when a hit's context
    is cut at `MAX_CONTEXT_LINES` and a YAML key may be above it: the whole text is
    redacted then."""
    hint = YamlHint(data)
    context = ContextAbove(data)
    runs: list[_Run] = []
    for number, at in _line_starts(data, wanted):
        above = context(number - 1, at)
        if not above.reached and hint.above(above.line):
            return None
        # Overlaps the run before (whose last line of context is its last hit's number)?
        if runs and above.line <= runs[-1].hits[-1][0] + 1:
            runs[-1].hits.append((number, at))
        else:
            runs.append(_Run(above.start, above.line, [(number, at)]))
    return runs


def _line_starts(data: bytes, numbers: list[int]) -> Iterator[tuple[int, int]]:
    """Each of the line `numbers` (1-based, in order) that `data` holds, with the byte
    index where it starts. Without a CR in `data`, the line ends are counted in pieces
    that grow, and the piece holding the wanted one is halved until few are left: no
    copy of the bytes, however far apart the lines are."""
    if data.find(b"\r") >= 0:  # a lone CR ends a line too: `line_start` knows
        line, pos = 1, 0
        for number in numbers:
            at = line_start(data, number - line + 1, pos)
            if at is None or at >= len(data):
                return
            line, pos = number, at
            yield number, at
        return
    line, pos = 1, 0
    for number in numbers:
        left, step = number - line, _FIRST_PIECE  # line ends to pass
        while left > 0:
            end = min(len(data), pos + step)
            found = data.count(b"\n", pos, end)
            if found < left:
                if end == len(data):
                    return
                pos, left, step = end, left - found, min(2 * step, _LAST_PIECE)
                continue
            while left > _FEW_LINES:  # data[pos:end] holds the wanted line end
                middle = (pos + end) // 2
                below = data.count(b"\n", pos, middle)
                if below >= left:
                    end = middle
                else:
                    pos, left = middle, left - below
            for _ in range(left):
                pos = data.index(b"\n", pos) + 1
            left = 0
        if pos >= len(data):
            return
        line = number
        yield number, pos


def _below_end(data: bytes, at: int) -> int:
    """Where the line below the line at byte `at` ends (without its line end); where the
    line at `at` ends when it is the last."""
    end = line_end(data, at)
    below = end + (2 if data[end : end + 2] == b"\r\n" else 1)
    return end if below >= len(data) else line_end(data, below)


def _hits_in_runs(data: bytes, runs: list[_Run]) -> tuple[dict[int, HitLine], dict[str, int]]:
    """`hit_texts` for each run of `_runs`: its lines redacted together, with one line
    of context below; hit lines whole, context lines cut."""
    found: dict[int, HitLine] = {}
    counts: dict[str, int] = {}
    for run in runs:
        texts, _ = _decode_all(split_lines(data[run.start : _below_end(data, run.hits[-1][1])]))
        whole = {number - 1 - run.first for number, _ in run.hits}
        cut = [t if i in whole else t[: MAX_LINE_CHARS + CUT_MARGIN] for i, t in enumerate(texts)]
        redacted = redact("\n".join(cut))
        out = redacted.text.split("\n")
        for number, _ in run.hits:
            at = number - 1 - run.first
            shown, _ = _fit_line(out[at], len(texts[at]), escape_content)
            found[number] = HitLine(shown, out[at], texts[at])
            for rule, count in redacted.counts_in(at, at).items():
                counts[rule] = counts.get(rule, 0) + count
    return found, counts


def whole_lines(data: bytes) -> tuple[list[str], list[str]]:
    """Every line of a file as decoded and as redacted with the whole text (one
    redaction: cheaper than `hit_texts` when most lines are wanted), neither cut nor
    escaped. NUL bytes raise `binary_file`."""
    picked = _slow_window(data, "file", 1, 0)
    return picked.texts, redact("\n".join(picked.texts)).text.split("\n")


def _hits_in_whole(data: bytes, wanted: list[int]) -> tuple[dict[int, HitLine], dict[str, int]]:
    picked = _slow_window(data, "file", 1, 0)
    redacted = redact("\n".join(picked.texts))
    out = redacted.text.split("\n")
    found = {
        n: HitLine(
            _fit_line(out[n - 1], len(picked.texts[n - 1]), escape_content)[0],
            out[n - 1],
            picked.texts[n - 1],
        )
        for n in wanted
        if n <= picked.total
    }
    shown = sorted(n - 1 for n in found)
    counts: dict[str, int] = {}
    for rule, first, last in redacted.spans:
        at = bisect.bisect_left(shown, first)  # a shown line in first..last?
        if at < len(shown) and shown[at] <= last:
            counts[rule] = counts.get(rule, 0) + 1
    return found, counts


def _fit_line(text: str, length: int, escape: Callable[[str], str]) -> tuple[str, bool]:
    """A redacted line as shown, and whether it was cut: cut at MAX_LINE_CHARS (saying
    how long the original, of `length` characters, was), then escaped."""
    if len(text) > MAX_LINE_CHARS or length > MAX_LINE_CHARS + 1024:
        return f"{escape(text[:MAX_LINE_CHARS])}… [line cut: {length:,} characters]", True
    return escape(text), False


def render(win: Window, rel: str) -> str:
    """The text the model sees for one read_file call."""
    if win.total == 0:
        return f"[file {rel} is empty]"
    head = f"[untrusted file content: {rel}, lines {win.first}–{win.last} of {win.total}]"
    body = "\n".join(f"{n}│{text}" for n, text in enumerate(win.lines, start=win.first))
    notes: list[str] = []
    if win.last < win.total:
        notes.append(
            f"[partial: lines {win.first}–{win.last} of {win.total}; "
            f"call read_file with offset={win.last + 1} to continue]"
        )
    if win.cut_lines:
        notes.append(f"[{win.cut_lines} long line(s) cut at {MAX_LINE_CHARS:,} characters]")
    if win.replaced:
        notes.append("[invalid UTF-8 bytes were replaced with �]")
    if win.redactions:
        rules = ", ".join(f"{rule} ×{n}" for rule, n in sorted(win.redactions.items()))
        total = sum(win.redactions.values())
        notes.append(f"[redacted {total} secret(s): {rules}]")
    return "\n".join([head, body, *notes])
