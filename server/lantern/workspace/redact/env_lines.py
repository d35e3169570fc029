"""`NAME=value` and `NAME: value` whose value holds `:`, `=` or brackets (a Django
`SECRET_KEY`, a Telegram token), redacted whole: the assignment rule stops at the first
of those characters. Runs before it.

Where such a pair is looked for:

- at a line's start (`.env`, `export NAME=…`, a YAML list item `- NAME=…`), also after
  a comment marker (`#`, `//`, `--`, `/*`, `*`, `;`, `%`, `<!--`, `'`, `REM`) or the
  quote that opens a JSON string (a notebook's output or source: `"NAME=…\\n",`);
- as YAML or INI, indented or not: `name: value`, `name = value`;
- where a string literal starts (`env := "NAME=…"`, `f('NAME: …')`);
- anywhere after a space when the name is an environment variable's (upper case): a
  log line, `docker run -e NAME=…`.

The value runs to the end of the line, or, in the last two forms, to a quote or a space;
a `\\n` escape and the JSON string's closing quote are not part of it. Code is left:
an indented `key=f(x),` (a keyword argument), values shaped like a call, a subscript
or a structure (`f(x)`, `a[1:2]`, `Optional[str]=None`, `{…}`, `[…]`), values that
hold a quote or a backslash (a string literal, a line continuation), and a URL with no
password in it.

Each pattern is tried only on lines that hold a secret-like word, starts at a line's
start, a quote or a space, and takes its value possessively: linear.
"""

from __future__ import annotations

import re

from lantern.workspace.redact.values import (
    KEYWORD,
    LineOf,
    Span,
    is_secret_value,
    marker,
    on_lines,
)

_NAME = rf"(?=[\w.-]{{0,60}}?{KEYWORD})(?P<name>[A-Za-z_][\w.-]{{0,63}}+)"
_SEPARATOR = r"(?P<sep>[ \t]*+(?:=|:(?=[ \t]))[ \t]*+)"
_COMMENT = r"(?:\#++|//++|--|/?\*++|;++|%++|<!--|'|REM(?=[ \t]))"
_LINE_START = re.compile(
    r"^(?P<lead>[ \t]*+(?P<marked>(?:\"[ \t]*+)?(?:" + _COMMENT + r"[ \t]*+)?"
    r"(?:-[ \t]++)?(?:export[ \t]++)?))"
    rf"{_NAME}{_SEPARATOR}"
    r"(?P<value>[^\s\"'`#][^\s]*+)(?:[ \t]++(?:\*/|-->))?[ \t]*+\r?$"
)
_STRING_START = re.compile(rf"[=(,:\[][ \t]*+[\"'`]{_NAME}{_SEPARATOR}(?P<value>[^\s\"'`]++)")
_ENV_NAME = re.compile(
    rf"(?<=[ \t])(?=[A-Z0-9_]{{0,60}}?{KEYWORD})(?P<name>[A-Z_][A-Z0-9_]{{0,63}}+)"
    r"(?P<sep>=|:[ \t]++)(?P<value>[^\s\"'`]++)"
)
_KEYWORD_LITERALS = ("key", "secret", "token", "pass", "pw", "credential", "auth")
_CALL_OR_SUBSCRIPT = re.compile(r"[\w.]*+(?:\(.*\)|\[.*\])[,;]?")
_CODE_CHARS = re.compile(r"[\w.()\[\]'\",:=]*+")
_PLAIN_URL = re.compile(r"[A-Za-z][\w+.-]*+://[^@\s]*+")


def _value_end(value: str, json_string: bool) -> int:
    """Where the value ends: before trailing `\\n` escapes and, inside a JSON string, its
    closing quote and comma."""
    if json_string:
        value = value.removesuffix(",").removesuffix('"')
    end = len(value)
    while end >= 2 and value[end - 2] == "\\" and value[end - 1] in "nrt":
        end -= 2
    return end


def _is_code(value: str) -> bool:
    """A call, a subscript, a structure, a string literal or a line continuation (quotes
    and backslashes: `r"…"`, `f(x).\\`), a URL with no password, or a value of code's
    characters only around a bracket (`Optional[str]=None`)."""
    if value.startswith(("{", "[")) or _CALL_OR_SUBSCRIPT.fullmatch(value):
        return True
    if any(c in value for c in "\"'`\\"):
        return True
    if _PLAIN_URL.fullmatch(value):
        return True
    return any(c in value for c in "()[]") and _CODE_CHARS.fullmatch(value) is not None


def env_values(text: str) -> tuple[str, list[Span]]:
    """Redact the value of each `NAME=value` / `NAME: value` above that holds `:`, `=`,
    `(` or `)` and looks like a secret."""
    spans: list[Span] = []

    def fix(line: str, first: int) -> str:
        line_of = LineOf(line)

        def replace(match: re.Match[str]) -> str:
            value = match.group("value")
            if match.re is _LINE_START:
                marked = match.group("marked")
                indented = match.group("lead").startswith((" ", "\t"))
                if indented and not marked and match.group("sep") == "=":
                    return match.group()  # `    key=f(x),`: a keyword argument
                value = value[: _value_end(value, marked.startswith('"'))]
            else:
                value = value[: _value_end(value, False)]
            if "[REDACTED:" in value or not any(c in value for c in ":=()"):
                return match.group()
            if _is_code(value) or not is_secret_value(match.group("name"), value, bare=True):
                return match.group()
            number = first + line_of(match.start())
            spans.append(("assignment", number, number))
            start = match.start("value") - match.start()
            whole = match.group()
            return whole[:start] + marker("assignment") + whole[start + len(value) :]

        for pattern in (_LINE_START, _STRING_START, _ENV_NAME):
            line = pattern.sub(replace, line)
        return line

    if "=" not in text and ":" not in text:
        return text, spans
    return on_lines(text, _KEYWORD_LITERALS, fix, fold=True), spans
