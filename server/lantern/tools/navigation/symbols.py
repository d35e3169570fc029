"""Names the navigation tools look up: a bare identifier or `Class.member`."""

from __future__ import annotations

import re

_IDENT = r"(?:[^\W\d]|\$)[\w$]*"
_NAME = re.compile(rf"{_IDENT}(?:\.{_IDENT})*")
MAX_NAME_CHARS = 200


def symbol_name(value: str) -> str:
    """A pydantic check: letters, digits, `_` and `$`, dots only between parts."""
    if not _NAME.fullmatch(value):
        raise ValueError(
            "must be an identifier or Class.member (letters, digits, _ and $; "
            "a dot only between two names)"
        )
    return value


def last_segment(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def match_rank(qualified: str, wanted: str) -> int | None:
    """0 when a definition's qualified name is `wanted` exactly, 1 when it ends with
    `.wanted` (a member or nested definition of that name), None otherwise."""
    if qualified == wanted:
        return 0
    if qualified.endswith("." + wanted):
        return 1
    return None
