"""The model as the agent loop sees it: a query returns prose and calls, observing the
calls' results returns the history messages.

Everything one request is made of lives here, so the loop never handles it: the
tool protocol that carries the calls (native or text, and `auto`'s switch from
one to the other), the system prompt, the project instructions beside the
history, Lantern's notes for the next request only, shortening the history to
the window, the streamed text, the token usage, the endpoint's warnings and the
audit record of each request.

`ModelSide` lives for one question. Under `auto`, a request the endpoint refuses
for its tools, or a reply that writes its calls as text, moves the conversation
to the text protocol (`protocol.seam.Switch`); the refused request is sent again
at once and is not a step of the loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from lantern.agent.compaction import Compactor
from lantern.agent.context import Meter, window_too_small
from lantern.agent.conversation import Conversation
from lantern.agent.events import (
    AnswerDeltaEvent,
    EventSink,
    ProtocolStatus,
    ReasoningEvent,
    RetryingStatus,
    ThinkingStatus,
    UsageEvent,
    WarningStatus,
)
from lantern.agent.instructions import with_instructions
from lantern.agent.message_order import with_notes
from lantern.agent.prompts import system_prompt_async
from lantern.agent.protocol.seam import (
    CallResult,
    Message,
    Offer,
    Read,
    Switch,
    ToolProtocol,
    protocol_for,
)
from lantern.agent.provider.stream import ReplyTooLarge
from lantern.agent.provider.window import ContextWindow
from lantern.agent.reply import ChatModel, ChatTurn, ModelError, Reply, Usage
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.tools.registry import tool_specs
from lantern.workspace.roots import Workspace

_LEAST_SHARE = 256  # tokens a result may always take, however full the window


@dataclass(frozen=True)
class Turn:
    """One answered query: the reply, and its calls and prose as `protocol` read them."""

    reply: Reply
    read: Read
    protocol: ToolProtocol


class ModelSide:
    """One question's requests to the model; see the module docstring."""

    def __init__(
        self,
        model: ChatModel,
        workspace: Workspace,
        settings: Settings,
        audit: AuditLog | None,
        conv: Conversation,
        emit: EventSink,
        *,
        window: ContextWindow,
        question: Message,
    ) -> None:
        self.model, self.conv, self.emit = model, conv, emit
        self.workspace, self.settings, self.audit = workspace, settings, audit
        self.question = question  # this question's message: never compacted
        self.meter = Meter(window, conv, settings.max_output_tokens)
        self.compactor = Compactor(conv, self.meter, emit, self._summary)
        self.usage = Usage()  # every request of the question, added up
        self.warnings: list[ModelError] = []  # what the user should know of a good answer
        self.notes: list[str] = []  # Lantern's words for the next request only
        self._specs = tool_specs()
        self._base_prompt: str | None = None
        self._said: list[str] = []  # the prose so far; the reply streaming now after `_mark`
        self._mark = 0

    def result_room(self, calls: int) -> int:
        """The tokens each of `calls` results may take: an equal part of what the window has
        left after the last request and its reply, one part kept for what comes after."""
        left = self.meter.room - self.meter.used
        return max(_LEAST_SHARE, left // (calls + 1))

    def said(self) -> str:
        """Everything the model has said to the user so far in this question: the prose of
        its tool rounds and what the reply now streaming has sent (a partial answer)."""
        return "".join(self._said).strip()

    def keep(self, prose: str) -> None:
        """`prose` (a reply's words beside its calls) is part of what was said."""
        self._said.append(prose)

    async def query(self, step: int, final_note: str | None) -> Turn:
        """Ask the model once for step `step`. `final_note`: no more tools, and why (the
        request says so; calls it returns anyway are read but never run)."""
        final = final_note is not None
        while True:
            mode = self.settings.tool_protocol
            protocol = protocol_for(mode, self.conv.tool_protocol, self._specs)
            messages = await self._messages(protocol, final_note)
            self.emit(ThinkingStatus(step))
            try:
                reply = await self._request(messages, protocol.offer(self.conv.messages, final))
            except ModelError as exc:
                switch = protocol.rejected(exc)
                if switch is None:
                    raise
                self._switch(switch)  # and ask again, notes and all
                continue
            self.notes = []  # sent
            read = protocol.read(reply, final)
            while isinstance(read, Switch):
                self._switch(read)
                protocol = read.to
                read = protocol.read(reply, final)
            return Turn(reply, read, protocol)

    def observe(self, turn: Turn, results: Sequence[CallResult]) -> list[Message]:
        """The history entries for `turn`'s calls and their results, as its protocol writes them."""
        return turn.protocol.history(turn.reply, turn.read, results)

    def correct(self, turn: Turn, *, again: bool) -> list[Message]:
        """The history entries that tell the model its call markup could not be read; raises
        `ModelError` where the question cannot go on (`again`: it was told before)."""
        return turn.protocol.correction(turn.reply, turn.read, again=again)

    async def _messages(self, protocol: ToolProtocol, final_note: str | None) -> list[Message]:
        """The request: the system prompt, the project instructions before the history (never
        shortened or dropped), the history made to fit the window, and the notes."""
        if self._base_prompt is None:
            self._base_prompt = await system_prompt_async(self.workspace)
        system = {"role": "system", "content": protocol.system_prompt(self._base_prompt)}
        on = self.settings.project_instructions
        texts = (self.conv.instructions or []) if on else []
        kept = [system, *({"role": "user", "content": text} for text in texts)]
        fixed = self.meter.estimate(kept, protocol.offer(self.conv.messages, False).tools)
        if fixed > self.meter.room:
            raise window_too_small(self.meter.window, fixed, self.meter.reserve)
        await self.compactor.fit(self.meter.room - fixed, self.question)
        notes = [*self.notes, *([final_note] if final_note else [])]
        return with_notes([system, *with_instructions(self.conv.messages, texts)], notes)

    def _switch(self, switch: Switch) -> None:
        """This conversation uses `switch.to` from now on (`auto` only); said once."""
        self.conv.tool_protocol = switch.to.name
        self.emit(
            ProtocolStatus(
                switch.to.name,
                f"model {self.model.model!r} {switch.why}; "
                f"using the {switch.to.name} tool protocol",
            )
        )

    async def _request(self, messages: list[Message], offer: Offer) -> Reply:
        """One streamed request: its text and reasoning go out as events as they come, its
        usage is added up, and the audit log records it whatever happens."""
        started = time.perf_counter()
        outcome = "ok"
        reply: Reply | None = None
        self._mark = len(self._said)
        self.meter.sending(messages, offer.tools)

        def on_text(text: str) -> None:
            self._said.append(text)
            self.emit(AnswerDeltaEvent(text))

        def on_reasoning(text: str) -> None:
            self.emit(ReasoningEvent(text))

        def on_retry(why: str) -> None:
            del self._said[self._mark :]
            self.emit(RetryingStatus(why))

        turn = ChatTurn(
            messages,
            offer.tools,
            on_text=on_text,
            on_retry=on_retry,
            on_reasoning=on_reasoning,
            tool_choice=offer.tool_choice,
        )
        try:
            try:
                reply = await self.model.complete(turn)
            except ReplyTooLarge as exc:  # what arrived, cut off like `finish_reason: length`
                reply, outcome = exc.reply, "too_large"
            del self._said[self._mark :]  # the reply is read whole now
            self._warn(reply.warning)
            return reply
        except ModelError as exc:
            outcome = f"error:{exc.kind}"
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            self._account(messages, reply, outcome, started)

    def _warn(self, warning: ModelError | None) -> None:
        """The endpoint cut the prompt: said once per conversation."""
        if warning is None or self.conv.warned_cut:
            return
        self.conv.warned_cut = True
        self.warnings.append(warning)
        self.emit(WarningStatus(warning.message, warning.detail("prompt_truncated")))

    async def _summary(self, messages: list[Message]) -> str:
        """The model's summary of earlier turns (`compaction.py`): one request of its own,
        with no tools, nothing streamed to the user, counted and audited like any other."""
        started = time.perf_counter()
        reply: Reply | None = None
        outcome = "summary"
        try:
            reply = await self.model.complete(ChatTurn(messages))
            return reply.content
        except ModelError as exc:
            outcome = f"summary_error:{exc.kind}"
            raise
        finally:
            self.usage.add(reply.usage if reply else None)
            self._audit(messages, reply.usage if reply else None, outcome, started)

    def _account(
        self, messages: list[Message], reply: Reply | None, outcome: str, started: float
    ) -> None:
        usage = reply.usage if reply else None
        self.usage.add(usage)
        if usage is not None:
            self.meter.answered(usage, cut=reply is not None and reply.warning is not None)
            self.emit(UsageEvent.of(self.usage, self.meter.fill()))
        self._audit(messages, usage, outcome, started)

    def _audit(
        self, messages: list[Message], usage: Usage | None, outcome: str, started: float
    ) -> None:
        if self.audit is not None:
            self.audit.model_request(
                conversation=self.conv.id,
                model=self.model.model,
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                bytes_sent=len(json.dumps(messages, ensure_ascii=False)),
                outcome=outcome,
                ms=(time.perf_counter() - started) * 1000,
            )
