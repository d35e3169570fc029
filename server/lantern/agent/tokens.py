"""Token counts (`Usage`), and Lantern's one token estimate: about four characters per token.

The estimate is used where no tokenizer is at hand: to budget a conversation before it
is sent (`conversation.py`), and to show usage when an endpoint reports none
(`provider/client.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lantern.shapes import OPTIONAL

CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 4  # a message's role and framing
_CALL_OVERHEAD = 8  # a tool call's id, name and framing
_STANDARD_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})


@dataclass
class Usage:
    """Token counts; sent as the result's `usage` (`estimated` only when true)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = field(default=False, metadata=OPTIONAL)
    """The endpoint sent no usage; counted as characters / 4."""

    def add(self, other: Usage | None) -> None:
        if other is not None:
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens
            self.estimated = self.estimated or other.estimated


def estimate_tokens(text: str) -> int:
    """The tokens in `text`, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def message_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """The tokens a list of Chat Completions messages takes, with its calls and any
    provider fields sent back (reasoning…)."""
    total = 0
    for message in messages:
        total += estimate_tokens(str(message.get("content") or "")) + _MESSAGE_OVERHEAD
        for call in message.get("tool_calls") or ():
            total += estimate_tokens(call["function"]["arguments"]) + _CALL_OVERHEAD
        if message.keys() - _STANDARD_KEYS:
            extra = {k: v for k, v in message.items() if k not in _STANDARD_KEYS}
            total += estimate_tokens(json.dumps(extra, ensure_ascii=False))
    return total
