"""Secret values written on the lines below their name: `API_KEY = (`, `token = \"\"\"`.

    API_KEY = (
        "Xk9#mP2qLw8zAbCdEf12"
    )
    api_key = \"\"\"
    Xk9#mP2qLw8zAbCdEf12\"\"\"

The name line ends with an opener (`(`, `[`, `\"\"\"`, `'''`, a backtick or a shell `\\`);
the value is on the next line, or on deeper-indented lines after it. Each such line
is judged on its own (the test of an assignment, quotes and a trailing `,` `)` `\\`
taken off) and, when it is a secret, replaced whole by the marker (indentation kept).

Judging a line needs only the name line and the lines between: an indented line's
context runs back to the nearest unindented line (how read_file picks context), which
is at or above the name line, so a window shows what the whole file shows.
"""

from __future__ import annotations

import re

from lantern.workspace.redact.values import (
    KEYWORD,
    Edit,
    LineOf,
    Span,
    apply_edits,
    is_secret_value,
    marker,
)

MAX_VALUE_LINES = 8

_OPENER = re.compile(
    r"^[ \t]*+(?:(?:export|const|let|var|final|static|readonly|private|public)[ \t]++){0,3}+"
    r"(?P<q>[\"']?)"
    rf"(?=[\w.-]{{0,60}}?{KEYWORD})(?P<name>[A-Za-z_][\w.-]{{0,63}}+)(?P=q)"
    r"[ \t]*+(?::=|=>|=|:)[ \t]*+(?:\"\"\"|'''|[(\[`\\])[ \t]*+\r?$",
    re.M,
)
# Where such a line may end: found first, as it is cheaper than trying every line.
_OPENER_END = re.compile(r"(?:\"\"\"|'''|[(\[`\\])[ \t]*+\r?$", re.M)
_CLOSER = re.compile(r"[ \t]*+(?:\"\"\"|'''|[)\]`])?[ \t]*+[,;]?[ \t]*+\r?")
_EDGES = " \t\r,;\\)]"
_BARE = re.compile(r"[^\s\"'`()\[\]{}<>,;]++")


def _value(line: str) -> tuple[str, bool]:
    """The candidate value of one line: edges and one pair of quotes taken off."""
    value = line.strip(_EDGES)
    for quote in ('"""', "'''", '"', "'", "`"):
        if value.startswith(quote):
            value = value[len(quote) :]
            if value.endswith(quote):
                value = value[: -len(quote)]
            return value, True
        if value.endswith(quote) and quote in ('"""', "'''"):
            return value[: -len(quote)], True
    return value, False


def continued_values(text: str) -> tuple[str, list[Span]]:
    """Redact values that sit on the lines below a secret-like name and an opener."""
    edits: list[Edit] = []
    spans: list[Span] = []
    line_of = LineOf(text)
    done = 0
    for end in _OPENER_END.finditer(text):
        if end.start() < done:
            continue
        key = _OPENER.match(text, text.rfind("\n", 0, end.start()) + 1)
        if key is None or key.end() != end.end():
            continue
        at = key.end() + 1
        for n in range(MAX_VALUE_LINES):
            if at > len(text):
                break
            stop = text.find("\n", at)
            stop = len(text) if stop < 0 else stop
            line = text[at:stop]
            if not line.strip() or _CLOSER.fullmatch(line) or (n and line[:1] not in " \t"):
                break
            value, quoted = _value(line)
            plain = quoted or _BARE.fullmatch(value) is not None  # not a call or subscript
            if plain and is_secret_value(key.group("name"), value, bare=not quoted):
                body = at + len(line) - len(line.lstrip(" \t"))
                edits.append((body, at + len(line.rstrip("\r")), marker("assignment")))
                number = line_of(at)
                spans.append(("assignment", number, number))
            at = stop + 1
        done = at
    return apply_edits(text, edits), spans
