"""JSON that a model or its server wrote, read with a bound on how deep it nests.

`json.loads` recurses once per level: 100,000 `[` raise `RecursionError`, which is no
`ValueError` and escapes every `except ValueError`; a value nested just under the
interpreter's limit breaks whatever walks it next (`json.dumps`, a merge, a copy).
Nothing a model or an endpoint sends nests more than a few levels, so text nested
deeper than `MAX_DEPTH` is refused as invalid JSON before it is parsed. The check is
one linear scan (strings skipped whole), and costs nothing for text with few brackets.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "loads", "raw_decode"]

MAX_DEPTH = 64
# A string (to its closing quote, or to the end of an unclosed one), or a bracket.
_TOKEN = re.compile(r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+(?:"|\\?\Z)|[\[\]{}]')


def _too_deep(text: str, limit: int) -> int | None:
    """Where `text` first nests deeper than `limit`, or None."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for match in _TOKEN.finditer(text):
        char = text[match.start()]
        if char in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif char in "]}":
            depth = max(0, depth - 1)
    return None


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, except that text nested deeper than `max_depth` raises
    `json.JSONDecodeError` (a `ValueError`), as any other invalid JSON does."""
    where = _too_deep(text, max_depth)
    if where is not None:
        raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", text, where)
    try:
        return json.loads(text)
    except RecursionError:  # not reached with a sane limit; never let it escape
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


_DECODER = json.JSONDecoder()


def raw_decode(text: str, at: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """`json.JSONDecoder().raw_decode(text, at)` (one JSON value at `at`, and where it
    ends), refusing a value nested deeper than `max_depth` as `loads` does."""
    try:
        value, end = _DECODER.raw_decode(text, at)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, at) from None
    where = _too_deep(text[at:end], max_depth)
    if where is not None:
        raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", text, at + where)
    return value, end
