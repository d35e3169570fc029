"""Secrets after a name on one line: `NAME=value` and its cousins, `<password>…</password>`,
passwords in URLs (`postgres://user:pass@host`) and in `curl -u user:pass`.

Only the value is replaced. No pattern crosses a line end.
"""

from __future__ import annotations

import re

from lantern.workspace.redact.values import (
    KEYWORD,
    KEYWORD_HINT,
    MIN_VALUE_LENGTH,
    LineOf,
    Span,
    is_placeholder,
    is_secret_value,
    marker,
)

_VALUE_CHAR = r"""[^\s"'`=:,;(){}\[\]<>\\]"""
_AUTH_SCHEME = r"(?:(?i:bearer|basic|token|bot)[ ]{1,8}+)?"  # "Authorization: Bearer <value>"
# A quoted value ends at its closing quote, or at the end of the line (a value cut there,
# or one that goes on past what is shown).
_SCHEME_BEFORE = re.compile(r"(?i:bearer|basic|token|bot)[ ]{1,8}$")
_ASSIGNMENT = re.compile(
    r"""
    (?<![A-Za-z0-9_.\-])                    # the name starts at a word boundary
    -{0,2}+                                 # --password=...
    (?P<nq>(?:\\?+["'])?)                   # "name": ... / 'name' => ... / \"name\":
    (?=[A-Za-z0-9_.\-]{0,60}?KEYWORD)
    (?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,63}+)
    (?P=nq)
    (?:                                     # a type between the name and `=`:
        [ \t]{0,8}+:[ \t]{0,8}+[A-Za-z_&][A-Za-z0-9_.|\[\],&'*<>\ \t]{0,64}+(?<=[ \t])(?==)
                                            # name: str = / NAME: &'static str = (Rust)
      | [ \t]{1,8}+[A-Za-z_*\[][A-Za-z0-9_.\[\]*]{0,63}+[ \t]{1,8}+(?==)
                                            # Password string = (Go)
    )?
    [ \t]{0,8}+(?::=|=>|=|:)[ \t]{0,8}+     # = : := =>
    (?:
        "SCHEME(?P<dq>[^"\r\n]{MIN,}+)(?:"|(?=\r?$))
      | 'SCHEME(?P<sq>[^'\r\n]{MIN,}+)(?:'|(?=\r?$))
      | `SCHEME(?P<bq>[^`\r\n]{MIN,}+)(?:`|(?=\r?$))
      | \\"SCHEME(?P<eq>(?:[^"\\\r\n]++|\\(?!"))++)(?:\\"|(?=\r?$))  # \"…\": JSON in a string
      | SCHEME(?P<bare>VALUE{MIN,}+={0,2}+)(?![^\s"'`=:,;){}\]<>\\])
    )
    """.replace("KEYWORD", KEYWORD)
    .replace("VALUE", _VALUE_CHAR)
    .replace("SCHEME", _AUTH_SCHEME)
    .replace("{MIN,}", f"{{{MIN_VALUE_LENGTH},}}"),
    re.VERBOSE | re.MULTILINE,
)


def assignments(text: str) -> tuple[str, list[Span]]:
    """Run the assignment pattern only on lines that name a secret-like keyword.

    No part of `_ASSIGNMENT` crosses a line end, so skipping the other lines gives the
    same result; it saves scanning every identifier of ordinary code. Non-ASCII text
    keeps the full scan, since `(?i)` also folds letters like `ſ` or the Kelvin sign.
    """
    spans: list[Span] = []
    line_of = LineOf(text)
    base = 0  # where the piece being scanned starts in `text`

    def replace(match: re.Match[str]) -> str:
        group = next(g for g in ("dq", "sq", "bq", "eq", "bare") if match.group(g) is not None)
        value = match.group(group)
        after_scheme = _SCHEME_BEFORE.search(match.string, match.start(), match.start(group))
        # After `Basic`/`Bearer`, anything but a plain word is a credential (base64 of
        # `user:pass` may be letters only).
        credential = (
            after_scheme is not None
            and len(value) >= MIN_VALUE_LENGTH
            and not is_placeholder(value)
            and not (value.isalpha() and value.islower())
        )
        if not credential and not is_secret_value(match.group("name"), value, bare=group == "bare"):
            return match.group()
        line = line_of(base + match.start())
        spans.append(("assignment", line, line))
        start, end = match.span(group)
        offset = match.start()
        whole = match.group()
        return whole[: start - offset] + marker("assignment") + whole[end - offset :]

    if not text.isascii():
        return _ASSIGNMENT.sub(replace, text), spans
    lowered = text.lower()
    pieces: list[str] = []
    pos = 0
    for hit in KEYWORD_HINT.finditer(lowered):
        if hit.start() < pos:
            continue  # that line is done
        base = max(pos, text.rfind("\n", pos, hit.start()) + 1)
        line_end = text.find("\n", hit.end())
        line_end = len(text) if line_end < 0 else line_end
        pieces += [text[pos:base], _ASSIGNMENT.sub(replace, text[base:line_end])]
        pos = line_end
    if not pieces:
        return text, []
    pieces.append(text[pos:])
    return "".join(pieces), spans


# --- <password>…</password> --------------------------------------------------------------

# The value ends at its closing tag, or at the line's end (a value cut there by a caller
# that shows only part of a long line, or one that goes on below).
_XML = re.compile(
    rf"<(?P<tag>(?=[\w:.-]{{0,60}}?{KEYWORD})[A-Za-z_][\w:.-]{{0,63}}+)"
    r"(?:[ \t][^<>\n]{0,256}+)?>(?P<value>[^<\r\n]++)"
    r"(?:(?P<close></(?P=tag)[ \t]*+>)|(?=\r?\n|\r?\Z))"
)
# An unclosed value is taken only when it is one run of a key's characters (base64, hex).
_KEY_CHARS = re.compile(r"[A-Za-z0-9+/=_.~-]++")


def _named_values(
    pattern: re.Pattern[str], name: str, text: str, spans: list[Span], *, strip: bool = False
) -> str:
    """Replace the `value` group of each `pattern` match whose `name` group names a secret
    and whose value looks like one; one `assignment` span per replaced line."""
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        value = match.group("value")
        unclosed = "close" in pattern.groupindex and match.group("close") is None
        if unclosed and _KEY_CHARS.fullmatch(value.strip()) is None:
            return match.group()
        if not is_secret_value(match.group(name), value.strip() if strip else value, bare=False):
            return match.group()
        line = line_of(match.start())
        spans.append(("assignment", line, line))
        start, end = match.span("value")
        whole, offset = match.group(), match.start()
        return whole[: start - offset] + marker("assignment") + whole[end - offset :]

    return pattern.sub(replace, text)


# --- URLs and curl ----------------------------------------------------------------------

# scheme://user:password@host. Passwords in connection strings are often not
# percent-encoded (`p@ss#w/rd?`), so the password runs to the last `@` of the word
# that is followed by a host, at most 256 characters (which keeps the scan linear).
# `host:8080/path@v2` is a port and a path, not a password.
_URL = re.compile(
    r"://(?P<user>[^\s:/?#@\"'`<>]*+):(?!\d{1,5}+(?:[/?#]|$))"
    r"(?P<pw>[^\s\"'`<>]{1,256})@(?=[\w\[%-])"
)
_CURL_LINE = re.compile(r"\bcurl\b[^\n]*+")
_CURL_USER = re.compile(
    r"(?<![\w-])(?:-u|--user|-U|--proxy-user)(?:[ \t]++|=)(?P<q>[\"']?)"
    r"(?P<user>[^\s:\"']*+):(?P<pw>[^\s\"']++)(?P=q)"
)


def _password_sub(
    pattern: re.Pattern[str], text: str, rule: str, first_line: int, spans: list[Span]
) -> str:
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        if is_placeholder(match.group("pw")):
            return match.group()
        line = first_line + line_of(match.start())
        spans.append((rule, line, line))
        start, end = match.span("pw")
        whole, offset = match.group(), match.start()
        return whole[: start - offset] + marker(rule) + whole[end - offset :]

    return pattern.sub(replace, text)


def url_passwords(text: str) -> tuple[str, list[Span]]:
    """The password of `scheme://user:password@host` (postgres, mongodb+srv, redis, amqp, …)
    and of `curl -u user:password` / `--user`."""
    spans: list[Span] = []
    if "://" in text:
        text = _password_sub(_URL, text, "url_password", 0, spans)
    if "curl" not in text:
        return text, spans
    parts: list[str] = []
    pos = 0
    line_of = LineOf(text)
    for line in _CURL_LINE.finditer(text):
        parts += [
            text[pos : line.start()],
            _password_sub(_CURL_USER, line.group(), "curl_password", line_of(line.start()), spans),
        ]
        pos = line.end()
    parts.append(text[pos:])
    return "".join(parts), spans


# --- define('DB_PASSWORD', 'value') -----------------------------------------------------------

# A quoted secret-like name, a comma, a quoted value: the arguments of `define(...)`
# (wp-config.php), `setenv(...)`, `config.set(...)`, `os.environ.setdefault(...)`.
_NAME_COMMA_VALUE = re.compile(
    rf"(?P<q>[\"'])(?=[\w.-]{{0,60}}?{KEYWORD})(?P<name>[A-Za-z_][\w.-]{{0,63}}+)(?P=q)"
    r"[ \t]{0,8}+,[ \t]{0,8}+(?P<vq>[\"'])(?P<value>[^\"'\r\n]{6,}+)(?P=vq)"
)


# `#define DB_PASSWORD "value"` (C, C++, Objective-C; `L"…"`, `u8"…"` too), also commented
# out or quoted (`// #define …`, `\"value\"` in a notebook).
_DEFINE = re.compile(
    rf"(?<!\w)\#[ \t]*+define[ \t]++(?=\w{{0,60}}?{KEYWORD})(?P<name>[A-Za-z_]\w{{0,63}}+)"
    r"[ \t]++(?:u8|[LuU])?+(?P<q>\\?+)\"(?P<value>[^\"\\\r\n]++)(?P=q)\""
)


def named_values(text: str) -> tuple[str, list[Span]]:
    """The value named by a secret-like name outside an assignment: the text of
    `<password>…</password>` / `<apiKey>…</apiKey>`, the argument after a quoted
    name in `define('DB_PASSWORD', 's3cr3t!')`, and a C `#define DB_PASSWORD "…"`."""
    spans: list[Span] = []
    if "define" in text:
        text = _named_values(_DEFINE, "name", text, spans)
    if "<" in text:
        text = _named_values(_XML, "tag", text, spans, strip=True)
    if "," in text:
        text = _named_values(_NAME_COMMA_VALUE, "name", text, spans)
    return text, spans
