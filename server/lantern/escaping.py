"""Making strings we did not write safe to show: to the model, in a log, on a terminal.

A model (or a file name on disk) can put anything in a string: newlines that
start a fake line, terminal escape sequences (OSC 52 writes the clipboard),
lone surrogates that no UTF-8 encoder accepts. Everything here is total:
it never raises, whatever the input.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings, overrides and
# isolates (which reorder what a reader sees), and lone surrogates (no UTF-8 for them).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Terminal control sequences: CSI (ESC [ or 0x9B) with its parameters; OSC, DCS, SOS,
# PM and APC strings (ESC ] P X ^ _ or their C1 forms) up to their terminator (BEL or
# ST) or, unterminated, to the end; any other two-character ESC sequence.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x20-\x3f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# What is left to drop after sequences: controls other than newline and tab, C1,
# bidi controls, and surrogates (replaced below rather than dropped).
_DROP = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_line(text: str) -> str:
    """`text` on one line: controls, separators, bidi marks and surrogates JSON-escaped.

    Nothing in the result can start a new line, move the cursor or fail to
    encode as UTF-8. Backslashes are kept as they are, so ordinary names read
    unchanged.
    """
    return _UNSAFE.sub(lambda m: _SHORT.get(m[0]) or f"\\u{ord(m[0]):04x}", text)


def cap(text: str, limit: int = 200) -> str:
    """At most `limit` characters of `text`, saying how long it was when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text):,} chars)"


def for_log(value: object, limit: int = 200) -> str:
    """A model-chosen value as one bounded, escaped line (for the audit log)."""
    text = value if isinstance(value, str) else json_text(value)
    return escape_line(cap(text, limit))


def for_terminal(text: str) -> str:
    """Multi-line text for a terminal: escape sequences and controls removed.

    Newlines and tabs stay; a CR is kept only before a newline (as a newline);
    lone surrogates become U+FFFD.
    """
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _SURROGATE.sub("\ufffd", _DROP.sub("", text))


def json_text(value: Any) -> str:
    """Compact JSON that is always valid UTF-8 and safe to print on a terminal.

    Non-ASCII text stays readable; C1 controls, U+2028/2029, bidi controls and
    lone surrogates are written as `\\uXXXX` escapes (json.dumps already escapes
    C0). Such characters only occur inside JSON strings, so the document
    decodes to exactly the same value.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def replace_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD.

    For data on its way to an encoder that refuses them, e.g. a request to the
    model whose history holds a tool name the model made up. Dicts, lists and
    tuples are copied; other values are returned as they are.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {replace_surrogates(k): replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(replace_surrogates(v) for v in value)
    return value


def split_userinfo(url: str) -> tuple[str, str]:
    """(userinfo, the URL without it). The userinfo runs to the last `@` after `://`,
    whatever it holds: a password with an unescaped `/`, `?` or `#` is still password
    (urllib would read part of it as the host, the path or the fragment)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return "", url
    userinfo, _, host = rest.rpartition("@")
    return userinfo, f"{scheme}://{host}"


def public_url(url: str, keep: tuple[str, ...] = ()) -> str:
    """A URL as any text that leaves the process may show it: no userinfo (`user:key@`),
    no fragment, and of its query (which may carry a key) only the parameters in `keep`."""
    try:
        parts = urlsplit(split_userinfo(url)[1])
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in keep]
        return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
    except ValueError:  # not a URL urllib can read (a bad IPv6 host): nothing of it shown
        return "(the base URL)"
