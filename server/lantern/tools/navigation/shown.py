"""Definitions and uses as the model sees them: lines from the redacted text only.

The code engine parses the file's own bytes (a secret changes no line and no name), but
everything shown comes from the text redacted as `read_file` would redact it: a use is
shown as its redacted line, and a definition's signature is the engine's one-line
header only when redaction changed none of the header's lines (and the line after) and
nothing in the signature itself (all signatures of a file are redacted in one call);
otherwise it is the definition's redacted lines up to its name, on one line. A
definition or use whose name is not visible in a redacted line, clear of every redacted
part (a name inside a key block, or a token that reads as an identifier), is not shown
at all: nothing about it may leak.

A few lines are redacted with their context (`workspace/text.hit_texts`); when many are
wanted (an outline) and they are a good part of the text before them, the text up to one
line past the last of them is redacted at once (`workspace/text.whole_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lantern.code.definitions import Definition
from lantern.errors import ToolError
from lantern.tools.ripgrep.recheck import changed_spans
from lantern.tools.ripgrep.result_filter import display
from lantern.workspace.lines import line_start, split_lines
from lantern.workspace.redact.redactor import redact
from lantern.workspace.text import escape_content, hit_texts, whole_lines

MAX_SIGNATURE_CHARS = 300
MAX_NAME_CHARS = 200  # a qualified name (minified code has very long ones)
MAX_USE_CHARS = 300  # as search's MAX_MATCH_CHARS
# From this many wanted lines on, and one in WHOLE_SHARE of the lines up to the last of
# them, the whole text is redacted once (cheaper than each line with its context then).
WHOLE_FILE_AT = 200
WHOLE_SHARE = 4


@dataclass(frozen=True)
class ShownDefinition:
    path: str  # as the model writes it
    definition: Definition
    line: str  # `path:START-END KIND NAME  SIGNATURE`, escaped and redacted
    redactions: int
    name_line: int  # the line its name is on: lines START..name_line were shown (seen)


@dataclass(frozen=True)
class ShownUse:
    path: str
    line: int
    text: str  # redacted, cut, escaped
    definition: bool
    redactions: int


class _Lines:
    """Lines of one file, each as decoded and as redacted (1-based)."""

    def __init__(self, data: bytes, numbers: set[int]) -> None:
        self._pairs: dict[int, tuple[str, str]] = {}
        try:
            if len(numbers) >= WHOLE_FILE_AT and len(numbers) * WHOLE_SHARE >= max(numbers):
                # Up to one line past the last one wanted (the context hit_texts keeps too).
                end = line_start(data, max(numbers) + 2)
                originals, redacted = whole_lines(data if end is None else data[:end])
                self._pairs = {
                    n: (originals[n - 1], redacted[n - 1]) for n in numbers if n <= len(originals)
                }
            else:
                found, _ = hit_texts(data, numbers)
                self._pairs = {n: (hit.original, hit.redacted) for n, hit in found.items()}
        except ToolError:  # binary: read_file would refuse it too
            pass

    def get(self, number: int) -> tuple[str, str] | None:
        return self._pairs.get(number)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _word_at(text: str, name: str) -> list[tuple[int, int]]:
    """Where `name` stands as a whole word in `text`."""
    found: list[tuple[int, int]] = []
    pos = text.find(name)
    while pos >= 0:
        end = pos + len(name)
        before = text[pos - 1] if pos else ""
        after = text[end] if end < len(text) else ""
        if not (before and _is_word(before)) and not (after and _is_word(after)):
            found.append((pos, end))
        pos = text.find(name, pos + 1)
    return found


def visible(original: str, redacted: str, name: str) -> bool:
    """Whether `name` stands as a whole word in the redacted line, neither inside nor
    touching a part redaction changed (so it is the file's own text there too)."""
    words = _word_at(redacted, name)
    if original == redacted or not words:
        return bool(words)
    spans = changed_spans(original, redacted)
    return any(all(end < low or high < start for low, high in spans) for start, end in words)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _window(d: Definition, raw: list[bytes]) -> range:
    """The lines the definition's signature was taken from (its header), and one more:
    where the header ends is found by laying the file's lines, whitespace collapsed as
    the engine collapses it, along the signature until they are as long."""
    want = len(d.signature.removesuffix("…"))
    have = -1
    last = d.start
    while last <= min(d.end, len(raw)):
        line = " ".join(raw[last - 1].decode("utf-8", "replace").split())
        have += len(line) + 1 if line else 0
        if have >= want:
            break
        last += 1
    return range(d.start, min(d.end, last + 1) + 1)


def _name_line(d: Definition, lines: _Lines, window: range) -> int | None:
    """The first line of the definition's header where its name is visible once redacted."""
    name = d.name.rsplit(".", 1)[-1]
    for number in window:
        pair = lines.get(number)
        if pair is not None and visible(*pair, name):
            return number
    return None


def _signature(d: Definition, lines: _Lines, window: range, upto: int, clean: bool) -> str:
    """The engine's signature when nothing in its header was redacted, else the redacted
    lines from the start to the name's line, on one line."""
    changed = any(pair[0] != pair[1] for n in window if (pair := lines.get(n)) is not None)
    if clean and not changed:
        signature = d.signature
    else:
        parts = [pair[1] for n in range(d.start, upto + 1) if (pair := lines.get(n))]
        signature = " ".join(" ".join(parts).split())
    return escape_content(_cut(signature, MAX_SIGNATURE_CHARS))


def _clean(definitions: Sequence[Definition]) -> list[tuple[bool, bool]]:
    """For each definition: whether redaction leaves its signature and its name alone
    (all of them redacted in one call: redaction keeps lines). A line the call changed
    is asked again on its own: a secret that runs on past its line (a key block whose
    signature was cut before its END) must not take the next definitions with it."""
    texts = [" ".join(d.signature.split()) for d in definitions]
    names = [d.name for d in definitions]
    out = redact("\n".join(texts + names)).text.split("\n")
    for i, (before, after) in enumerate(zip(texts + names, out, strict=True)):
        if before != after:
            out[i] = redact(before).text
    count = len(definitions)
    return [(out[i] == texts[i], out[count + i] == names[i]) for i in range(count)]


def show_definitions(
    path: str, data: bytes, definitions: Sequence[Definition]
) -> list[ShownDefinition]:
    """The definitions of one file that may be shown, each as its line."""
    if not definitions:
        return []
    raw = split_lines(data)
    windows = [_window(d, raw) for d in definitions]
    lines = _Lines(data, {n for window in windows for n in window})
    named = display(path)
    shown: list[ShownDefinition] = []
    checks = zip(definitions, windows, _clean(definitions), strict=True)
    for d, window, (clean, name_ok) in checks:
        upto = _name_line(d, lines, window) if name_ok else None
        if upto is None:
            continue
        signature = _signature(d, lines, window, upto, clean)
        kind, name = escape_content(d.kind), escape_content(_cut(d.name, MAX_NAME_CHARS))
        text = f"{named}:{d.start}-{d.end} {kind} {name}  {signature}".rstrip()
        shown.append(ShownDefinition(path, d, text, signature.count("[REDACTED:"), upto))
    return shown


def show_uses(path: str, data: bytes, found: dict[int, bool], name: str) -> list[ShownUse]:
    """Uses of `name` on `found`'s lines (line → whether a definition is there), each line
    once, shown redacted; a line whose use is not visible once redacted is left out."""
    lines = _Lines(data, set(found))
    word = name.rsplit(".", 1)[-1]
    shown: list[ShownUse] = []
    for number in sorted(found):
        pair = lines.get(number)
        if pair is None or not visible(*pair, word):
            continue
        text = escape_content(_cut(pair[1], MAX_USE_CHARS))
        shown.append(ShownUse(path, number, text, found[number], text.count("[REDACTED:")))
    return shown


def show_lines(data: bytes, numbers: set[int]) -> dict[int, str]:
    """Lines of one file as a search hit shows them (redacted, cut, escaped), by number;
    a line that cannot be shown (a binary file) is left out."""
    lines = _Lines(data, numbers)
    shown: dict[int, str] = {}
    for number in sorted(numbers):
        pair = lines.get(number)
        if pair is not None:
            shown[number] = escape_content(_cut(pair[1], MAX_USE_CHARS))
    return shown
