"""The agent loop: question → model ⇄ tools → grounded answer.

One `Agent.ask` call answers one question in a conversation. It streams its
progress as events (`status`, `tool`, `answerDelta`, `reasoning`, `usage`)
through a callback so the CLI and the language server render the same thing,
and it always returns a result: a limit, a model error or a cancellation ends
the question with the best partial answer and a `stopReason` that says why.

How tools reach the model, natively or as text, is the protocol's business
(`protocol.ToolProtocol`): the loop asks it for the prompt, the tools to offer,
the calls in a reply and the history entries, and never asks which one it is.
Each step ends in a value (`steps`): an answer, a tool round, a retry, or a
switch of protocol that `auto` decided.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from lantern.agent import editor_context
from lantern.agent.conversation import Conversation
from lantern.agent.instructions import offer_once, with_instructions
from lantern.agent.message_order import with_notes
from lantern.agent.prompts import system_prompt_async
from lantern.agent.protocol.seam import Offer, Read, Switch, ToolProtocol, protocol_for
from lantern.agent.provider.outcomes import cut_short
from lantern.agent.provider.stream import ReplyTooLarge
from lantern.agent.references import check_references
from lantern.agent.reply import ChatModel, ChatTurn, ModelError, Reply, ToolCall
from lantern.agent.result import AskResult, detail_json, usage_json
from lantern.agent.steps import (
    Answered,
    Retried,
    Step,
    Switched,
    ToolsRan,
    corrected,
    retried_empty,
)
from lantern.agent.tokens import message_tokens
from lantern.agent.tool_round import (
    Event,
    EventSink,
    RunState,
    StopReason,
    ToolCallRecord,
    ToolRunner,
)
from lantern.approvals.approver import Approver
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.settings.model import ToolProtocol as ToolProtocolSetting
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
    `lantern.settings.model` only; `question_timeout` is `questionTimeoutSeconds`."""

    max_steps: int = _DEFAULTS.max_steps
    max_tool_output_bytes: int = _DEFAULTS.max_tool_output_bytes
    question_timeout: float = _DEFAULTS.question_timeout_seconds
    max_context_tokens: int = _DEFAULTS.max_context_tokens
    tool_protocol: ToolProtocolSetting = _DEFAULTS.tool_protocol  # how tools reach the model

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_steps=settings.max_steps,
            max_tool_output_bytes=settings.max_tool_output_bytes,
            question_timeout=settings.question_timeout_seconds,
            max_context_tokens=settings.max_context_tokens,
            tool_protocol=settings.tool_protocol,
        )


class Agent:
    def __init__(
        self,
        *,
        model: ChatModel,
        workspace: Workspace,
        approvals: Approver,
        limits: Limits | None = None,
        audit: AuditLog | None = None,
        project_instructions: bool = _DEFAULTS.project_instructions,
    ) -> None:
        self.model = model
        self.project_instructions = project_instructions  # the `projectInstructions` setting
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
        editor: editor_context.EditorContext | None = None,
    ) -> AskResult:
        """Answer `question` in `conv`; never raises for model, tool or limit trouble.

        `editor` (the editor's state when the user asked) puts a metadata block before
        the question, and the selected lines as Lantern's own `read_file` call."""
        run = RunState(conv, on_event or (lambda _event: None))
        message = {"role": "user", "content": question}
        conv.messages.append(message)  # the question alone, if the read is cancelled
        stop: StopReason = "done"
        error: ModelError | None = None
        answer = ""
        try:
            async with asyncio.timeout(self.limits.question_timeout):
                if editor is not None:
                    message["content"] = await self._with_editor(run, editor, question)
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
        return await self._close(run, answer, stop, error)

    async def _with_editor(
        self, run: RunState, editor: editor_context.EditorContext, question: str
    ) -> str:
        """The question after the editor's metadata and, when lines are selected, the
        result of reading them: one `read_file` call, run exactly as the model's are."""
        prepared = await editor_context.prepare(self.workspace, editor)
        if prepared is None:
            return question
        if prepared.read is None:
            return f"{prepared.metadata}\n\n{question}"
        call_id = f"editor_selection_{len(run.conv.messages)}"
        call = ToolCall(call_id, "read_file", editor_context.read_arguments(prepared.read))
        [ran] = await self._runner.run(run, [call])
        done = ran.result
        shown = editor_context.with_selection(prepared, call_id, done.content, not done.is_error)
        return f"{shown}\n\n{question}"

    async def _close(
        self, run: RunState, answer: str, stop: StopReason, error: ModelError | None
    ) -> AskResult:
        """End the turn in the history, say the final status, and make the result."""
        conv = run.conv
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

    def _protocol(self, conv: Conversation) -> ToolProtocol:
        return protocol_for(self.limits.tool_protocol, conv.tool_protocol, self._tools)

    def _final(self, run: RunState, step: int) -> StopReason | None:
        """Why this step must answer without tools: the tool output budget is used up,
        or it is the last step (of more than one); None: it may call tools."""
        if run.tool_bytes >= self.limits.max_tool_output_bytes:
            return "budget"
        return "max_steps" if step == self.limits.max_steps and step > 1 else None

    def _switch(self, run: RunState, switch: Switch) -> None:
        """This conversation uses `switch.to` from now on (`auto` only); said once."""
        run.conv.tool_protocol = switch.to.name
        run.emit(
            {
                "kind": "status",
                "status": "protocol",
                "protocol": switch.to.name,
                "message": f"model {self.model.model!r} {switch.why}; "
                f"using the {switch.to.name} tool protocol",
            }
        )

    async def _loop(self, run: RunState) -> tuple[str, StopReason]:
        if self.project_instructions:
            await offer_once(run.conv, self.workspace, self.approvals, self.audit)
        base_prompt = await system_prompt_async(self.workspace)
        steps: list[Step] = []
        step = 0
        while step < self.limits.max_steps:
            step += 1
            outcome = await self._step(run, base_prompt, step, steps)
            if isinstance(outcome, Answered):
                return outcome.answer, outcome.stop
            if isinstance(outcome, Switched):
                step -= 1  # the rejected request did not count as a step
            steps.append(outcome)
        # The steps ran out without an answer: a reply that still wanted tools at the only
        # step (max_steps == 1), or an empty one at the last step.
        return "".join(run.texts).strip(), self._final(run, step) or "max_steps"

    async def _step(self, run: RunState, base_prompt: str, step: int, steps: list[Step]) -> Step:
        """One request and what its reply comes to."""
        protocol = self._protocol(run.conv)
        final = self._final(run, step)
        system = {"role": "system", "content": protocol.system_prompt(base_prompt)}
        texts = (run.conv.instructions or []) if self.project_instructions else []
        kept = [system, *({"role": "user", "content": text} for text in texts)]
        run.conv.compact(self.limits.max_context_tokens, message_tokens(kept))
        notes = [*run.notes, *([_FINAL_NOTES[final]] if final else [])]
        messages = with_notes([system, *with_instructions(run.conv.messages, texts)], notes)
        run.emit({"kind": "status", "status": "thinking", "step": step})
        try:
            offer = protocol.offer(run.conv.messages, final is not None)
            reply = await self._model_turn(run, messages, offer)
        except ModelError as exc:
            switch = protocol.rejected(exc)
            if switch is None:
                raise
            self._switch(run, switch)
            return Switched(switch.to.name)  # its notes wait for the next request
        run.notes = []  # sent
        read = protocol.read(reply, final is not None)
        while isinstance(read, Switch):
            self._switch(run, read)
            protocol = read.to
            read = protocol.read(reply, final is not None)
        return await self._settle(run, protocol, reply, read, final, steps)

    async def _settle(
        self,
        run: RunState,
        protocol: ToolProtocol,
        reply: Reply,
        read: Read,
        final: StopReason | None,
        steps: list[Step],
    ) -> Step:
        """What `reply`, read by `protocol`, comes to: an answer, tools run, or a retry."""
        if reply.finish_reason == "content_filter":
            run.outcome = reply.outcome or cut_short("content_filter")
            return Answered(read.prose, "filtered")
        if final is None and read.wants_tools:
            return await self._act(run, protocol, reply, read, steps)
        answer = read.prose
        if reply.finish_reason == "length":  # the answer was cut off mid-way
            run.outcome = reply.outcome or cut_short("length")
            run.conv.messages.append({"role": "assistant", "content": answer or "…", **reply.extra})
            return Answered(answer, "truncated")
        if answer.strip():
            run.conv.messages.append({"role": "assistant", "content": answer, **reply.extra})
            return Answered(answer, final or "done")
        if read.markup and final is not None:
            # Calls at the last step are not run, and nothing else was said.
            return Answered("".join(run.texts).strip(), final)
        if retried_empty(steps):
            raise ModelError("bad_request", "the model returned an empty reply twice in a row")
        run.notes.append(_EMPTY_NOTE)
        return Retried("empty")

    async def _act(
        self, run: RunState, protocol: ToolProtocol, reply: Reply, read: Read, steps: list[Step]
    ) -> Step:
        """Run the reply's calls and record them in the history, as the protocol writes it.

        A call cut off by the output limit is never run. Markup that yields no call gets
        one correction; a second such reply ends the question with an error (its prose
        kept, its markup never shown)."""
        conv = run.conv
        if reply.finish_reason == "length":
            cut = {"role": "assistant", "content": reply.content or "…", **reply.extra}
            conv.messages.extend([cut, {"role": "user", "content": _CUT_CALL_NOTE}])
            return Retried("cut_call")
        if not read.calls:
            try:
                conv.messages.extend(protocol.correction(reply, read, again=corrected(steps)))
            except ModelError:
                run.texts.append(read.prose)
                raise
            return Retried("unreadable")
        run.texts.append(read.prose)
        ran = await self._runner.run(run, read.calls)
        conv.messages.extend(protocol.history(reply, read, [r.finished() for r in ran]))
        return ToolsRan()

    async def _model_turn(
        self,
        run: RunState,
        messages: list[dict[str, Any]],
        offer: Offer,
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
                offer.tools,
                on_text=on_text,
                on_retry=on_retry,
                on_reasoning=on_reasoning,
                tool_choice=offer.tool_choice,
            )
            try:
                reply = await self.model.complete(turn)
            except ReplyTooLarge as exc:  # what arrived, cut off like `finish_reason: length`
                reply, outcome = exc.reply, "too_large"
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
