"""A model in process, for tests whose subject is the agent loop and not HTTP.

`ScriptedModel` implements `lantern.agent.reply.ChatModel`: each `complete`
call takes the next scripted step, records what the loop sent, and either
streams and returns a `Say` or raises the scripted `ModelError`. It keeps the
contract the real client keeps: answer text only to `on_text` (tool-call
markup written as text is held back), a usage on every reply, and a
`finish_reason` of "tool_calls" when there are calls. What the real client
does on the wire (SSE, retries, error bodies) is tested against the HTTP fake.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lantern.agent.protocol import markup
from lantern.agent.reply import ChatTurn, ModelError, Reply, ToolCall, Usage


@dataclass
class Say:
    """One scripted reply."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """``{"id": "r1", "name": "read_file", "arguments": {...} | str}`` each; a dict is
    JSON-encoded, a str is passed as written (to script malformed arguments)."""
    reasoning: str = ""
    finish_reason: str | None = None
    """Defaults to "tool_calls" when there are calls, else "stop"."""
    usage: tuple[int, int] | None = None
    """(prompt, completion) tokens; None: estimated from characters, as the client does."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider fields for the assistant message, e.g. ``{"reasoning_content": ...}``."""
    chunks: int = 3
    """The answer text is streamed in about this many pieces."""
    chunk_delay: float = 0.0
    """Seconds between pieces."""
    stall: bool = False
    """Stream the first piece, then wait until cancelled (a model that stops sending)."""


@dataclass
class Sent:
    """One `complete` call as the loop made it."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_choice: str | None


class ScriptedModel:
    """Answers `complete` calls from a script; fails the test when the script runs out."""

    def __init__(self, *steps: Say | ModelError, model: str = "scripted-model") -> None:
        self._model = model
        self._steps: list[Say | ModelError] = list(steps)
        self.sent: list[Sent] = []

    @property
    def model(self) -> str:
        return self._model

    def add(self, *steps: Say | ModelError) -> None:
        self._steps.extend(steps)

    @property
    def steps_left(self) -> int:
        return len(self._steps)

    def messages(self, n: int) -> list[dict[str, Any]]:
        """The messages of the n-th call (0-based), as they were at the time of the call."""
        return self.sent[n].messages

    async def complete(self, turn: ChatTurn) -> Reply:
        self.sent.append(
            Sent(
                copy.deepcopy(list(turn.messages)),
                None if turn.tools is None else copy.deepcopy(list(turn.tools)),
                turn.tool_choice,
            )
        )
        on_text, on_reasoning = turn.on_text, turn.on_reasoning
        assert self._steps, f"the model was called {len(self.sent)} times; the script ran out"
        step = self._steps.pop(0)
        if isinstance(step, ModelError):
            raise step
        if step.reasoning and on_reasoning is not None:
            on_reasoning(step.reasoning)
        shown = markup.prose(step.content)
        for i, piece in enumerate(_pieces(shown, step.chunks)):
            if i and step.chunk_delay:
                await asyncio.sleep(step.chunk_delay)
            on_text(piece)
            if step.stall:
                await asyncio.Event().wait()  # until cancelled
        calls = [_call(i, c) for i, c in enumerate(step.tool_calls)]
        prompt = sum(len(json.dumps(m)) for m in turn.messages) // 4
        usage = (
            Usage(*step.usage)
            if step.usage is not None
            else Usage(prompt, (len(step.content) + 3) // 4, estimated=True)
        )
        return Reply(
            content=step.content,
            tool_calls=calls,
            finish_reason=step.finish_reason or ("tool_calls" if calls else "stop"),
            usage=usage,
            reasoning=step.reasoning,
            extra=dict(step.extra),
        )


def _pieces(text: str, parts: int) -> Iterable[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, parts)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _call(index: int, call: dict[str, Any]) -> ToolCall:
    arguments = call["arguments"]
    return ToolCall(
        id=call.get("id") or f"call_{index}",
        name=call["name"],
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
    )
