"""Making the history fit the window, and saying so.

Before each request the history must fit what the window leaves after the
system prompt, the tools, the project instructions and the reply's reserve.
When it does not:

1. the turns of earlier questions are summarized by the model (`summary.py`)
   and the summary replaces them — once a question, and only when the summary
   is shorter than what it replaces;
2. if that fails, would not help or is not enough, old tool outputs are
   shortened and then the oldest whole turns dropped, as before.

Each of these is reported: a `status: compacted` event with what was done and
why, and an entry in the question's result. The current question is never
summarized, and the project instructions are not in the history at all.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from lantern.agent import summary
from lantern.agent.context import Meter
from lantern.agent.conversation import Conversation
from lantern.agent.events import CompactedStatus, Compaction, EventSink
from lantern.agent.protocol.seam import result_ids
from lantern.agent.reply import ModelError

Message = dict[str, Any]
Summarize = Callable[[list[Message]], Awaitable[str]]


class Compactor:
    """One question's compactions of its conversation."""

    def __init__(
        self, conv: Conversation, meter: Meter, emit: EventSink, summarize: Summarize
    ) -> None:
        self.conv, self.meter, self.emit, self.summarize = conv, meter, emit, summarize
        self.done: list[Compaction] = []
        self._not_again: str | None = None  # why this question does not try to summarize again

    async def fit(self, room: int, question: Message) -> None:
        """Make the history take at most `room` tokens; `question` is this question's
        message, which stays as it is."""
        if self.meter.estimate(self.conv.messages) <= room:
            return
        why = await self._summarize(room, question)
        if why is None and self.meter.estimate(self.conv.messages) <= room:
            return
        shortened = self.conv.compact(math.floor(room / self.conv.token_ratio))
        if not (shortened.outputs or shortened.turns):
            return
        ratio = self.conv.token_ratio
        before, after = math.ceil(shortened.before * ratio), math.ceil(shortened.after * ratio)
        how: Literal["shortened", "dropped"] = "dropped" if shortened.turns else "shortened"
        self._said(Compaction(how, before, after, shortened.turns, shortened.outputs, why=why))

    async def _summarize(self, room: int, question: Message) -> str | None:
        """Summarize the earlier questions' turns; None when done, else why not."""
        start = next((i for i, m in enumerate(self.conv.messages) if m is question), 0)
        earlier = self.conv.messages[:start]
        if self._not_again is not None:
            return self._not_again
        if summary.questions_in(earlier) == 0:
            return "no earlier question to summarize" if start else None
        before = self.meter.estimate(earlier)
        words = max(60, min(600, self.meter.window.tokens // 16))
        made = summary.request(earlier, self.meter.room, words)
        if made is None:
            self._not_again = "the earlier turns are too long to summarize in this window"
            return self._not_again
        try:
            text = await self.summarize(made)
        except ModelError as exc:
            self._not_again = f"summarizing failed ({exc.message})"
            return self._not_again
        after = self.meter.estimate(summary.replacement(text, before, before))
        if not text.strip() or after >= before:
            self._not_again = "the summary was no shorter than the turns"
            return self._not_again
        gone = {i for m in earlier for i in (result_ids(m) or ())}
        self.conv.answered = {k: v for k, v in self.conv.answered.items() if v not in gone}
        self.conv.messages[:start] = summary.replacement(text, before, after)
        turns = summary.questions_in(earlier)
        self._said(Compaction("summarized", before, after, turns, summary=text.strip()))
        return None

    def _said(self, done: Compaction) -> None:
        self.done.append(done)
        self.emit(CompactedStatus(done.message(), done))
