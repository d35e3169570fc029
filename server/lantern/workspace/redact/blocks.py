"""Secrets that span lines: private key blocks and YAML values written below their key.

Every rule here replaces a secret line by line (each line of it becomes a marker,
its indentation kept), so the text keeps its number of lines and every line keeps
its number. Each function returns the new text and one span per secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from lantern.workspace.redact.values import (
    KEYWORD,
    Edit,
    LineOf,
    Span,
    apply_edits,
    is_placeholder,
    is_secret_value,
    marker,
)

# --- helpers -----------------------------------------------------------------------------


def _mark_lines(text: str, start: int, end: int, rule: str) -> list[Edit]:
    """Edits that turn every line of text[start:end] into the marker, keeping indentation.

    The first line is replaced from `start` on (what precedes it on its line stays);
    the last keeps what follows `end` on its line.
    """
    edits: list[Edit] = []
    pos = start
    first = True
    while True:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        body = pos if first else pos + len(text[pos:stop]) - len(text[pos:stop].lstrip(" \t"))
        if body < stop or first:
            edits.append((body, stop, marker(rule)))
        if nl < 0:
            return edits
        pos, first = nl + 1, False


def _private_keys(text: str, blocks: Iterable[tuple[int, int]]) -> tuple[str, list[Span]]:
    """Every line of each (start, stop) block, found in order, marked as a private key."""
    edits: list[Edit] = []
    spans: list[Span] = []
    line_of = LineOf(text)
    for start, stop in blocks:
        edits += _mark_lines(text, start, stop, "private_key")
        spans.append(("private_key", line_of(start), line_of(stop)))
    return apply_edits(text, edits), spans


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


# --- PEM, PGP and SSH2 (RFC 4716) private key blocks -------------------------------------------

# Words may be set apart by more than one space or a tab (a hand-edited or
# re-wrapped key is still a key).
_KEY_LABEL = r"(?:[A-Z0-9]++[ \t]{1,4}+){0,4}?PRIVATE[ \t]{1,4}+KEY(?:[ \t]{1,4}+BLOCK)?"
_SPACES = r"[ \t]{1,4}+"
_KEY_BEGIN = re.compile(rf"-{{4,5}}+[ \t]{{0,4}}+BEGIN{_SPACES}{_KEY_LABEL}[ \t]{{0,4}}+-{{4,5}}+")
_KEY_END = re.compile(rf"-{{4,5}}+[ \t]{{0,4}}+END{_SPACES}{_KEY_LABEL}[ \t]{{0,4}}+-{{4,5}}+")


def private_key_blocks(text: str) -> tuple[str, list[Span]]:
    """`-----BEGIN … PRIVATE KEY-----` / `---- BEGIN SSH2 … PRIVATE KEY ----` to its END
    line, or to the end of the text when there is none. END is searched once per BEGIN."""
    if "PRIVATE" not in text:
        return text, []
    return _private_keys(text, _key_blocks(text))


def _key_blocks(text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while (begin := _KEY_BEGIN.search(text, pos)) is not None:
        end = _KEY_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        yield begin.start(), stop
        pos = stop


# --- PuTTY .ppk ------------------------------------------------------------------------------

_PUTTY_START = re.compile(r"^[ \t]*+(?:PuTTY-User-Key-File-[0-9]++:|Private-Lines:)", re.M)
# Lines of a .ppk: `Header-Name: value` or base64.
_PUTTY_LINE = re.compile(
    r"[ \t]*+(?:[A-Za-z][A-Za-z0-9-]{0,40}+:[^\n]*+|[A-Za-z0-9+/=]++[ \t\r]*+)"
)
_PRIVATE_LINES = re.compile(r"[ \t]*+Private-Lines:[ \t]*+([0-9]{1,6})")
_PUTTY_LAST = re.compile(r"[ \t]*+Private-(?:MAC|Hash):")


def putty_keys(text: str) -> tuple[str, list[Span]]:
    """A PuTTY key from its `PuTTY-User-Key-File-N:` (or `Private-Lines: N`) line through
    its `Private-MAC:` line, or through the last line that still looks like .ppk."""
    if "PuTTY-User-Key-File-" not in text and "Private-Lines:" not in text:
        return text, []
    return _private_keys(text, _putty_blocks(text))


def _putty_blocks(text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while (start := _PUTTY_START.search(text, pos)) is not None:
        stop = _line_end(text, start.start())
        body = _private_lines(text, start.start(), stop)
        while stop < len(text):
            nxt = _line_end(text, stop + 1)
            if body > 0:  # `Private-Lines: N` says how many lines the key takes
                body -= 1
                stop = nxt
                continue
            if not _PUTTY_LINE.fullmatch(text, stop + 1, nxt):
                break
            last = _PUTTY_LAST.match(text, stop + 1, nxt) is not None
            body = _private_lines(text, stop + 1, nxt)
            stop = nxt
            if last:
                break
        yield start.start(), stop
        pos = stop


def _private_lines(text: str, start: int, end: int) -> int:
    found = _PRIVATE_LINES.match(text, start, end)
    return int(found.group(1)) if found else 0


# --- YAML values below their key -----------------------------------------------------------

# `password:` or `tls.key: |` (or `>-`, `|2`, ...) alone on its line, maybe a list item.
_YAML_KEY = re.compile(
    r"^(?P<indent>[ \t]*+(?:-[ \t]++)?)(?P<q>[\"']?)"
    rf"(?=[\w.-]{{0,60}}?{KEYWORD})(?P<name>[\w.-]{{1,64}}+)(?P=q)[ \t]*+:"
    r"[ \t]*+(?P<style>[|>][-+0-9]{0,2}+)?[ \t]*+(?:#[^\n]*+)?\r?$",
    re.M,
)
# Where such a line ends: found first, as a scan for `:` is fast.
_YAML_KEY_END = re.compile(r":[ \t]*+(?:[|>][-+0-9]{0,2}+[ \t]*+)?(?:#[^\n]*+)?\r?$", re.M)
# A first value line that is YAML structure (a nested mapping, a list, a comment, ...).
_STRUCTURE = re.compile(r"-(?:[ \t]|$)|[#\[{&*!?|>%@`]|[^\n]*?:(?:[ \t]|$)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _unquoted(value: str) -> tuple[str, bool]:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1], True
    return value, False


def yaml_values(text: str) -> tuple[str, list[Span]]:
    """`password:\\n  s3cr3t…` and `key: |\\n  …` under a secret-like key.

    A value on the next, deeper-indented line(s) is redacted line by line when it
    looks like a secret (the same test as an assignment). A block scalar (`|`, `>`)
    is redacted whole when any of its lines does. A nested mapping or list below
    the key is left to the other rules.

    Linear: the lines of a value (a block scalar, or a plain value that is not a
    nested mapping) are text, not keys, so the scan resumes after them; below a
    nested mapping only its first line is read before the scan goes on.
    """
    edits: list[Edit] = []
    spans: list[Span] = []
    line_of = LineOf(text)
    pos = 0
    for colon in _YAML_KEY_END.finditer(text):
        if colon.start() < pos:
            continue
        key = _YAML_KEY.match(text, text.rfind("\n", pos, colon.start()) + 1)
        if key is None:
            continue
        pos = key.end()
        block = key.group("style") is not None
        lines = _value_lines(text, key.end(), len(key.group("indent").expandtabs(1)), block)
        if lines and (block or not _STRUCTURE.match(text[lines[0][0] : lines[0][1]].strip())):
            pos = lines[-1][1]  # the value's lines hold no keys
        found = _yaml_secret(text, lines, key.group("name"), block=block)
        if not found:
            continue
        for start, end in found:
            body = start + _indent(text[start:end])
            edits.append((body, end, marker("assignment")))
        spans.append(("assignment", line_of(found[0][0]), line_of(found[-1][0])))
        pos = max(pos, found[-1][1])
    return apply_edits(text, edits), spans


def _value_lines(text: str, key_end: int, base: int, block: bool) -> list[tuple[int, int]]:
    """(start, end) of each line of the value below a key that ends at `key_end`: the
    deeper-indented lines (a plain value also ends at a blank line); for a plain value,
    only up to its first non-blank line when that line is YAML structure."""
    lines: list[tuple[int, int]] = []
    at = key_end + 1
    while at <= len(text) and key_end < len(text):
        end = _line_end(text, at)
        line = text[at:end].rstrip("\r")
        if line.strip():
            if _indent(line) <= base:
                break
        elif not block:
            break  # a plain value ends at a blank line
        lines.append((at, at + len(line)))
        if not block and len(lines) == 1 and _STRUCTURE.match(line.strip()):
            break  # a nested mapping or list: its keys are read on their own
        at = end + 1
    return lines


def _yaml_secret(
    text: str, lines: list[tuple[int, int]], name: str, *, block: bool
) -> list[tuple[int, int]]:
    """The content lines to redact (none when the value is not a secret)."""
    filled = [(s, e) for s, e in lines if text[s:e].strip()]
    if not filled:
        return []
    values = [_unquoted(text[s:e].strip()) for s, e in filled]
    if block:
        if any(is_secret_value(name, v, bare=False) for v, _ in values):
            return [
                (s, e)
                for (s, e), (v, _) in zip(filled, values, strict=True)
                if not is_placeholder(v)
            ]
        return []
    if _STRUCTURE.match(text[filled[0][0] : filled[0][1]].strip()):
        return []
    return [
        (s, e)
        for (s, e), (v, quoted) in zip(filled, values, strict=True)
        if is_secret_value(name, v, bare=not quoted)
    ]
