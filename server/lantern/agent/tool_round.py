"""One question's tool calls: run them, report them, keep within the output budget.

Native calls and calls written as text run through the very same path
(`run_tool`: jail, approvals, audit), share the output budget and the
"already returned above" bookkeeping; only the history entries differ, and
those are the protocol's (`ModelSide.observe`). The loop writes them after
every call of a round finished, so a cancelled round leaves no assistant
message whose calls have no results.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lantern.agent.context import fit_share
from lantern.agent.conversation import Conversation
from lantern.agent.events import EventSink, ToolCallRecord, tool_event
from lantern.agent.protocol.seam import CallResult
from lantern.agent.reply import ToolCall
from lantern.approvals.approver import ApprovalRequest, Approver, Decision, Outcome, PromptObserver
from lantern.audit import AuditLog
from lantern.errors import ToolError
from lantern.tools.arguments import parse_arguments
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.navigation.caches import CACHES
from lantern.tools.navigator import Navigator
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace

#: How many calls of a round run at once; the others wait their turn, in call order.
#: A running call holds a few file descriptors (a search: a ripgrep process too), so
#: a turn of 1,500 calls near `ulimit -n 1024` cannot take every descriptor the
#: process has, and the audit log, the model's connection and each call keep theirs.
CALLS_AT_ONCE = 8


def _status(code: str | None) -> str:
    if code is None:
        return "done"
    return "denied" if code in ("denied_by_user", "approval_timeout") else "error"


def _call_key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, separators=(",", ":"))


class _Observer:
    """Turns the prompt one call opens into `awaiting_approval` / `running` tool events."""

    def __init__(self, emit: EventSink, record: ToolCallRecord) -> None:
        self.emit, self.record = emit, record

    def asking(self, request: ApprovalRequest) -> None:
        self.emit(tool_event(self.record, "awaiting_approval", message=request.message()))

    def answered(self, request: ApprovalRequest, decision: Decision) -> None:
        if decision.allowed:
            self.emit(tool_event(self.record, "running"))


class _Timed:
    """The approver as one call sees it: the time a person took (`Outcome.waited`: this
    call's prompt, or one it waited behind) is the call's `wait_ms`, kept out of its `ms`."""

    def __init__(self, inner: Approver, record: ToolCallRecord) -> None:
        self.inner, self.record = inner, record

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        outcome = await self.inner.decide(request, observer=observer)
        self.record.wait_ms += outcome.waited * 1000
        return outcome


@dataclass
class _Call:
    """One call of a round while it runs."""

    call: ToolCall
    args: dict[str, Any] | None  # None: the arguments were not a JSON object
    record: ToolCallRecord
    job: asyncio.Task[ToolResult]


class ToolRunner:
    """Runs one question's tool calls; `calls` records every one, `spent` the bytes of
    output they sent against `budget` (`maxToolOutputBytes`)."""

    def __init__(
        self,
        workspace: Workspace,
        approvals: Approver,
        audit: AuditLog | None,
        conv: Conversation,
        emit: EventSink,
        *,
        budget: int,
        room: Callable[[int], int] | None = None,
        navigator: Navigator | None = None,
    ) -> None:
        self.navigator = navigator
        self.workspace, self.approvals, self.audit = workspace, approvals, audit
        self.conv, self.emit, self.budget = conv, emit, budget
        self.room = room  # the tokens one of a round's n results may take in the window
        self.calls: list[ToolCallRecord] = []
        self.spent = 0
        self._slots = asyncio.Semaphore(CALLS_AT_ONCE)

    @property
    def exhausted(self) -> bool:
        """Whether the tool output budget is used up: the model must answer now."""
        return self.spent >= self.budget

    async def run(
        self, calls: list[ToolCall], approvals: Approver | None = None
    ) -> list[CallResult]:
        """Run the calls, `CALLS_AT_ONCE` at a time; results, events and bookkeeping in
        call order.
        `approvals`: the approver for these calls instead of the question's (a mention's)."""
        running: list[_Call] = []
        first_of: dict[str, str] = {}
        share = self.room(len(calls)) if self.room is not None else None
        try:
            for call in calls:
                running.append(self._start(call, first_of, approvals or self.approvals))
            results = await asyncio.gather(*(one.job for one in running))
        except BaseException:
            for one in running:
                one.job.cancel()
            raise
        done = zip(running, results, strict=True)
        return [self._finish(one, result, share) for one, result in done]

    def _start(self, call: ToolCall, first_of: dict[str, str], approvals: Approver) -> _Call:
        """Record `call` and start it, or point it at the same call made before."""
        try:
            args: dict[str, Any] | None = parse_arguments(call.arguments)
            recorded: Any = args
        except ToolError:
            args, recorded = None, call.arguments[:500]
        record = ToolCallRecord(call.id, call.name, recorded)
        self.calls.append(record)
        self.emit(tool_event(record, "running"))
        key = _call_key(call.name, args) if args is not None else None
        earlier = (self.conv.answered.get(key) or first_of.get(key)) if key else None
        if earlier is not None:
            return _Call(call, args, record, asyncio.create_task(_repeat(earlier)))
        if key is not None:
            first_of[key] = call.id
        job = asyncio.create_task(self._one(record, call, args, approvals))
        return _Call(call, args, record, job)

    def _finish(self, one: _Call, result: ToolResult, share: int | None) -> CallResult:
        if share is not None and not result.is_error:
            fitted = fit_share(result.content, share, self.conv.token_ratio, one.call.name)
            if fitted != result.content:  # which of its lines the model saw is not known now
                result.content, result.seen = fitted, []
        self._within_budget(result)
        record = one.record
        record.status, record.code, record.bytes = _status(result.code), result.code, result.bytes
        self.emit(tool_event(record, record.status))
        if one.args is not None and (not result.is_error or result.code == "denied_by_user"):
            self.conv.answered.setdefault(_call_key(one.call.name, one.args), one.call.id)
        if not result.is_error:
            self.conv.seen.add_all(result.seen)
        return CallResult(one.call, one.args, result.content, result.code)

    def _within_budget(self, result: ToolResult) -> None:
        size = result.bytes
        if self.spent + size > self.budget:
            result.is_error, result.code = True, "too_large"
            result.content = (
                f"[not sent: this question's tool output budget ({self.budget:,} bytes, "
                "maxToolOutputBytes) is used up]"
            )
            self.spent = self.budget
            return
        self.spent += size

    async def _one(
        self,
        record: ToolCallRecord,
        call: ToolCall,
        args: dict[str, Any] | None,
        approvals: Approver,
    ) -> ToolResult:
        """Run one call once a slot is free; `args` are its arguments as parsed (None: they
        did not parse, and `run_tool` reports why from the raw text)."""
        async with self._slots:
            started = time.perf_counter()
            ctx = ToolContext(
                self.workspace,
                _Timed(approvals, record),
                conversation_id=self.conv.id,
                observer=_Observer(self.emit, record),
                call_id=call.id,
                code_cache=CACHES.for_conversation(self.conv.id),
                navigator=self.navigator,
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
