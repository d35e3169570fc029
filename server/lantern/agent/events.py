"""What a question reports while it runs: one typed value per event (docs/protocol.md#events).

`Agent.ask` hands each event to its `EventSink` as it happens; the CLI prints
them (`cli/output.EventPrinter`) and the language server sends each as a
`lantern/event` notification, written by the one converter (`lantern.converter`;
the field rules are `lantern.shapes`'). Every event has a `kind`; those of kind
`status` also a `status`, and each status is its own type:

- `ThinkingStatus`: a model turn starts (show only the last turn's text as the answer);
- `RetryingStatus`: a broken stream is asked again (`resetAnswer`);
- `ProtocolStatus`: the conversation switched to the text tool protocol (said once);
- `WarningStatus`: something to know although the question goes on (`prompt_truncated`);
- `CompactedStatus`: the history was made to fit the context window (summarized, or shortened);
- `StopStatus`: the question ended; its `status` is the result's `stopReason`.

`ToolCallRecord` is one call as the result's `toolCalls` lists it; `tool_event` is
the same call as a `tool` event at one status. `StopReason` is why a question
stopped: the last event's `status`, and the result's `stopReason`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lantern.agent.failure import Detail
from lantern.agent.tokens import Usage
from lantern.shapes import OPTIONAL, tenths, wire
from lantern.tools.registry import summarize

StopReason = Literal[
    "done", "max_steps", "budget", "timeout", "cancelled", "error", "filtered", "truncated"
]  # the last event's `status`, and the result's `stopReason`

_TENTHS = wire(sent_as=tenths)
_OPTIONAL_TENTHS = wire(optional=True, sent_as=tenths)


@dataclass
class ToolCallRecord:
    """One tool call of the question, updated as it runs; a `toolCalls` item of the result."""

    id: str
    name: str
    arguments: Any  # the parsed arguments, or the raw text (500 characters) when not JSON
    summary: str = field(init=False)  # the call in one escaped line, from its tool
    status: str = "running"
    bytes: int = 0
    ms: float = field(default=0.0, metadata=_TENTHS)  # the call's own time: without `wait_ms`
    wait_ms: float = field(default=0.0, metadata=_OPTIONAL_TENTHS)
    """Time waiting for the user to answer an approval prompt."""
    code: str | None = field(default=None, metadata=OPTIONAL)

    def __post_init__(self) -> None:
        self.summary = summarize(self.name, self.arguments)


@dataclass(frozen=True)
class ToolEvent:
    """A call's status: `awaiting_approval` (with the prompt's `message`), `running`, then
    `done`, `error` or `denied` with its size and times."""

    kind: Literal["tool"] = field(default="tool", init=False)
    call_id: str
    name: str
    arguments: Any
    summary: str
    status: str
    bytes: int | None = field(default=None, metadata=OPTIONAL)
    ms: float | None = field(default=None, metadata=_OPTIONAL_TENTHS)
    wait_ms: float = field(default=0.0, metadata=_OPTIONAL_TENTHS)
    code: str | None = field(default=None, metadata=OPTIONAL)
    message: str | None = field(default=None, metadata=OPTIONAL)


def tool_event(record: ToolCallRecord, status: str, *, message: str | None = None) -> ToolEvent:
    """`record` at `status`; a finished call's event carries its size, times and code."""
    call = (record.id, record.name, record.arguments, record.summary, status)
    if status in ("running", "awaiting_approval"):
        return ToolEvent(*call, message=message)
    return ToolEvent(
        *call,
        bytes=record.bytes,
        ms=record.ms,
        wait_ms=record.wait_ms,
        code=record.code,
        message=message,
    )


@dataclass(frozen=True)
class AnswerDeltaEvent:
    """Streamed answer text (reasoning and tool-call markup never appear here)."""

    kind: Literal["answerDelta"] = field(default="answerDelta", init=False)
    text: str


@dataclass(frozen=True)
class ReasoningEvent:
    """Streamed private reasoning of a thinking model: never shown as the answer."""

    kind: Literal["reasoning"] = field(default="reasoning", init=False)
    text: str


@dataclass(frozen=True)
class ContextFill:
    """How full the context window is: `used` tokens (what the last request and its reply
    took, in the server's count when it gave one) of `window`, and where the window came
    from (`source`, words for people)."""

    used: int
    window: int
    source: str

    @property
    def warns(self) -> bool:
        """At 80% of the window: the next questions will be compacted soon."""
        return self.used * 5 >= self.window * 4


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: `turns` questions summarized or dropped, `outputs` tool
    outputs shortened, the history's tokens `before` and `after`; `summary` is the model's
    summary, `why` says why the turns were not summarized instead."""

    how: Literal["summarized", "shortened", "dropped"]
    before: int
    after: int
    turns: int = 0
    outputs: int = 0
    summary: str | None = field(default=None, metadata=OPTIONAL)
    why: str | None = field(default=None, metadata=OPTIONAL)

    def message(self) -> str:
        """`Earlier turns summarized (12,400 → 900 tokens)`, or what was shortened or
        dropped instead, and why."""
        sizes = f"{self.before:,} → {self.after:,} tokens"
        if self.how == "summarized":
            return f"Earlier turns summarized ({sizes})"
        parts = []
        if self.turns:
            parts.append(f"{self.turns} earlier {'turn' if self.turns == 1 else 'turns'} dropped")
        if self.outputs:
            s = "" if self.outputs == 1 else "s"
            parts.append(f"{self.outputs} old tool output{s} shortened")
        said = " and ".join(parts).capitalize()
        return f"{said} to fit the context window ({sizes})" + (f": {self.why}" if self.why else "")


@dataclass(frozen=True)
class UsageEvent:
    """The question's running token totals, and how full the window is."""

    kind: Literal["usage"] = field(default="usage", init=False)
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = field(default=False, metadata=OPTIONAL)
    context: ContextFill | None = field(default=None, metadata=OPTIONAL)

    @classmethod
    def of(cls, usage: Usage, context: ContextFill | None = None) -> UsageEvent:
        """The totals as they are now (the run's `Usage` keeps counting)."""
        return cls(usage.prompt_tokens, usage.completion_tokens, usage.estimated, context)


@dataclass(frozen=True)
class ThinkingStatus:
    kind: Literal["status"] = field(default="status", init=False)
    status: Literal["thinking"] = field(default="thinking", init=False)
    step: int


@dataclass(frozen=True)
class RetryingStatus:
    kind: Literal["status"] = field(default="status", init=False)
    status: Literal["retrying"] = field(default="retrying", init=False)
    message: str
    reset_answer: bool = field(default=True, init=False)  # the streamed text starts again


@dataclass(frozen=True)
class ProtocolStatus:
    kind: Literal["status"] = field(default="status", init=False)
    status: Literal["protocol"] = field(default="protocol", init=False)
    protocol: str
    message: str


@dataclass(frozen=True)
class WarningStatus:
    kind: Literal["status"] = field(default="status", init=False)
    status: Literal["warning"] = field(default="warning", init=False)
    message: str
    detail: Detail


@dataclass(frozen=True)
class CompactedStatus:
    """The history was made to fit the window (`compaction` says how); `message` in words."""

    kind: Literal["status"] = field(default="status", init=False)
    status: Literal["compacted"] = field(default="compacted", init=False)
    message: str
    compaction: Compaction


@dataclass(frozen=True)
class StopStatus:
    """The last event: why the question stopped; `detail` as in the result."""

    kind: Literal["status"] = field(default="status", init=False)
    status: StopReason
    message: str | None  # sent as `null` when there is nothing to say
    detail: Detail | None = field(default=None, metadata=OPTIONAL)


Status = (
    ThinkingStatus | RetryingStatus | ProtocolStatus | WarningStatus | CompactedStatus | StopStatus
)
Event = ToolEvent | AnswerDeltaEvent | ReasoningEvent | UsageEvent | Status
EventSink = Callable[[Event], None]
