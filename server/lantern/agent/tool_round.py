"""One round of tool calls: run them and report them.

Native calls and calls written as text run through the very same path
(`run_tool`: jail, approvals, audit), share the output budget and the
"already returned above" bookkeeping; only the history entries differ, and
those are the protocol's (`protocol.ToolProtocol.history`). The loop writes
them after every call finished, so a cancelled round leaves no assistant
message whose calls have no results.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lantern.agent.conversation import Conversation
from lantern.agent.protocol.seam import CallResult
from lantern.agent.reply import ModelError, ToolCall, Usage
from lantern.approvals.approver import ApprovalRequest, Approver, Decision, PromptObserver
from lantern.approvals.approver import Outcome as ApprovalOutcome
from lantern.audit import AuditLog
from lantern.errors import ToolError
from lantern.tools.arguments import parse_arguments
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.navigation.caches import CACHES
from lantern.tools.registry import run_tool, summarize
from lantern.workspace.roots import Workspace

StopReason = Literal[
    "done", "max_steps", "budget", "timeout", "cancelled", "error", "filtered", "truncated"
]
Event = dict[str, Any]
EventSink = Callable[[Event], None]


@dataclass
class ToolCallRecord:
    id: str
    name: str
    arguments: Any
    status: str = "running"
    code: str | None = None
    bytes: int = 0
    ms: float = 0.0  # the call's own time: without `wait_ms`
    wait_ms: float = 0.0  # time waiting for the user to answer an approval prompt

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "summary": summarize(self.name, self.arguments),
            "status": self.status,
            "bytes": self.bytes,
            "ms": round(self.ms, 1),
        }
        if self.wait_ms > 0:
            data["waitMs"] = round(self.wait_ms, 1)
        if self.code:
            data["code"] = self.code
        return data


@dataclass
class RunState:
    """The state of one question while it runs; what a stop leaves behind."""

    conv: Conversation
    emit: EventSink
    calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    texts: list[str] = field(default_factory=list)
    streaming: list[str] = field(default_factory=list)  # the reply being streamed now
    tool_bytes: int = 0
    notes: list[str] = field(default_factory=list)  # for the next request only
    outcome: ModelError | None = None  # why the answer was filtered or cut off
    warnings: list[ModelError] = field(default_factory=list)


@dataclass
class Ran:
    """One finished call of a round."""

    call: ToolCall
    args: dict[str, Any] | None  # None: the arguments were not a JSON object
    record: ToolCallRecord
    result: ToolResult

    def finished(self) -> CallResult:
        return CallResult(self.call, self.args, self.result.content, self.result.code)


def _status(code: str | None) -> str:
    if code is None:
        return "done"
    return "denied" if code in ("denied_by_user", "approval_timeout") else "error"


def _call_key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, separators=(",", ":"))


def tool_event(record: ToolCallRecord, status: str) -> Event:
    event: Event = {
        "kind": "tool",
        "callId": record.id,
        "name": record.name,
        "arguments": record.arguments,
        "summary": summarize(record.name, record.arguments),
        "status": status,
    }
    if status not in ("running", "awaiting_approval"):
        event |= {"bytes": record.bytes, "ms": round(record.ms, 1)}
        if record.wait_ms > 0:
            event["waitMs"] = round(record.wait_ms, 1)
        if record.code:
            event["code"] = record.code
    return event


class _Observer:
    """Turns the prompt one call opens into `awaiting_approval` / `running` tool events."""

    #: Prompts answered so far, in this process (any question, any conversation).
    answered_total = 0

    def __init__(self, run: RunState, record: ToolCallRecord) -> None:
        self.run, self.record = run, record

    def asking(self, request: ApprovalRequest) -> None:
        self.run.emit(tool_event(self.record, "awaiting_approval") | {"message": request.message()})

    def answered(self, request: ApprovalRequest, decision: Decision) -> None:
        _Observer.answered_total += 1
        if decision.allowed:
            self.run.emit(tool_event(self.record, "running"))


class _TimedGate:
    """The approver as one call sees it, timed: the time spent deciding while a person
    answered a prompt (this call's, or one it waited behind: one prompt at a time) is the
    call's `wait_ms`, kept out of its `ms`. A decision by a rule or a remembered answer
    takes no await, so no prompt can be answered meanwhile: it adds no wait."""

    def __init__(self, inner: Approver, record: ToolCallRecord) -> None:
        self.inner, self.record = inner, record

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> ApprovalOutcome:
        answered = _Observer.answered_total
        started = time.perf_counter()
        try:
            return await self.inner.decide(request, observer=observer)
        finally:
            if _Observer.answered_total != answered:
                self.record.wait_ms += (time.perf_counter() - started) * 1000


class ToolRunner:
    def __init__(
        self,
        workspace: Workspace,
        approvals: Approver,
        audit: AuditLog | None,
        max_tool_output_bytes: int,
    ) -> None:
        self.workspace = workspace
        self.approvals = approvals
        self.audit = audit
        self.limit = max_tool_output_bytes

    async def run(self, run: RunState, calls: list[ToolCall]) -> list[Ran]:
        """Run every call concurrently; results, events and bookkeeping in call order."""
        jobs: list[asyncio.Task[ToolResult]] = []
        started: list[Ran] = []
        first_of: dict[str, str] = {}
        for call in calls:
            try:
                args: dict[str, Any] | None = parse_arguments(call.arguments)
                recorded_args: Any = args
            except ToolError:
                args, recorded_args = None, call.arguments[:500]
            record = ToolCallRecord(call.id, call.name, recorded_args)
            started.append(Ran(call, args, record, ToolResult("")))
            run.calls.append(record)
            run.emit(tool_event(record, "running"))
            key = _call_key(call.name, args) if args is not None else None
            earlier = (run.conv.answered.get(key) or first_of.get(key)) if key else None
            if earlier is not None:
                jobs.append(asyncio.create_task(_repeat(earlier)))
                continue
            if key is not None:
                first_of[key] = call.id
            jobs.append(asyncio.create_task(self._one(run, record, call, args)))
        try:
            results = await asyncio.gather(*jobs)
        except BaseException:
            for job in jobs:
                job.cancel()
            raise
        for ran, result in zip(started, results, strict=True):
            ran.result = result
            self._within_budget(run, result)
            ran.record.status = _status(result.code)
            ran.record.code = result.code
            ran.record.bytes = result.bytes
            run.emit(tool_event(ran.record, ran.record.status))
            if ran.args is not None and (not result.is_error or result.code == "denied_by_user"):
                run.conv.answered.setdefault(_call_key(ran.call.name, ran.args), ran.call.id)
            if not result.is_error:
                run.conv.seen.add_all(result.seen)
        return started

    def _within_budget(self, run: RunState, result: ToolResult) -> None:
        size = result.bytes
        if run.tool_bytes + size > self.limit:
            result.is_error, result.code = True, "too_large"
            result.content = (
                f"[not sent: this question's tool output budget ({self.limit:,} bytes, "
                "maxToolOutputBytes) is used up]"
            )
            run.tool_bytes = self.limit
            return
        run.tool_bytes += size

    async def _one(
        self, run: RunState, record: ToolCallRecord, call: ToolCall, args: dict[str, Any] | None
    ) -> ToolResult:
        """Run one call; `args` are its arguments as parsed above (None: they did not parse,
        and `run_tool` reports why from the raw text)."""
        started = time.perf_counter()
        ctx = ToolContext(
            self.workspace,
            _TimedGate(self.approvals, record),
            conversation_id=run.conv.id,
            observer=_Observer(run, record),
            call_id=call.id,
            code_cache=CACHES.for_conversation(run.conv.id),
        )
        result = await run_tool(
            call.name, call.arguments if args is None else args, ctx, self.audit
        )
        record.ms = max((time.perf_counter() - started) * 1000 - record.wait_ms, 0.0)
        return result


async def _repeat(earlier: str) -> ToolResult:
    return ToolResult(
        f"[already returned above in call {earlier}; use that result instead of repeating the call]"
    )
