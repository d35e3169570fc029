"""Secrets with no `NAME=` of their own in front, or with characters the assignment rule
stops at: passwords on command lines (`mysql -pX`, `sshpass -p X`, `redis-cli -a X`,
`docker login -p X`), in query and connection strings (`?password=`, `;Password=`,
Azure SAS `sig=`), credentials after `Bearer`/`Basic` anywhere (the line below an
`"Authorization":` key, a log line), JWK private members (`"d": "…"`) and the private
parts of a .NET `<RSAKeyValue>`. (`NAME=value` whose value holds `:` or `=`: `env_lines.py`.)

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
    on_lines,
)

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

    return on_lines(text, ("mysql", "mariadb", "sshpass", "redis-cli", "login"), fix)


# --- query and connection strings ------------------------------------------------------------

_PASSWORD_PARAM = r"(?i:password|passwd|pwd|pass|sig|signature)"
# A parameter starts after `?`, `&`, `;`, or `&` written as a JSON or C escape (`\u0026`,
# `\x26`: Go's encoding/json writes `&` so). A value ends at the next of them, at a quote,
# an escaped quote or `\n`, or at a space; a SQL Server value may be braced
# (`password={a;b}`). A `#` does not end a password (JDBC URLs have no fragment).
_ESCAPED_STOP = r"\\(?:u0026|x26|[nrt\"'])"
_QUERY = re.compile(
    rf"(?:[?&;]|\\u0026|\\x26)[ \t]*+"
    rf"(?P<name>{_PASSWORD_PARAM}|(?=[\w.-]{{0,40}}?{KEYWORD})[\w.-]{{1,40}}+)[ \t]*+="
    r"(?:\{(?P<braced>[^{}\r\n]{1,256}+)\}(?![^&;\s\"'`<>\\])"
    rf"|(?P<value>(?:[^&;\s\"'`<>\\]++|(?!{_ESCAPED_STOP})\\)++))"
)
# `{password}`, `{0}`, `{pw!r}`: a format field, not a braced value.
_FORMAT_FIELD = re.compile(r"[A-Za-z_]\w*+(?:\.\w++|\[\w*+\])*+(?:![rsa])?+(?::[^{}]*+)?+|\d*+")


def query_secrets(text: str, spans: list[Span]) -> str:
    """`…?user=a&password=x`, `;Password=x;`, `&sig=…` (Azure SAS), `?access_token=…`."""
    if "=" not in text:
        return text
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        name, braced = match.group("name"), match.group("braced")
        password = re.fullmatch(_PASSWORD_PARAM, name) is not None
        group = "value" if braced is None else "braced"
        value = match.group(group)
        if not password:
            value = value.partition("#")[0]  # a URL's fragment
        if braced is not None:
            secret = _FORMAT_FIELD.fullmatch(braced) is None and not is_placeholder(braced)
        elif name.lower() in {"sig", "signature"}:
            secret = len(value) >= 16 and not is_placeholder(value)
        elif password:
            secret = len(value) >= 3 and not _is_reference(value) and "(" not in value
        else:
            secret = is_secret_value(name, value, bare=False)
        if not secret:
            return match.group()
        line = line_of(match.start())
        spans.append(("query_secret", line, line))
        start = match.start(group) - match.start()
        whole = match.group()
        return whole[:start] + marker("query_secret") + whole[start + len(value) :]

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

    return on_lines(text, ("bearer", "basic"), fix, fold=True)


# --- JWK private members ------------------------------------------------------------------

# The quotes may be escaped (`\"d\": \"…\"`: JSON inside a notebook or a string literal).
# A value with no closing quote (or tag, below) runs to the line's end: it was cut there.
_JWK = re.compile(
    r"""(?P<q>\\?+["'])(?:d|p|q|dp|dq|qi|k)(?P=q)[ \t]*+:[ \t]*+"""
    r"""(?P=q)(?P<value>[\w-]{20,}+)(?:(?P=q)|(?=\r?\n|\Z))"""
)
# The private parts of a .NET `<RSAKeyValue>` (`RSA.ToXmlString(true)`); `Modulus` and
# `Exponent` are public.
_RSA_KEY_VALUE = re.compile(
    r"<(?P<tag>D|P|Q|DP|DQ|InverseQ)>[ \t]*+(?P<value>[A-Za-z0-9+/]{16,}+={0,2}+)"
    r"(?:[ \t]*+</(?P=tag)>|(?=\r?\n|\Z))"
)


def _private_members(pattern: re.Pattern[str], rule: str) -> Callable[[str, list[Span]], str]:
    def members(text: str, spans: list[Span]) -> str:
        line_of = LineOf(text)

        def replace(match: re.Match[str]) -> str:
            if not looks_random(match.group("value"), bare=False):
                return match.group()
            line = line_of(match.start())
            spans.append((rule, line, line))
            return _replace_group(match, ("value",), rule) or ""

        return pattern.sub(replace, text)

    return members


# The private members of a JSON Web Key: `d`, `p`, `q`, `dp`, `dq`, `qi`, and `k`.
jwk_members = _private_members(_JWK, "jwk_private")
# `<D>`, `<P>`, `<Q>`, `<DP>`, `<DQ>` and `<InverseQ>` of a .NET `<RSAKeyValue>`.
rsa_key_values = _private_members(_RSA_KEY_VALUE, "rsa_key_value")


def plain_secrets(text: str) -> tuple[str, list[Span]]:
    """Every rule of this module, in turn."""
    spans: list[Span] = []
    steps = (command_passwords, query_secrets, scheme_credentials, jwk_members, rsa_key_values)
    for step in steps:
        text = step(text, spans)
    return text, spans
