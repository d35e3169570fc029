"""Check 8 and the shape of read_file output: decode, pick lines, number, cut.

Only the lines that will be shown are decoded and redacted, so reading 400
lines from the middle of a large file costs one split of the bytes. Private
key blocks are the one multi-line secret: when a file holds one, the whole
text is redacted first so a block that starts above the window cannot leak
its body.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from lantern.workspace.errors import ToolError
from lantern.workspace.redact import redact

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_LINES = 400
MAX_OUTPUT_BYTES = 32 * 1024
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192
_KEY_MARKERS = (b"PRIVATE KEY-----", b"PRIVATE KEY BLOCK-----")
_CHUNK = 1 << 16
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)


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
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            if encoding == "utf-8":
                return encoding, body.split(b"\n")
            return encoding, body.decode(encoding, "replace").split("\n")
    if b"\0" in data[:_SNIFF_BYTES]:
        raise ToolError("binary_file", "")
    return "utf-8", data.split(b"\n")


def _decode(line: bytes | str) -> tuple[str, bool]:
    if isinstance(line, str):
        return line.removesuffix("\r"), "\ufffd" in line
    try:
        return line.decode("utf-8").removesuffix("\r"), False
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace").removesuffix("\r"), True


def _decode_all(lines: list[bytes] | list[str]) -> tuple[list[str], bool]:
    """Decode lines, in one call when they are valid UTF-8; and whether bytes were replaced."""
    if lines and isinstance(lines[0], bytes):
        try:
            joined = b"\n".join(line for line in lines if isinstance(line, bytes))
            return [line.removesuffix("\r") for line in joined.decode("utf-8").split("\n")], False
        except UnicodeDecodeError:
            pass
    pairs = [_decode(line) for line in lines]
    return [text for text, _ in pairs], any(bad for _, bad in pairs)


def _join(lines: list[bytes] | list[str]) -> str:
    """The whole text of split lines (UTF-8 lines decode alone: `\\n` never splits a character)."""
    return "\n".join(
        line if isinstance(line, str) else line.decode("utf-8", "replace") for line in lines
    )


def _line_start(data: bytes, number: int) -> int | None:
    """Byte index where 1-based line `number` starts (None past the end), chunk by chunk."""
    pos, left = 0, number - 1
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


def _window_lines(data: bytes, start: int, want: int) -> list[bytes]:
    """`want` lines from byte `start`, copying only about as much as they hold."""
    span = _CHUNK
    while True:
        piece = data[start : start + span]
        if piece.count(b"\n") >= want or start + span >= len(data):
            return piece.split(b"\n", want)[:want]
        span *= 4


def _lines(data: bytes, shown: str) -> tuple[int, list[bytes] | list[str], dict[str, int]]:
    """All lines of a file that needs the slow path (a BOM, or a private key to redact)."""
    try:
        encoding, raw_lines = _split(data)
    except ToolError:
        raise ToolError("binary_file", f"{shown} looks binary (it contains NUL bytes)") from None
    if raw_lines and raw_lines[-1] in (b"", ""):
        raw_lines.pop()
    total = len(raw_lines)
    # Redact from the split lines, not `data`: a BOM is already stripped there, and the
    # key markers of a UTF-16/32 file only show up once it is decoded.
    maybe_key = encoding != "utf-8" or any(marker in data for marker in _KEY_MARKERS)
    whole_text = _join(raw_lines) if maybe_key else ""
    if any(marker.decode() in whole_text for marker in _KEY_MARKERS):
        whole = redact(whole_text)
        return total, whole.text.split("\n")[:total], dict(whole.counts)
    return total, raw_lines, {}


def _fast_window(data: bytes, shown: str, offset: int, want: int) -> tuple[int, list[bytes]] | None:
    """Total lines and the window of a plain UTF-8 file without splitting all of it.

    Each byte is counted once (up to the window, then after it). None means the slow
    path must run: a BOM, or a private key block that starts above or inside the window
    (it must be redacted with the whole text so its body cannot leak).
    """
    if data.startswith(_BOM_PREFIXES):
        return None
    if b"\0" in data[:_SNIFF_BYTES]:
        raise ToolError("binary_file", f"{shown} looks binary (it contains NUL bytes)")
    unterminated = 1 if data and not data.endswith(b"\n") else 0
    start = _line_start(data, offset)
    if start is None:
        return data.count(b"\n") + unterminated, []
    total = offset - 1 + data.count(b"\n", start) + unterminated
    chosen = _window_lines(data, start, min(want, total - offset + 1))
    end = start + sum(len(line) + 1 for line in chosen)
    if data.find(b"PRIVATE KEY", 0, end) >= 0:
        return None
    return total, chosen


def window(data: bytes, shown: str, offset: int, limit: int) -> Window:
    """Choose, decode, redact and cut the lines [offset, offset+limit) of `data`."""
    want = min(limit, MAX_LINES)
    fast = _fast_window(data, shown, offset, want)
    counts: dict[str, int] = {}
    chosen: list[bytes] | list[str]
    if fast is not None:
        total, chosen = fast
    else:
        total, all_lines, counts = _lines(data, shown)
        chosen = all_lines[offset - 1 : offset - 1 + want]
    if total == 0:
        return Window([], 1, 0, False, {}, 0, False)
    if offset > total:
        raise ToolError(
            "invalid_arguments",
            f"offset: {shown} has {total} lines; offset {offset} is past the end",
        )
    decoded, replaced = _decode_all(chosen)
    # Keep a margin past the cut so a secret that straddles it is still recognised.
    texts = [text[: MAX_LINE_CHARS + 1024] for text in decoded]
    redacted = redact("\n".join(texts))
    for rule, n in redacted.counts.items():
        counts[rule] = counts.get(rule, 0) + n
    lines: list[str] = []
    cut = 0
    used = 0
    capped = False
    for number, (text, original) in enumerate(
        zip(redacted.text.split("\n"), decoded, strict=True), start=offset
    ):
        if len(text) > MAX_LINE_CHARS or len(original) > MAX_LINE_CHARS + 1024:
            text = f"{text[:MAX_LINE_CHARS]}… [line cut: {len(original):,} characters]"
            cut += 1
        size = len(text.encode("utf-8", "replace")) + len(str(number)) + 4
        if lines and used + size > MAX_OUTPUT_BYTES:
            capped = True
            break
        used += size
        lines.append(text)
    return Window(lines, offset, total, replaced, counts, cut, capped)


def render(win: Window, shown: str) -> str:
    """The text the model sees for one read_file call."""
    if win.total == 0:
        return f"[file {shown} is empty]"
    head = f"[untrusted file content: {shown}, lines {win.first}–{win.last} of {win.total}]"
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
