"""Secrets with no `NAME=` of their own in front, or with characters the assignment rule
stops at: passwords on command lines (`mysql -pX`, `sshpass -p X`, `redis-cli -a X`,
`docker login -p X`), in query and connection strings (`?password=`, `;Password=`,
Azure SAS `sig=`), credentials after `Bearer`/`Basic` anywhere (the line below an
`"Authorization":` key, a log line), JWK private members (`"d": "…"`), and a whole-line
`NAME=value` whose value holds `:`, `=` or brackets (a Django `SECRET_KEY` in `.env`).

Only the value is replaced. No pattern crosses a line end; each starts at a literal or a
small character set and uses possessive quantifiers, so each is linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lantern.workspace.redact.values import (
    KEYWORD,
    LineOf,
    Span,
    is_placeholder,
    is_secret_value,
    looks_random,
    marker,
)

# --- lines worth a scan --------------------------------------------------------------------


def _on_lines(
    text: str, literals: tuple[str, ...], fix: Callable[[str, int], str], *, fold: bool = False
) -> str:
    """`text` with `fix(line, line number)` applied to each line holding one of `literals`
    (found by `str.find`, so other lines cost nothing; `fold`: case-insensitively).
    Non-ASCII text with `fold` is scanned whole, since lower-casing may change lengths."""
    if fold and not text.isascii():
        return fix(text, 0)
    hay = text.lower() if fold else text
    lines: set[int] = set()
    for literal in literals:
        pos = hay.find(literal)
        while pos >= 0:
            lines.add(text.rfind("\n", 0, pos) + 1)
            end = text.find("\n", pos)
            pos = -1 if end < 0 else hay.find(literal, end)
    if not lines:
        return text
    parts: list[str] = []
    done = 0
    line_of = LineOf(text)
    for start in sorted(lines):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        parts += [text[done:start], fix(text[start:end], line_of(start))]
        done = end
    parts.append(text[done:])
    return "".join(parts)


# --- command lines ------------------------------------------------------------------------

_QWORD = r"""(?:"(?P<dq>[^"\n]++)"|'(?P<sq>[^'\n]++)'|(?P<pw>[^\s"'`;|&<>]++))"""
# A command that takes a password as a word of its own, and the flags that give it.
_COMMAND = re.compile(
    r"(?<![\w.-])(?P<tool>mysql\w*+|mariadb[\w-]*+|sshpass|redis-cli|"
    r"(?:docker|podman|nerdctl|buildah|skopeo|helm(?:[ \t]++registry)?+|oras)[ \t]++login)"
    r"(?![\w.-])[^\n]*+"
)
_FLAGS = {
    # `-pSECRET` (attached; `-p` alone prompts), `--password=SECRET`, `--password SECRET`
    "mysql": re.compile(rf"(?<![\w-])(?:-p(?=\S)|--password[= ][ \t]*+){_QWORD}"),
    "sshpass": re.compile(rf"(?<![\w-])-p[ \t]*+{_QWORD}"),
    "redis": re.compile(rf"(?<![\w-])(?:-a|--pass)[ \t]++{_QWORD}"),
    "login": re.compile(rf"(?<![\w-])(?:-p|--password)(?:[ \t]++|=){_QWORD}"),
}


def _flags_for(tool: str) -> re.Pattern[str]:
    if tool.startswith(("mysql", "mariadb")):
        return _FLAGS["mysql"]
    if tool == "sshpass":
        return _FLAGS["sshpass"]
    if tool == "redis-cli":
        return _FLAGS["redis"]
    return _FLAGS["login"]


def _is_reference(value: str) -> bool:
    """`$PW`, `$(cat f)`, `%s`, `<pw>`, `{pw}`, `[password]` (a usage line), `-` (stdin),
    an option that follows."""
    return is_placeholder(value) or value.startswith(("{", "[", "-")) or value in {"***", ""}


def _replace_group(match: re.Match[str], groups: tuple[str, ...], rule: str) -> str | None:
    """The match with its first present group of `groups` replaced by the marker."""
    for group in groups:
        if match.group(group) is not None:
            start, end = match.span(group)
            whole, offset = match.group(), match.start()
            return whole[: start - offset] + marker(rule) + whole[end - offset :]
    return None


def command_passwords(text: str, spans: list[Span]) -> str:
    def fix(line: str, number: int) -> str:
        def one_command(command: re.Match[str]) -> str:
            def replace(match: re.Match[str]) -> str:
                value = match.group("dq") or match.group("sq") or match.group("pw")
                if _is_reference(value):
                    return match.group()
                spans.append(("command_password", number, number))
                return _replace_group(match, ("dq", "sq", "pw"), "command_password") or ""

            tool = command.group("tool")
            once = tool == "sshpass"  # `sshpass -p X ssh -p 2222 host`: the 2nd is a port
            return _flags_for(tool).sub(replace, command.group(), count=1 if once else 0)

        return _COMMAND.sub(one_command, line)

    return _on_lines(text, ("mysql", "mariadb", "sshpass", "redis-cli", "login"), fix)


# --- query and connection strings ------------------------------------------------------------

_PASSWORD_PARAM = r"(?i:password|passwd|pwd|pass|sig|signature)"
_QUERY = re.compile(
    rf"[?&;](?:[ \t]*+)(?P<name>{_PASSWORD_PARAM}|(?=[\w.-]{{0,40}}?{KEYWORD})[\w.-]{{1,40}}+)"
    r"[ \t]*+=(?P<value>[^&;\s\"'`<>#]++)"
)


def query_secrets(text: str, spans: list[Span]) -> str:
    """`…?user=a&password=x`, `;Password=x;`, `&sig=…` (Azure SAS), `?access_token=…`."""
    if "=" not in text:
        return text
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        name, value = match.group("name"), match.group("value")
        lowered = name.lower()
        if lowered in {"sig", "signature"}:
            secret = len(value) >= 16 and not is_placeholder(value)
        elif re.fullmatch(_PASSWORD_PARAM, name):
            secret = len(value) >= 3 and not _is_reference(value) and "(" not in value
        else:
            secret = is_secret_value(name, value, bare=False)
        if not secret:
            return match.group()
        line = line_of(match.start())
        spans.append(("query_secret", line, line))
        return _replace_group(match, ("value",), "query_secret") or ""

    return _QUERY.sub(replace, text)


# --- Bearer / Basic anywhere ---------------------------------------------------------------

_SCHEME = re.compile(
    r"(?<![\w-])(?:Bearer|BEARER|bearer|Basic|BASIC)[ \t]{1,8}+"
    r"(?P<value>[A-Za-z0-9._~+/-]{12,}+=*+)(?![\w\[{(])"
)


def scheme_credentials(text: str, spans: list[Span]) -> str:
    """A credential after `Bearer`/`Basic`, wherever its `Authorization` key is."""

    def fix(line: str, first: int) -> str:
        line_of = LineOf(line)

        def replace(match: re.Match[str]) -> str:
            if not looks_random(match.group("value"), bare=False):
                return match.group()
            number = first + line_of(match.start())
            spans.append(("auth_header", number, number))
            return _replace_group(match, ("value",), "auth_header") or ""

        return _SCHEME.sub(replace, line)

    return _on_lines(text, ("bearer", "basic"), fix, fold=True)


# --- JWK private members ------------------------------------------------------------------

_JWK = re.compile(
    r"""(?P<q>["'])(?:d|p|q|dp|dq|qi|k)(?P=q)[ \t]*+:[ \t]*+(?P=q)(?P<value>[\w-]{20,}+)(?P=q)"""
)


def jwk_members(text: str, spans: list[Span]) -> str:
    """The private members of a JSON Web Key: `d`, `p`, `q`, `dp`, `dq`, `qi`, and `k`."""
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        if not looks_random(match.group("value"), bare=False):
            return match.group()
        line = line_of(match.start())
        spans.append(("jwk_private", line, line))
        return _replace_group(match, ("value",), "jwk_private") or ""

    return _JWK.sub(replace, text)


# --- NAME=value lines (.env) --------------------------------------------------------------

# A whole line `NAME=value` (no spaces around `=`, not indented unless a YAML list item
# `- NAME=value`), the value running to the line end with no whitespace and holding a
# character the assignment rule stops at. Indented lines are code (`key=f(x),`).
_ENV_LINE = re.compile(
    r"(?m:^(?:[ \t]*+-[ \t]++)?+(?:export[ \t]++)?"
    rf"(?=[\w.-]{{0,60}}?{KEYWORD})(?P<name>[A-Za-z_][\w.-]{{0,63}}+)"
    r"=(?P<value>[^\s\"'`#][^\s]*+)[ \t]*+\r?$)"
)
_KEYWORD_LITERALS = ("key", "secret", "token", "pass", "pw", "credential", "auth")
_CODE_SHAPE = re.compile(r"[\w.]*+(?:\(.*\)|\[.*\])[,;]?")


def env_values(text: str) -> tuple[str, list[Span]]:
    """`NAME=value` lines whose value holds `:`, `=` or brackets; runs before the
    assignment rule, which would stop at the first of them."""
    spans: list[Span] = []

    def fix(line: str, first: int) -> str:
        line_of = LineOf(line)

        def replace(match: re.Match[str]) -> str:
            value = match.group("value")
            if not any(c in value for c in ":=()") or _CODE_SHAPE.fullmatch(value):
                return match.group()
            if "[REDACTED:" in value or not is_secret_value(match.group("name"), value, bare=True):
                return match.group()
            number = first + line_of(match.start())
            spans.append(("assignment", number, number))
            return _replace_group(match, ("value",), "assignment") or ""

        return _ENV_LINE.sub(replace, line)

    if "=" not in text:
        return text, spans
    return _on_lines(text, _KEYWORD_LITERALS, fix, fold=True), spans


def plain_secrets(text: str) -> tuple[str, list[Span]]:
    """Every rule of this module, in turn."""
    spans: list[Span] = []
    for step in (command_passwords, query_secrets, scheme_credentials, jwk_members):
        text = step(text, spans)
    return text, spans
