"""What goes out on stdout: JSON-RPC that every client's JSON decoder accepts.

A model can put lone surrogates (`"\\ud800"`) in an answer, a tool name or an
argument key. Python's `json.dumps` writes them as `\\ud800` escapes without
complaint, but strict decoders refuse such a message outright (Neovim's
`vim.json.decode`: "invalid unicode escape"), so the client would lose the
whole answer or event. Every frame is therefore checked on its way out and
any lone surrogate becomes U+FFFD, the Unicode replacement character, in keys
and values alike. Frames without a surrogate escape (nearly all) pass
through untouched.
"""

from __future__ import annotations

import json
import re

from pygls.io_ import StdoutWriter

from lantern.escaping import replace_surrogates

# A `\uD800`–`\uDFFF` escape; also matches a valid pair, which `safe_frame` then keeps.
_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SEPARATOR = b"\r\n\r\n"
_LENGTH = re.compile(rb"Content-Length:[ \t]*\d+", re.IGNORECASE)


def safe_frame(frame: bytes) -> bytes:
    """One `Content-Length` framed message, its body rewritten if it holds a lone surrogate."""
    head, separator, body = frame.partition(_SEPARATOR)
    if not separator or not _ESCAPE.search(body):
        return frame
    try:
        message = json.loads(body)
    except ValueError:
        return frame  # not ours to judge; pygls only writes JSON
    cleaned = replace_surrogates(message)
    if cleaned == message:
        return frame  # only valid surrogate pairs (an emoji written as two escapes)
    new_body = json.dumps(cleaned).encode("ascii")
    new_head = _LENGTH.sub(b"Content-Length: %d" % len(new_body), head, count=1)
    return new_head + separator + new_body


class SafeWriter(StdoutWriter):
    """pygls' stdout writer, with `safe_frame` applied to each message."""

    def write(self, data: bytes) -> None:
        super().write(safe_frame(data))
