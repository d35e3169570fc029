"""Definitions and uses as the model sees them: lines from the redacted text only.

The code engine parses the file's own bytes (a secret changes no line and no name), but
everything shown comes from the text redacted as `read_file` would redact it
(`workspace/text.hit_texts`): a use is shown as its redacted line, and a definition's
signature is the engine's one-line signature only when redaction changed none of the
definition's first `HEADER_LINES` lines and nothing in the signature itself; otherwise
it is the redacted first line. A definition or use whose name is not visible in its
redacted line, clear of every redacted part (a name inside a key block, or a token that
reads as an identifier), is not shown at all: nothing about it may leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lantern.code.definitions import Definition
from lantern.errors import ToolError
from lantern.tools.ripgrep.recheck import changed_spans
from lantern.tools.ripgrep.result_filter import display
from lantern.workspace.redact.redactor import redact
from lantern.workspace.text import HitLine, escape_content, hit_texts

HEADER_LINES = 16  # a signature is taken from at most this many lines of its definition
MAX_SIGNATURE_CHARS = 300
MAX_USE_CHARS = 300  # as search's MAX_MATCH_CHARS


@dataclass(frozen=True)
class ShownDefinition:
    path: str  # as the model writes it
    definition: Definition
    line: str  # `path:START-END KIND NAME  SIGNATURE`, escaped and redacted
    redactions: int


@dataclass(frozen=True)
class ShownUse:
    path: str
    line: int
    text: str  # redacted, cut, escaped
    definition: bool
    redactions: int


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def visible(hit: HitLine, name: str) -> bool:
    """Whether `name` stands as a whole word in the redacted line, neither inside nor
    touching a part redaction changed (so it is the file's own text there too)."""
    spans = changed_spans(hit.original, hit.redacted)
    for match in _word(name).finditer(hit.redacted):
        start, end = match.span()
        if all(end < low or high < start for low, high in spans):
            return True
    return False


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _signature(d: Definition, found: dict[int, HitLine]) -> str:
    last = min(d.end, d.start + HEADER_LINES - 1)
    changed = any(
        hit.redacted != hit.original
        for n in range(d.start, last + 1)
        if (hit := found.get(n)) is not None
    )
    signature = " ".join(d.signature.split())
    if changed or redact(signature).text != signature:
        signature = " ".join(found[d.start].redacted.split())
    return escape_content(_cut(signature, MAX_SIGNATURE_CHARS))


def _texts(data: bytes, numbers: Iterable[int]) -> dict[int, HitLine]:
    try:
        found, _ = hit_texts(data, numbers)
    except ToolError:  # binary: read_file would refuse it too
        return {}
    return found


def show_definitions(
    path: str, data: bytes, definitions: Sequence[Definition]
) -> list[ShownDefinition]:
    """The definitions of one file that may be shown, each as its line."""
    numbers: set[int] = set()
    for d in definitions:
        numbers.update(range(d.start, min(d.end, d.start + HEADER_LINES - 1) + 1))
    found = _texts(data, numbers)
    shown: list[ShownDefinition] = []
    named = display(path)
    for d in definitions:
        head = found.get(d.start)
        if head is None or redact(d.name).text != d.name:
            continue
        if not visible(head, d.name.rsplit(".", 1)[-1]):
            continue
        signature = _signature(d, found)
        kind, name = escape_content(d.kind), escape_content(d.name)
        text = f"{named}:{d.start}-{d.end} {kind} {name}  {signature}".rstrip()
        shown.append(ShownDefinition(path, d, text, signature.count("[REDACTED:")))
    return shown


def show_uses(path: str, data: bytes, lines: dict[int, bool], name: str) -> list[ShownUse]:
    """Uses of `name` on `lines` (line → whether a definition is there), each line once,
    shown redacted; a line whose use is not visible once redacted is left out."""
    found = _texts(data, lines)
    word = name.rsplit(".", 1)[-1]
    shown: list[ShownUse] = []
    for number in sorted(lines):
        hit = found.get(number)
        if hit is None or not visible(hit, word):
            continue
        text = _cut(hit.shown, MAX_USE_CHARS)
        shown.append(ShownUse(path, number, text, lines[number], text.count("[REDACTED:")))
    return shown
