"""The tool-protocol seam: how the tools reach the model and how its calls come back.

Two protocols, one interface. `NativeProtocol` uses the endpoint's tool
calling; `TextProtocol` describes the tools in the system prompt and reads the
calls the model writes as text. Each one owns, for its side:

- the system prompt's tool section (`system_prompt`);
- what a request sends as `tools` and `tool_choice` (`offer`);
- how calls are read from a reply (`read`). Call markup is what
  `markup.MARKERS` says: the one list the stream filter hides by, too;
- how an assistant turn and its results go into the history (`history`, and
  `correction` for markup that could not be read), and which history messages
  carry results (`result_ids`, for compaction).

The loop (`loop.Agent`) asks the protocol and never asks which one it holds.
Under `toolProtocol: auto` the native protocol decides when to give way to the
text one, when the endpoint rejects `tools` or the model writes its calls as
text, and says so with a `Switch` value; the loop applies it and reports it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from lantern.agent.protocol.markup import has_markup, parse, prose
from lantern.agent.protocol.text_words import (
    RESULTS_HEADER,
    Outcome,
    correction,
    markup,
    render_results,
    tools_prompt,
)
from lantern.agent.protocol.text_words import result_ids as text_result_ids
from lantern.agent.reply import ModelError, Reply, ToolCall
from lantern.settings.model import ToolProtocol as Mode

Name = Literal["native", "text"]
Message = dict[str, Any]


@dataclass(frozen=True)
class Offer:
    """What one request sends for tools: the tools (None: none) and `tool_choice`."""

    tools: Sequence[dict[str, Any]] | None = None
    tool_choice: str | None = None


@dataclass(frozen=True)
class Read:
    """A reply as the protocol reads it."""

    calls: list[ToolCall]
    prose: str  # the reply fit to show: without call markup
    errors: list[str] = field(default_factory=list)  # markup that could not be read, and why
    markup: bool = False  # the reply wrote its calls as text

    @property
    def wants_tools(self) -> bool:
        return bool(self.calls) or self.markup


@dataclass(frozen=True)
class CallResult:
    """One finished call, as the history records it."""

    call: ToolCall
    args: dict[str, Any] | None  # None: the arguments were not a JSON object
    content: str
    code: str | None = None


@dataclass(frozen=True)
class Switch:
    """This conversation goes on in protocol `to`; `why` finishes "model 'm' …"."""

    to: ToolProtocol
    why: str


class ToolProtocol(ABC):
    """How tools reach the model and how its calls come back; see the module docstring."""

    name: ClassVar[Name]

    def __init__(self, specs: Sequence[dict[str, Any]]) -> None:
        self.specs = specs

    @abstractmethod
    def system_prompt(self, base: str) -> str:
        """The system prompt: `base`, with this protocol's part."""

    @abstractmethod
    def offer(self, history: Sequence[Message], final: bool) -> Offer:
        """What a request sends for tools; `final`: the model must answer now."""

    def rejected(self, error: ModelError) -> Switch | None:
        """Whether a request the endpoint refused goes on in another protocol."""
        return None

    @abstractmethod
    def read(self, reply: Reply, final: bool) -> Read | Switch:
        """The calls and prose of `reply`, or the protocol that must read it instead."""

    @abstractmethod
    def correction(self, reply: Reply, read: Read, *, again: bool) -> list[Message]:
        """The history entries for a reply whose markup held no readable call. Raises
        `ModelError` where the question cannot go on (`again`: it was corrected before)."""

    @abstractmethod
    def history(self, reply: Reply, read: Read, results: Sequence[CallResult]) -> list[Message]:
        """The assistant turn that made the calls, then their results."""

    @staticmethod
    @abstractmethod
    def result_ids(message: Message) -> list[str] | None:
        """The call ids whose results `message` carries in this protocol; None: none."""


class NativeProtocol(ToolProtocol):
    """The endpoint's own tool calling. `fallback` (`auto` only): the protocol to give
    way to when the endpoint takes no tools or the model writes its calls as text."""

    name = "native"

    def __init__(
        self, specs: Sequence[dict[str, Any]], *, fallback: ToolProtocol | None = None
    ) -> None:
        super().__init__(specs)
        self.fallback = fallback

    def system_prompt(self, base: str) -> str:
        return base

    def offer(self, history: Sequence[Message], final: bool) -> Offer:
        if not final:
            return Offer(self.specs)
        # A history with native calls needs the tools declared on every request (Anthropic
        # through a gateway, Bedrock): then they are sent, with `tool_choice: "none"`.
        if any(m.get("role") == "assistant" and m.get("tool_calls") for m in history):
            return Offer(self.specs, "none")
        return Offer()

    def rejected(self, error: ModelError) -> Switch | None:
        if self.fallback is None or error.kind != "tools_unsupported":
            return None
        return Switch(self.fallback, "does not take native tool calls here")

    def read(self, reply: Reply, final: bool) -> Read | Switch:
        written = not reply.tool_calls and has_markup(reply.content)
        if written and not final and self.fallback is not None:
            return Switch(self.fallback, "writes its tool calls as text")
        return Read(reply.tool_calls, prose(reply.content), markup=written)

    def correction(self, reply: Reply, read: Read, *, again: bool) -> list[Message]:
        raise ModelError(
            "bad_request",
            "the model wrote its tool calls as text, which toolProtocol 'native' does not "
            "run; set toolProtocol to 'auto' or 'text'",
        )

    def history(self, reply: Reply, read: Read, results: Sequence[CallResult]) -> list[Message]:
        """The assistant message with its calls (provider fields kept), then one tool
        message per call id, in order. Broken arguments are kept as an empty object."""
        stubs = [
            {
                **r.call.extra,
                "id": r.call.id,
                "type": "function",
                "function": {"name": r.call.name, "arguments": json.dumps(r.args or {})},
            }
            for r in results
        ]
        assistant = {"role": "assistant", "content": reply.content or None, **reply.extra}
        return [
            assistant | {"tool_calls": stubs},
            *({"role": "tool", "tool_call_id": r.call.id, "content": r.content} for r in results),
        ]

    @staticmethod
    def result_ids(message: Message) -> list[str] | None:
        if message.get("role") != "tool":
            return None
        return [str(message.get("tool_call_id"))]


class TextProtocol(ToolProtocol):
    """Tools described in the system prompt, calls written as text (`markup`), all
    results of a reply in one user message (`text_words`)."""

    name = "text"

    def system_prompt(self, base: str) -> str:
        return base + tools_prompt(self.specs)

    def offer(self, history: Sequence[Message], final: bool) -> Offer:
        return Offer()

    def read(self, reply: Reply, final: bool) -> Read | Switch:
        if reply.tool_calls:  # native calls from an endpoint told of none: run all the same
            return Read(reply.tool_calls, prose(reply.content))
        if not has_markup(reply.content):
            return Read([], reply.content)
        parsed = parse(reply.content)
        return Read(parsed.calls, parsed.prose, parsed.errors, markup=True)

    def correction(self, reply: Reply, read: Read, *, again: bool) -> list[Message]:
        if again:
            raise ModelError(
                "bad_request",
                f"the model's tool calls could not be read twice ({'; '.join(read.errors)}); "
                "try a model that follows the tool-call format",
            )
        return [
            {"role": "assistant", "content": reply.content, **reply.extra},
            {"role": "user", "content": correction(read.errors)},
        ]

    def history(self, reply: Reply, read: Read, results: Sequence[CallResult]) -> list[Message]:
        """The reply as written (markup included; native calls written as markup), then
        one user message with every result, fenced and marked as untrusted."""
        written = "".join(markup(call) for call in reply.tool_calls)
        outcomes = [
            Outcome(r.call.id, r.call.name, r.call.arguments, r.content, r.code) for r in results
        ]
        return [
            {"role": "assistant", "content": reply.content + written, **reply.extra},
            {"role": "user", "content": render_results(outcomes, read.errors)},
        ]

    @staticmethod
    def result_ids(message: Message) -> list[str] | None:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            return None
        return text_result_ids(content) if content.startswith(RESULTS_HEADER) else None


def protocol_for(mode: Mode, used: Name, specs: Sequence[dict[str, Any]]) -> ToolProtocol:
    """The protocol a conversation that has used `used` so far asks in, under `mode`."""
    text = TextProtocol(specs)
    if mode == "text" or (mode == "auto" and used == "text"):
        return text
    return NativeProtocol(specs, fallback=text if mode == "auto" else None)


def result_ids(message: Message) -> list[str] | None:
    """The call ids whose results `message` carries, in either protocol's form (one
    history can hold both: `auto` switches mid-conversation); None: it carries none."""
    ids = NativeProtocol.result_ids(message)
    return ids if ids is not None else TextProtocol.result_ids(message)
