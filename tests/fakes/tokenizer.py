"""A stand-in for a model server's tokenizer, for fakes that report token counts.

Real servers count with a byte-pair encoding, which no package here ships offline. This
counts the way such encodings behave on code and prose: text is split into pieces as
GPT-style pre-tokenizers split it (words with their leading space, runs of up to three
digits, runs of punctuation, whitespace), a long word costs a token per five letters, a
punctuation run one per two characters, and each chat message a few tokens of framing.
It is deterministic and deliberately not characters / 4, so an estimate has something to
be calibrated against.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

_PIECES = re.compile(r"'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?\d{1,3}| ?[^\sA-Za-z\d]+|\s+")
_MESSAGE_FRAMING = 4


def count(text: str) -> int:
    """The tokens of `text`."""
    total = 0
    for piece in _PIECES.findall(text):
        core = piece.strip()
        if not core:
            total += math.ceil(len(piece) / 4)
        elif core.isalpha():
            total += math.ceil(len(core) / 5)
        elif core.isdigit():
            total += 1
        else:
            total += math.ceil(len(core) / 2)
    return total


def count_request(
    messages: Iterable[Mapping[str, Any]], tools: Iterable[Mapping[str, Any]] | None = None
) -> int:
    """The prompt tokens of a chat request: each message's text, calls and framing, and
    the tool definitions as the server renders them into the prompt (their JSON)."""
    total = 0
    for message in messages:
        total += _MESSAGE_FRAMING + count(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            total += count(f"{function.get('name', '')} {function.get('arguments', '')}")
    if tools:
        total += count(json.dumps(list(tools)))
    return total
