"""What one model turn produces: the reply, its tool calls, token usage, and the error kinds.

Kept apart from the client so the stream assembler and the loop can share
these types without importing the HTTP side; `ChatModel` is what the loop asks
of a model, so it can run against something other than HTTP.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lantern.agent.failure import ErrorKind, Fix, ModelError
from lantern.agent.tokens import Usage

__all__ = [
    "ChatModel", "ChatTurn", "ErrorKind", "Fix", "ModelError", "Reply", "ToolCall", "Usage",
    "new_call_id",
]  # fmt: skip

_ID_CHARS = string.ascii_letters + string.digits


def new_call_id(taken: Collection[str] = ()) -> str:
    """Nine letters and digits, unique among `taken`: a call id every provider accepts
    back (Mistral accepts only this form)."""
    while True:
        made = "".join(secrets.choice(_ID_CHARS) for _ in range(9))
        if made not in taken:
            return made


@dataclass
class ToolCall:
    id: str  # always usable: made by the client when the provider sent none
    name: str
    arguments: str  # raw JSON text as the model wrote it
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider fields on the call that must go back verbatim, e.g. Gemini's
    ``{"extra_content": {"google": {"thought_signature": "..."}}}``."""


@dataclass
class Reply:
    content: str = ""
    """Answer text without <think> blocks. Tool-call markup written as text stays here
    (for the text tool protocol) but is never streamed as answer text."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None  # never None on success: estimated when the endpoint sent none
    reasoning: str = ""  # reasoning fields and <think> text: for display only
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider fields for the assistant message that must go back verbatim, e.g.
    ``{"reasoning_content": "..."}`` (DeepSeek)."""
    warning: ModelError | None = None
    """Something the user should know although the turn succeeded: the endpoint counted
    far fewer prompt tokens than were sent (it cut the prompt to fit its window)."""
    outcome: ModelError | None = None
    """Why the reply is not a whole answer, for `finish_reason` content_filter or length."""


def _ignore(_text: str) -> None:
    pass


@dataclass(frozen=True)
class ChatTurn:
    """What one model turn sends, and where its streamed parts go.

    `on_text` gets answer text only (no <think> blocks, no tool-call markup),
    `on_reasoning` the reasoning as it streams, `on_retry` the reason before the
    same turn is tried once more. `tool_choice` is sent only together with tools.
    """

    messages: Sequence[dict[str, Any]]
    tools: Sequence[dict[str, Any]] | None = None
    on_text: Callable[[str], None] = _ignore
    on_retry: Callable[[str], None] | None = None
    on_reasoning: Callable[[str], None] | None = None
    tool_choice: str | None = None


class ChatModel(Protocol):
    """What the agent loop needs of a model: its name and one streamed turn.

    `model.ModelClient` is the real one (any OpenAI-compatible URL); the loop's
    unit tests script one in process. `complete` raises `ModelError` for every
    failure and returns a `Reply` whose `usage` is never None.
    """

    @property
    def model(self) -> str: ...

    async def complete(self, turn: ChatTurn) -> Reply: ...
