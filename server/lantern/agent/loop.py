"""The agent loop: question → model ⇄ tools → grounded answer.

`Agent.ask` answers one question in a conversation. Each step is query →
execute → observe: the model side (`model_side.ModelSide`) asks the model and
returns its prose and calls, the tool runner (`tool_round.ToolRunner`) runs the
calls, and the model side writes the calls and their results into the history.
Whatever breaks that flow is an `Interruption` carrying the messages to add:
`Answered` ends the question, `Retry` asks the model again.

Progress streams as events (`status`, `tool`, `answerDelta`, `reasoning`,
`usage`) through one callback, so the CLI and the language server render the
same thing, and a question always ends with a result: a limit, a model error or
a cancellation ends it with the best partial answer and a `stopReason` that
says why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lantern.agent import editor_context
from lantern.agent.conversation import Conversation
from lantern.agent.events import Event, EventSink, StopReason, StopStatus, ToolCallRecord
from lantern.agent.inputs import Mention
from lantern.agent.instructions import offer_once
from lantern.agent.mentions import Mentioned, with_reads
from lantern.agent.mentions import calls as mention_calls
from lantern.agent.model_side import ModelSide, Turn
from lantern.agent.protocol.seam import Message
from lantern.agent.provider.outcomes import cut_short
from lantern.agent.provider.window import ContextWindow, known_window
from lantern.agent.references import check_references
from lantern.agent.reply import ChatModel, ModelError, ToolCall
from lantern.agent.result import AskResult
from lantern.agent.tool_round import ToolRunner
from lantern.approvals.approver import Approver
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.tools.navigator import Navigator
from lantern.workspace.roots import Workspace

__all__ = ["Agent", "AskResult", "Event", "EventSink", "StopReason", "ToolCallRecord"]

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


class Interruption(Exception):
    """Something that breaks a step's query → execute → observe; `messages` go into the
    history before the loop goes on."""

    def __init__(self, messages: Sequence[Message] = ()) -> None:
        super().__init__()
        self.messages = list(messages)


class Answered(Interruption):
    """The question ends with `answer`, for `stop`; `why` is the model failure, or what cut
    the answer short (`filtered`, `truncated`)."""

    def __init__(
        self,
        answer: str,
        stop: StopReason,
        why: ModelError | None = None,
        messages: Sequence[Message] = (),
    ) -> None:
        super().__init__(messages)
        self.answer, self.stop, self.why = answer, stop, why


class Retry(Interruption):
    """The model is asked again: its reply was empty (`note` says so in the next request),
    its call markup could not be read, or it was cut off while writing a call (never run)."""

    def __init__(
        self,
        why: Literal["empty", "unreadable", "cut_call"],
        messages: Sequence[Message] = (),
        note: str | None = None,
    ) -> None:
        super().__init__(messages)
        self.why, self.note = why, note


@dataclass
class _Question:
    """One question while it runs."""

    conv: Conversation
    emit: EventSink
    model: ModelSide
    tools: ToolRunner
    empty_retried: bool = False  # an empty reply was retried since the last tool round
    corrected: bool = False  # the one correction for unreadable call markup was made


class Agent:
    def __init__(
        self,
        *,
        model: ChatModel,
        workspace: Workspace,
        approvals: Approver,
        settings: Settings | None = None,
        audit: AuditLog | None = None,
        window: ContextWindow | None = None,
        navigator: Navigator | None = None,
    ) -> None:
        self.model = model
        self.navigator = navigator  # the editor's language servers; None: syntax only
        self.workspace = workspace
        self.approvals = approvals
        self.settings = settings or Settings()  # the limits, the tool protocol, instructions
        self.audit = audit
        # The endpoint's window as found (`provider.window`); else what the settings say.
        self.window = window or known_window(self.settings, model.model)

    async def ask(
        self,
        question: str,
        conv: Conversation,
        on_event: EventSink | None = None,
        *,
        editor: editor_context.EditorContext | None = None,
        mentions: Sequence[Mention] = (),
    ) -> AskResult:
        """Answer `question` in `conv`; never raises for model, tool or limit trouble.

        `editor` (the editor's state when the user asked) puts a metadata block before
        the question, and the selected lines as Lantern's own `read_file` call;
        `mentions`, the files and folders the user named, are read (listed) before it
        without another prompt."""
        message = {"role": "user", "content": question}
        q = self._question(conv, on_event or (lambda _event: None), message)
        conv.messages.append(message)  # the question alone, if the read is cancelled
        try:
            async with asyncio.timeout(self.settings.question_timeout_seconds):
                if editor is not None:
                    message["content"] = await self._with_editor(q, editor, question)
                if mentions:
                    message["content"] = await self._with_mentions(q, mentions, message)
                answered = await self._run(q)
        except TimeoutError:
            answered = Answered(q.model.said(), "timeout")
        except ModelError as exc:
            answered = Answered(q.model.said(), "error", exc)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            answered = Answered(q.model.said(), "cancelled")
        return await self._close(q, answered)

    def _question(self, conv: Conversation, emit: EventSink, message: Message) -> _Question:
        model = ModelSide(
            self.model,
            self.workspace,
            self.settings,
            self.audit,
            conv,
            emit,
            window=self.window,
            question=message,
        )
        budget = self.settings.max_tool_output_bytes
        tools = ToolRunner(
            self.workspace,
            self.approvals,
            self.audit,
            conv,
            emit,
            budget=budget,
            room=model.result_room,
            navigator=self.navigator,
        )
        return _Question(conv, emit, model, tools)

    async def _run(self, q: _Question) -> Answered:
        """Steps until an answer; the last allowed step must answer."""
        if self.settings.project_instructions:
            await offer_once(q.conv, self.workspace, self.approvals, self.audit)
        for step in range(1, self.settings.max_steps + 1):
            try:
                await self._step(q, step)
            except Answered as answered:
                q.conv.messages.extend(answered.messages)
                return answered
            except Retry as retry:
                q.conv.messages.extend(retry.messages)
                q.model.notes.extend([retry.note] if retry.note else [])
                q.empty_retried = q.empty_retried or retry.why == "empty"
                q.corrected = q.corrected or retry.why == "unreadable"
        # The steps ran out without an answer: a reply that still wanted tools at the only
        # step (max_steps == 1), or an empty one at the last step.
        return Answered(q.model.said(), "budget" if q.tools.exhausted else "max_steps")

    async def _step(self, q: _Question, step: int) -> None:
        """Query → execute → observe: one request, and the calls it asked for run."""
        final = self._final(q, step)
        turn = await q.model.query(step, _FINAL_NOTES[final] if final else None)
        self._judge(q, turn, final)  # an answer or a retry ends the step here
        q.model.keep(turn.read.prose)
        results = await q.tools.run(turn.read.calls)
        q.conv.messages.extend(q.model.observe(turn, results))
        q.empty_retried = False

    def _final(self, q: _Question, step: int) -> StopReason | None:
        """Why this step must answer without tools: the tool output budget is used up,
        or it is the last step (of more than one); None: it may call tools."""
        if q.tools.exhausted:
            return "budget"
        return "max_steps" if step == self.settings.max_steps and step > 1 else None

    def _judge(self, q: _Question, turn: Turn, final: StopReason | None) -> None:
        """Return when `turn`'s calls are to run; raise what else it comes to."""
        reply, read = turn.reply, turn.read
        if reply.finish_reason == "content_filter":
            raise Answered(read.prose, "filtered", reply.outcome or cut_short("content_filter"))
        if final is None and read.wants_tools:
            self._runnable(q, turn)
            return
        answer = read.prose
        said = {"role": "assistant", "content": answer or "…", **reply.extra}
        if reply.finish_reason == "length":  # the answer was cut off mid-way
            raise Answered(answer, "truncated", reply.outcome or cut_short("length"), [said])
        if answer.strip():
            raise Answered(answer, final or "done", messages=[said])
        if read.markup and final is not None:
            # Calls at the last step are not run, and nothing else was said.
            raise Answered(q.model.said(), final)
        if q.empty_retried:
            raise ModelError("bad_request", "the model returned an empty reply twice in a row")
        raise Retry("empty", note=_EMPTY_NOTE)

    def _runnable(self, q: _Question, turn: Turn) -> None:
        """A reply that asked for tools: return when its calls can run. A call cut off by
        the output limit is never run; markup that yields no call gets one correction, and
        a second such reply ends the question (its prose kept, its markup never shown)."""
        reply, read = turn.reply, turn.read
        if reply.finish_reason == "length":
            cut = {"role": "assistant", "content": reply.content or "…", **reply.extra}
            raise Retry("cut_call", [cut, {"role": "user", "content": _CUT_CALL_NOTE}])
        if not read.calls:
            try:
                correction = q.model.correct(turn, again=q.corrected)
            except ModelError:
                q.model.keep(read.prose)
                raise
            raise Retry("unreadable", correction)

    async def _with_editor(
        self, q: _Question, editor: editor_context.EditorContext, question: str
    ) -> str:
        """The question after the editor's metadata and, when lines are selected, the
        result of reading them: one `read_file` call, run exactly as the model's are."""
        prepared = await editor_context.prepare(self.workspace, editor)
        if prepared is None:
            return question
        if prepared.read is None:
            return f"{prepared.metadata}\n\n{question}"
        call_id = f"editor_selection_{len(q.conv.messages)}"
        call = ToolCall(call_id, "read_file", editor_context.read_arguments(prepared.read))
        [done] = await q.tools.run([call])
        shown = editor_context.with_selection(prepared, call_id, done.content, done.code is None)
        return f"{shown}\n\n{question}"

    async def _with_mentions(
        self, q: _Question, mentions: Sequence[Mention], message: Message
    ) -> str:
        """The question after what reading the mentioned files and listing the mentioned
        folders returned: one call of Lantern's own per name, the user's choice (no
        prompt), run like the model's."""
        first = len(q.conv.messages)
        asked = await asyncio.to_thread(mention_calls, self.workspace, mentions, first)
        done = await q.tools.run(asked, Mentioned(self.approvals, asked)) if asked else []
        return with_reads(len(mentions), done, str(message["content"]))

    async def _close(self, q: _Question, answered: Answered) -> AskResult:
        """End the turn in the history, say the final status, and make the result."""
        answer, stop, why = answered.answer, answered.stop, answered.why
        if q.conv.messages[-1].get("role") != "assistant":
            # Close the turn, so a follow-up question never comes right after tool results
            # (strict providers) or after another user message (strictly alternating templates).
            closing = answer or f"[Lantern] (no answer: the question stopped: {stop})"
            q.conv.messages.append({"role": "assistant", "content": closing})
        detail = why.detail(None if stop == "error" else stop) if why else None
        q.emit(StopStatus(stop, why.message if why else None, detail))
        error = why if stop == "error" else None
        return AskResult(
            conversation_id=q.conv.id,
            answer=answer,
            references=await check_references(answer, self.workspace, q.conv.seen),
            tool_calls=q.tools.calls,
            usage=q.model.usage,
            stop_reason=stop,
            model=self.model.model,
            error=error.message if error else None,
            error_code=error.code if error else None,
            detail=detail,
            warnings=[w.detail("prompt_truncated") for w in q.model.warnings],
            context=q.model.meter.fill(),
            compactions=q.model.compactor.done,
        )
