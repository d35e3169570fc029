"""The agent loop of DESIGN section 6: question → model ⇄ tools → grounded answer.

One `Agent.ask` call answers one question in a conversation. It streams its
progress as events (`status`, `tool`, `answerDelta`, `usage`) through a
callback so the CLI and the language server render the same thing, and it
always returns a result: a limit, a model error or a cancellation ends the
question with the best partial answer and a `stopReason` that says why.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lantern.agent.conversation import Conversation, estimate_tokens
from lantern.agent.model import ModelClient, ModelError, Reply, ToolCall, Usage
from lantern.agent.prompts import system_prompt
from lantern.agent.references import Reference, resolve_references
from lantern.approvals import ApprovalRequest, Decision, prompt_observer
from lantern.audit import AuditLog
from lantern.config import Settings
from lantern.tools.base import Approvals, ToolContext, ToolResult
from lantern.tools.registry import parse_arguments, run_tool, tool_specs
from lantern.workspace.errors import ToolError
from lantern.workspace.roots import Workspace

StopReason = Literal["done", "max_steps", "budget", "timeout", "cancelled", "error"]
Event = dict[str, Any]
EventSink = Callable[[Event], None]

_CUT_CALL_NOTE = (
    "[Lantern] Your last reply reached the output limit while writing a tool call, so that "
    "call was not run. Make smaller calls or answer directly."
)
_EMPTY_NOTE = "[Lantern] Your last reply was empty. Answer the question, or call a tool."
_FINAL_NOTES = {
    "max_steps": "This is your last step: no more tool calls. Answer now from what you have "
    "seen, and say what you could not check.",
    "budget": "The tool output budget for this question is used up: no more tool calls. Answer "
    "now from what you have seen, and say what you could not check.",
}


@dataclass(frozen=True)
class Limits:
    max_steps: int = 20
    max_tool_output_bytes: int = 262144
    question_timeout: float = 300.0
    max_context_tokens: int = 32000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_steps=settings.max_steps,
            max_tool_output_bytes=settings.max_tool_output_bytes,
            question_timeout=settings.question_timeout_seconds,
            max_context_tokens=settings.max_context_tokens,
        )


@dataclass
class ToolCallRecord:
    id: str
    name: str
    arguments: Any
    status: str = "running"
    code: str | None = None
    bytes: int = 0
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "bytes": self.bytes,
            "ms": round(self.ms, 1),
        }
        if self.code:
            data["code"] = self.code
        return data


@dataclass
class AskResult:
    conversation_id: str
    answer: str
    references: list[Reference]
    tool_calls: list[ToolCallRecord]
    usage: Usage
    stop_reason: StopReason
    error: str | None = None
    error_kind: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "conversationId": self.conversation_id,
            "answer": self.answer,
            "references": [r.to_dict() for r in self.references],
            "toolCalls": [c.to_dict() for c in self.tool_calls],
            "usage": {
                "promptTokens": self.usage.prompt_tokens,
                "completionTokens": self.usage.completion_tokens,
            },
            "stopReason": self.stop_reason,
        }
        if self.error:
            data["error"] = self.error
        return data


@dataclass
class _Run:
    """The state of one question while it runs; what a stop leaves behind."""

    conv: Conversation
    emit: EventSink
    calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    texts: list[str] = field(default_factory=list)
    streaming: list[str] = field(default_factory=list)  # the reply being streamed now
    tool_bytes: int = 0
    forced: StopReason | None = None
    empty_retried: bool = False


def _status(code: str | None) -> str:
    if code is None:
        return "done"
    return "denied" if code in ("denied_by_user", "approval_timeout") else "error"


def _call_key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, separators=(",", ":"))


class _Observer:
    """Turns an approval prompt into `awaiting_approval` / `running` tool events."""

    def __init__(self, run: _Run, record: ToolCallRecord) -> None:
        self.run, self.record = run, record

    def asking(self, request: ApprovalRequest) -> None:
        self.run.emit(
            _tool_event(self.record, "awaiting_approval") | {"message": request.message()}
        )

    def answered(self, request: ApprovalRequest, decision: Decision) -> None:
        if decision.allowed:
            self.run.emit(_tool_event(self.record, "running"))


def _tool_event(record: ToolCallRecord, status: str) -> Event:
    event: Event = {
        "kind": "tool",
        "callId": record.id,
        "name": record.name,
        "arguments": record.arguments,
        "status": status,
    }
    if status not in ("running", "awaiting_approval"):
        event |= {"bytes": record.bytes, "ms": round(record.ms, 1)}
        if record.code:
            event["code"] = record.code
    return event


class Agent:
    def __init__(
        self,
        *,
        model: ModelClient,
        workspace: Workspace,
        approvals: Approvals,
        limits: Limits | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.model = model
        self.workspace = workspace
        self.approvals = approvals
        self.limits = limits or Limits()
        self.audit = audit
        self._tools = tool_specs()

    async def ask(
        self,
        question: str,
        conv: Conversation,
        on_event: EventSink | None = None,
        *,
        context: str | None = None,
    ) -> AskResult:
        """Answer `question` in `conv`; never raises for model, tool or limit trouble."""
        run = _Run(conv, on_event or (lambda _event: None))
        content = f"{context}\n\n{question}" if context else question
        conv.messages.append({"role": "user", "content": content})
        stop: StopReason = "done"
        error: ModelError | None = None
        answer = ""
        try:
            async with asyncio.timeout(self.limits.question_timeout):
                answer, stop = await self._loop(run)
        except TimeoutError:
            stop = "timeout"
        except ModelError as exc:
            stop, error = "error", exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            stop = "cancelled"
        if stop in ("timeout", "cancelled", "error"):
            answer = "".join(run.texts + run.streaming).strip()
            if answer:
                conv.messages.append({"role": "assistant", "content": answer})
        run.emit({"kind": "status", "status": stop, "message": error.message if error else None})
        return AskResult(
            conversation_id=conv.id,
            answer=answer,
            references=resolve_references(answer, self.workspace, conv.seen) if answer else [],
            tool_calls=run.calls,
            usage=run.usage,
            stop_reason=stop,
            error=error.message if error else None,
            error_kind=error.kind if error else None,
        )

    async def _loop(self, run: _Run) -> tuple[str, StopReason]:
        conv = run.conv
        system = {"role": "system", "content": system_prompt(self.workspace)}
        system_tokens = estimate_tokens([system])
        for step in range(1, self.limits.max_steps + 1):
            final = run.forced or (
                "max_steps" if step == self.limits.max_steps and step > 1 else None
            )
            conv.compact(self.limits.max_context_tokens, system_tokens)
            messages = [system, *conv.messages]
            if final is not None:
                messages.append({"role": "system", "content": _FINAL_NOTES[final]})
            run.emit({"kind": "status", "status": "thinking", "step": step})
            reply = await self._model_turn(run, messages, tools=final is None)
            if reply.tool_calls and final is None:
                if reply.finish_reason == "length":
                    # Never run a call the model was cut off while writing.
                    conv.messages.append({"role": "assistant", "content": reply.content or "…"})
                    conv.messages.append({"role": "user", "content": _CUT_CALL_NOTE})
                    continue
                run.texts.append(reply.content)
                await self._run_tools(run, reply)
                if run.tool_bytes >= self.limits.max_tool_output_bytes:
                    run.forced = "budget"
                continue
            if not reply.content.strip():
                if run.empty_retried:
                    raise ModelError("bad_request", "the model returned an empty reply twice")
                run.empty_retried = True
                conv.messages.append({"role": "user", "content": _EMPTY_NOTE})
                continue
            conv.messages.append({"role": "assistant", "content": reply.content})
            return reply.content, final or "done"
        # Only reached with max_steps == 1 and a reply that still wanted tools.
        return "".join(run.texts).strip(), "max_steps"

    async def _model_turn(self, run: _Run, messages: list[dict[str, Any]], *, tools: bool) -> Reply:
        sent = len(json.dumps(messages, ensure_ascii=False))
        started = time.perf_counter()
        outcome = "ok"
        reply: Reply | None = None

        def on_text(text: str) -> None:
            run.streaming.append(text)
            run.emit({"kind": "answerDelta", "text": text})

        def on_retry(why: str) -> None:
            run.streaming.clear()
            run.emit({"kind": "status", "status": "retrying", "message": why, "resetAnswer": True})

        try:
            reply = await self.model.complete(
                messages, self._tools if tools else None, on_text=on_text, on_retry=on_retry
            )
            run.streaming.clear()
            return reply
        except ModelError as exc:
            outcome = f"error:{exc.kind}"
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            usage = reply.usage if reply else None
            run.usage.add(usage)
            if usage is not None:
                run.emit(
                    {
                        "kind": "usage",
                        "promptTokens": run.usage.prompt_tokens,
                        "completionTokens": run.usage.completion_tokens,
                    }
                )
            if self.audit is not None:
                self.audit.model_request(
                    conversation=run.conv.id,
                    model=self.model.model,
                    prompt_tokens=usage.prompt_tokens if usage else None,
                    completion_tokens=usage.completion_tokens if usage else None,
                    bytes_sent=sent,
                    outcome=outcome,
                    ms=(time.perf_counter() - started) * 1000,
                )

    async def _run_tools(self, run: _Run, reply: Reply) -> None:
        """Run every call of one reply concurrently; one tool message per call id, in order."""
        stubs: list[dict[str, Any]] = []
        jobs: list[asyncio.Task[ToolResult]] = []
        records: list[ToolCallRecord] = []
        first_of: dict[str, str] = {}
        for call in reply.tool_calls:
            try:
                args: dict[str, Any] | None = parse_arguments(call.arguments)
                shown_args: Any = args
            except ToolError:
                args, shown_args = None, call.arguments[:500]
            # The history keeps valid JSON only: a broken call is kept as an empty stub.
            stubs.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(args or {})},
                }
            )
            record = ToolCallRecord(call.id, call.name, shown_args)
            records.append(record)
            run.calls.append(record)
            run.emit(_tool_event(record, "running"))
            key = _call_key(call.name, args) if args is not None else None
            earlier = (run.conv.answered.get(key) or first_of.get(key)) if key else None
            if earlier is not None:
                jobs.append(asyncio.create_task(_repeat(earlier)))
                continue
            if key is not None:
                first_of[key] = call.id
            jobs.append(asyncio.create_task(self._one_tool(run, record, call)))
        try:
            results = await asyncio.gather(*jobs)
        except BaseException:
            for job in jobs:
                job.cancel()
            raise
        run.conv.messages.append(
            {"role": "assistant", "content": reply.content or None, "tool_calls": stubs}
        )
        for call, record, result in zip(reply.tool_calls, records, results, strict=True):
            content = self._within_budget(run, result)
            record.status = _status(result.code)
            record.code = result.code
            record.bytes = len(content.encode("utf-8"))
            run.emit(_tool_event(record, record.status))
            run.conv.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            if not result.is_error or result.code == "denied_by_user":
                key = _call_key(call.name, parse_arguments(call.arguments))
                run.conv.answered.setdefault(key, call.id)
            if not result.is_error:
                run.conv.seen.add_all(result.shown)

    def _within_budget(self, run: _Run, result: ToolResult) -> str:
        size = result.bytes
        limit = self.limits.max_tool_output_bytes
        if run.tool_bytes + size > limit:
            result.is_error, result.code = True, "too_large"
            result.content = (
                f"[not sent: this question's tool output budget ({limit:,} bytes, "
                "maxToolOutputBytes) is used up]"
            )
            run.tool_bytes = limit
            return result.content
        run.tool_bytes += size
        return result.content

    async def _one_tool(self, run: _Run, record: ToolCallRecord, call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        prompt_observer.set(_Observer(run, record))  # this task's own context
        ctx = ToolContext(self.workspace, self.approvals, conversation_id=run.conv.id)
        result = await run_tool(call.name, call.arguments, ctx, self.audit)
        record.ms = (time.perf_counter() - started) * 1000
        return result


async def _repeat(earlier: str) -> ToolResult:
    return ToolResult(
        f"[already returned above in call {earlier}; use that result instead of repeating the call]"
    )
