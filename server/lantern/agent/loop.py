"""The agent loop: question → model ⇄ tools → grounded answer.

One `Agent.ask` call answers one question in a conversation. It streams its
progress as events (`status`, `tool`, `answerDelta`, `reasoning`, `usage`)
through a callback so the CLI and the language server render the same thing,
and it always returns a result: a limit, a model error or a cancellation ends
the question with the best partial answer and a `stopReason` that says why.

Tools reach the model natively or, for endpoints and models without tool
calling, through the text protocol (`text_protocol`); `toolProtocol` picks
one, and `auto` switches a conversation to text once, when the endpoint
rejects tools or the model writes its calls as text.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, replace
from typing import Any

from lantern.agent import text_protocol
from lantern.agent.conversation import Conversation, estimate_tokens
from lantern.agent.message_order import with_notes
from lantern.agent.outcomes import cut_short
from lantern.agent.prompts import system_prompt_async
from lantern.agent.references import check_references
from lantern.agent.reply import ChatModel, ChatTurn, ModelError, Reply
from lantern.agent.result import AskResult, detail_json, usage_json
from lantern.agent.tool_round import (
    Event,
    EventSink,
    RunState,
    StopReason,
    ToolCallRecord,
    ToolRunner,
    native_history,
    text_history,
)
from lantern.approvals import Approver
from lantern.audit import AuditLog
from lantern.settings import Settings, ToolProtocol
from lantern.tools.registry import tool_specs
from lantern.workspace.roots import Workspace

__all__ = ["Agent", "AskResult", "Event", "EventSink", "Limits", "StopReason", "ToolCallRecord"]

_CUT_CALL_NOTE = (
    "[Lantern] Your last reply reached the output limit while writing a tool call, so that "
    "call was not run. Make smaller calls or answer directly."
)
_EMPTY_NOTE = "Your last reply was empty. Answer the question, or call a tool."
_FINAL_NOTES = {
    "max_steps": "This is your last step: no more tool calls. Answer now from what you have "
    "seen, and say what you could not check.",
    "budget": "The tool output budget for this question is used up: no more tool calls. Answer "
    "now from what you have seen, and say what you could not check.",
}


_DEFAULTS = Settings()


@dataclass(frozen=True)
class Limits:
    """The settings one question obeys. Defaults are the settings' defaults, stated in
    `lantern.settings` only; `question_timeout` is `questionTimeoutSeconds`."""

    max_steps: int = _DEFAULTS.max_steps
    max_tool_output_bytes: int = _DEFAULTS.max_tool_output_bytes
    question_timeout: float = _DEFAULTS.question_timeout_seconds
    max_context_tokens: int = _DEFAULTS.max_context_tokens
    tool_protocol: ToolProtocol = _DEFAULTS.tool_protocol  # how tools reach the model

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_steps=settings.max_steps,
            max_tool_output_bytes=settings.max_tool_output_bytes,
            question_timeout=settings.question_timeout_seconds,
            max_context_tokens=settings.max_context_tokens,
            tool_protocol=settings.tool_protocol,
        )


def _prose(content: str) -> str:
    """Reply text fit to show: any tool-call markup in it removed."""
    return text_protocol.strip_markup(content) if text_protocol.has_markup(content) else content


class Agent:
    def __init__(
        self,
        *,
        model: ChatModel,
        workspace: Workspace,
        approvals: Approver,
        limits: Limits | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.model = model
        self.workspace = workspace
        self.approvals = approvals
        self.limits = limits or Limits()
        self.audit = audit
        self._tools = tool_specs()
        self._runner = ToolRunner(workspace, approvals, audit, self.limits.max_tool_output_bytes)

    async def ask(
        self,
        question: str,
        conv: Conversation,
        on_event: EventSink | None = None,
        *,
        context: str | None = None,
    ) -> AskResult:
        """Answer `question` in `conv`; never raises for model, tool or limit trouble."""
        run = RunState(conv, on_event or (lambda _event: None))
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
        if conv.messages[-1].get("role") != "assistant":
            # Close the turn, so a follow-up question never comes right after tool results
            # (strict providers) or after another user message (strictly alternating templates).
            closing = answer or f"[Lantern] (no answer: the question stopped: {stop})"
            conv.messages.append({"role": "assistant", "content": closing})
        detail = error or (run.outcome if stop in ("filtered", "truncated") else None)
        final: Event = {"kind": "status", "status": stop, "message": None}
        if detail is not None:
            outcome = None if stop == "error" else stop
            final |= {"message": detail.message, "detail": detail_json(detail, outcome)}
        run.emit(final)
        return AskResult(
            conversation_id=conv.id,
            answer=answer,
            references=await check_references(answer, self.workspace, conv.seen),
            tool_calls=run.calls,
            usage=run.usage,
            stop_reason=stop,
            error=error.message if error else None,
            error_kind=error.kind if error else None,
            detail=detail,
            warnings=run.warnings,
            model=self.model.model,
        )

    def _uses_text(self, conv: Conversation) -> bool:
        mode = self.limits.tool_protocol
        return mode == "text" or (mode == "auto" and conv.tool_protocol == "text")

    def _switch_to_text(self, run: RunState, why: str) -> None:
        """`auto` only: this conversation uses the text protocol from now on; said once."""
        run.conv.tool_protocol = "text"
        run.emit(
            {
                "kind": "status",
                "status": "protocol",
                "protocol": "text",
                "message": f"model {self.model.model!r} {why}; using the text tool protocol",
            }
        )

    async def _loop(self, run: RunState) -> tuple[str, StopReason]:
        conv = run.conv
        base_prompt = await system_prompt_async(self.workspace)
        step = 0
        while step < self.limits.max_steps:
            step += 1
            final = run.forced or (
                "max_steps" if step == self.limits.max_steps and step > 1 else None
            )
            text = self._uses_text(conv)
            prompt = base_prompt + text_protocol.tools_prompt(self._tools) if text else base_prompt
            system = {"role": "system", "content": prompt}
            conv.compact(self.limits.max_context_tokens, estimate_tokens([system]))
            pending, run.notes = run.notes, []
            notes = [*pending, *([_FINAL_NOTES[final]] if final else [])]
            messages = with_notes([system, *conv.messages], notes)
            run.emit({"kind": "status", "status": "thinking", "step": step})
            try:
                reply = await self._model_turn(
                    run,
                    messages,
                    tools=not text and (final is None or _has_tool_calls(conv)),
                    tool_choice="none" if final is not None else None,
                )
            except ModelError as exc:
                if exc.kind != "tools_unsupported" or self.limits.tool_protocol != "auto":
                    raise
                self._switch_to_text(run, "does not take native tool calls here")
                run.notes = pending
                step -= 1  # the rejected request did not count as a step
                continue
            if reply.finish_reason == "content_filter":
                run.outcome = reply.outcome or cut_short("content_filter")
                return _prose(reply.content), "filtered"
            markup = not reply.tool_calls and text_protocol.has_markup(reply.content)
            if markup and not text and final is None:
                if self.limits.tool_protocol != "auto":
                    run.texts.append(text_protocol.strip_markup(reply.content))
                    raise ModelError(
                        "bad_request",
                        "the model wrote its tool calls as text, which toolProtocol 'native' "
                        "does not run; set toolProtocol to 'auto' or 'text'",
                    )
                self._switch_to_text(run, "writes its tool calls as text")
                text = True
            if final is None and (reply.tool_calls or (text and markup)):
                if reply.finish_reason == "length":
                    # Never run a call the model was cut off while writing.
                    conv.messages.append(
                        {"role": "assistant", "content": reply.content or "…", **reply.extra}
                    )
                    conv.messages.append({"role": "user", "content": _CUT_CALL_NOTE})
                    continue
                await self._tool_round(run, reply, text)
                run.empty_retried = False  # progress: a later empty reply gets its own nudge
                continue
            answer = text_protocol.strip_markup(reply.content) if markup else reply.content
            if reply.finish_reason == "length":  # the answer was cut off mid-way
                run.outcome = reply.outcome or cut_short("length")
                conv.messages.append({"role": "assistant", "content": answer or "…", **reply.extra})
                return answer, "truncated"
            if not answer.strip():
                if markup and final is not None:
                    break  # calls at the last step are not run; nothing else was said
                if run.empty_retried:
                    raise ModelError(
                        "bad_request", "the model returned an empty reply twice in a row"
                    )
                run.empty_retried = True
                run.notes.append(_EMPTY_NOTE)
                continue
            conv.messages.append({"role": "assistant", "content": answer, **reply.extra})
            return answer, final or "done"
        # The steps ran out without an answer: a reply that still wanted tools at the only
        # step (max_steps == 1), or an empty one at the last step.
        return "".join(run.texts).strip(), run.forced or "max_steps"

    async def _tool_round(self, run: RunState, reply: Reply, text: bool) -> None:
        """Run the reply's calls and record them in the history, natively or as text.

        Text markup that yields no call at all gets one correction; a second such reply
        ends the question with an error (its prose kept, its markup never shown)."""
        conv = run.conv
        if not text or reply.tool_calls:
            run.texts.append(_prose(reply.content))
            ran = await self._runner.run(run, reply.tool_calls)
            if not text:
                conv.messages.extend(native_history(reply, ran))
            else:  # native calls from an endpoint told of none: recorded as text
                written = "".join(text_protocol.markup(call) for call in reply.tool_calls)
                conv.messages.extend(
                    text_history(replace(reply, content=reply.content + written), ran, [])
                )
        else:
            parsed = text_protocol.parse(reply.content)
            if not parsed.calls:
                if run.markup_retried:
                    run.texts.append(parsed.prose)
                    raise ModelError(
                        "bad_request",
                        "the model's tool calls could not be read twice "
                        f"({'; '.join(parsed.errors)}); try a model that follows the "
                        "tool-call format",
                    )
                run.markup_retried = True
                conv.messages.append({"role": "assistant", "content": reply.content, **reply.extra})
                conv.messages.append(
                    {"role": "user", "content": text_protocol.correction(parsed.errors)}
                )
                return
            run.texts.append(parsed.prose)
            ran = await self._runner.run(run, parsed.calls)
            conv.messages.extend(text_history(reply, ran, parsed.errors))
        if run.tool_bytes >= self.limits.max_tool_output_bytes:
            run.forced = "budget"

    async def _model_turn(
        self,
        run: RunState,
        messages: list[dict[str, Any]],
        *,
        tools: bool,
        tool_choice: str | None = None,
    ) -> Reply:
        started = time.perf_counter()
        outcome = "ok"
        reply: Reply | None = None

        def on_text(text: str) -> None:
            run.streaming.append(text)
            run.emit({"kind": "answerDelta", "text": text})

        def on_reasoning(text: str) -> None:
            run.emit({"kind": "reasoning", "text": text})

        def on_retry(why: str) -> None:
            run.streaming.clear()
            run.emit({"kind": "status", "status": "retrying", "message": why, "resetAnswer": True})

        try:
            turn = ChatTurn(
                messages,
                self._tools if tools else None,
                on_text=on_text,
                on_retry=on_retry,
                on_reasoning=on_reasoning,
                tool_choice=tool_choice,
            )
            reply = await self.model.complete(turn)
            run.streaming.clear()
            if reply.warning is not None and not run.conv.warned_cut:
                run.conv.warned_cut = True  # once per conversation
                run.warnings.append(reply.warning)
                run.emit(
                    {
                        "kind": "status",
                        "status": "warning",
                        "message": reply.warning.message,
                        "detail": detail_json(reply.warning, "prompt_truncated"),
                    }
                )
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
                run.emit({"kind": "usage", **usage_json(run.usage)})
            if self.audit is not None:
                self.audit.model_request(
                    conversation=run.conv.id,
                    model=self.model.model,
                    prompt_tokens=usage.prompt_tokens if usage else None,
                    completion_tokens=usage.completion_tokens if usage else None,
                    bytes_sent=len(json.dumps(messages, ensure_ascii=False)),
                    outcome=outcome,
                    ms=(time.perf_counter() - started) * 1000,
                )


def _has_tool_calls(conv: Conversation) -> bool:
    """Whether the history holds native tool calls: then every request must declare the
    tools (Anthropic through a gateway, Bedrock), so the last step sends them with
    `tool_choice: "none"` instead of leaving them off."""
    return any(m.get("role") == "assistant" and m.get("tool_calls") for m in conv.messages)
