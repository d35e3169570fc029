"""Conversations: the history a follow-up question builds on, and its budget.

A conversation keeps the OpenAI-format messages after the system prompt,
which lines were shown to the model (for `seen` references), which tool
calls were already answered (for "already returned above") and whether it
switched to the text tool protocol. Provider fields on assistant messages
(`reasoning_content`, thought signatures…) stay in the messages as they came,
so they go back verbatim. When the history outgrows the context window, the
oldest tool outputs are shortened first, then the oldest whole turns are
dropped; the project instructions (`instructions`) are not in the history
and are never dropped. A client that kept the turns itself (an editor after a reload or a
server restart) can seed a new, empty conversation with them (`seed`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lantern.agent.conversation_file import FILE_VERSION, checked, parsed
from lantern.agent.inputs import HistoryTurn
from lantern.agent.instruction_frame import reframed
from lantern.agent.protocol.seam import Name, result_ids
from lantern.agent.tokens import message_tokens
from lantern.escaping import json_text

if TYPE_CHECKING:
    from lantern.tools.base import SeenSpan

SHORTENED_KEEP = 200
HISTORY_TURNS = 50  # the most earlier turns a client can seed a conversation with
HISTORY_ANSWER_BYTES = 32 * 1024  # each seeded answer, UTF-8
HISTORY_QUESTION_BYTES = 8 * 1024  # each seeded question
_CUT_MARK = " […]"


def _norm(path: str) -> str:
    """The shape `Workspace.relative` gives: no `./`, no empty components."""
    return "/".join(c for c in path.split("/") if c not in {"", "."})


def history_turns(value: object) -> list[HistoryTurn]:
    """`[{question, answer}, …]` as turns; ValueError says what is wrong with the shape."""
    if not isinstance(value, list):
        raise ValueError("history must be a list of {question, answer} objects")
    turns = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"history[{index}] must be an object with question and answer")
        question, answer = item.get("question"), item.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str):
            raise ValueError(f"history[{index}].question and .answer must be strings")
        turns.append(HistoryTurn(question, answer))
    return turns


def _clip(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes of `text` (whole characters), marked when cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    room = limit - len(_CUT_MARK.encode("utf-8"))
    return data[:room].decode("utf-8", "ignore") + _CUT_MARK


def _texts(value: object) -> list[str] | None:
    """A conversation file's `instructions`: a list of strings, each kept only as a frame
    (`instruction_frame.reframed`); else not offered yet."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [reframed(item) for item in value]
    return None


def _ratio(value: object) -> float:
    """A conversation file's `tokenRatio`, if it is a sane one; else no calibration yet."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.1 <= value <= 10:
        return float(value)
    return 1.0


@dataclass
class Shortened:
    """What `Conversation.compact` did: tool outputs shortened, turns dropped, and the
    history's estimated tokens before and after."""

    before: int
    after: int = 0
    outputs: int = 0
    turns: int = 0

    def to(self, used: int) -> Shortened:
        self.after = used
        return self


class SeenLines:
    """Which lines of which files were shown to the model in one conversation.

    Paths are as the model sees them (workspace-relative, `<folder>/…` in a
    multi-root workspace); `./a.py` and `a.py` are the same. Ranges of one
    file are kept sorted and merged, adjacent ones too (1–5 and 6–9 → 1–9).
    """

    def __init__(self) -> None:
        self._ranges: dict[str, list[tuple[int, int]]] = {}

    def add(self, path: str, start: int, end: int) -> None:
        """Record lines `start..end`; found by bisection among the file's ranges and
        merged with those it overlaps or touches, so a conversation with tens of
        thousands of ranges costs a search, not a rescan, per range."""
        if start > end:
            start, end = end, start
        start = max(start, 1)
        if end < start:
            return
        ranges = self._ranges.setdefault(_norm(path), [])
        # The ranges are disjoint and apart, so their ends rise with their starts:
        # [first, last) are those that reach `start - 1` and begin by `end + 1`.
        first = bisect_left(ranges, start - 1, key=lambda r: r[1])
        last = bisect_right(ranges, end + 1, lo=first, key=lambda r: r[0])
        if first < last:
            start, end = min(start, ranges[first][0]), max(end, ranges[last - 1][1])
        ranges[first:last] = [(start, end)]

    def add_all(self, spans: Iterable[SeenSpan]) -> None:
        for item in spans:
            self.add(item.path, item.start, item.end)

    def covers(self, path: str, start: int, end: int) -> bool:
        """Whether every line `start..end` of `path` was shown."""
        if start > end:
            start, end = end, start
        if start < 1:
            return False
        ranges = self._ranges.get(_norm(path))
        if not ranges:
            return False
        i = bisect_right(ranges, start, key=lambda r: r[0]) - 1  # the last range from <= start
        return i >= 0 and ranges[i][0] <= start and end <= ranges[i][1]

    def to_json(self) -> list[list[object]]:
        """`[[path, start, end], …]`, merged and sorted, for a conversation file."""
        return [[path, lo, hi] for path in sorted(self._ranges) for lo, hi in self._ranges[path]]

    @classmethod
    def from_json(cls, data: object) -> SeenLines:
        """The inverse of `to_json`; malformed entries are skipped (they only cost `seen`)."""
        seen = cls()
        if not isinstance(data, list):
            return seen
        for entry in data:
            if not isinstance(entry, list | tuple) or len(entry) != 3:
                continue
            path, lo, hi = entry
            if (
                isinstance(path, str)
                and type(lo) is int  # not bool
                and type(hi) is int
            ):
                seen.add(path, lo, hi)
        return seen

    def __bool__(self) -> bool:
        return bool(self._ranges)

    def __repr__(self) -> str:
        return f"SeenLines({self.to_json()!r})"


@dataclass
class Conversation:
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    messages: list[dict[str, Any]] = field(default_factory=list)
    seen: SeenLines = field(default_factory=SeenLines)
    answered: dict[str, str] = field(default_factory=dict)  # call key -> call id
    workspace_key: str = ""
    tool_protocol: Name = "native"  # "text" once `auto` switched this conversation
    warned_cut: bool = False  # the user was told the endpoint cut the prompt (once)
    # Project instructions as sent (`agent/instructions.py`), kept apart from `messages` so
    # compaction never drops them; None until offered (the first question with the setting on).
    instructions: list[str] | None = None
    # The server's tokens per estimated token, from its own counts (`agent/context.py`).
    token_ratio: float = 1.0

    def seed(self, turns: Sequence[HistoryTurn]) -> bool:
        """Start an empty conversation with earlier turns (user, assistant, …): what a
        client restored after a reload or a server restart. The last `HISTORY_TURNS`
        with both a question and an answer are kept, each clipped; a conversation that
        already has messages is left as it is (returns False)."""
        if self.messages:
            return False
        kept = [t for t in turns if t.question.strip() and t.answer.strip()][-HISTORY_TURNS:]
        for turn in kept:
            self.messages.append(
                {"role": "user", "content": _clip(turn.question, HISTORY_QUESTION_BYTES)}
            )
            self.messages.append(
                {"role": "assistant", "content": _clip(turn.answer, HISTORY_ANSWER_BYTES)}
            )
        return bool(kept)

    def compact(self, budget_tokens: int, system_tokens: int = 0) -> Shortened:
        """Shorten old tool outputs, then drop old turns, until the history fits."""
        used = message_tokens(self.messages) + system_tokens
        done = Shortened(used)
        for message in self.messages[:-1]:
            if used <= budget_tokens:
                return done.to(used)
            content = message.get("content")
            shortened = result_ids(message)  # tool results, in either protocol's form
            if shortened is not None and isinstance(content, str) and len(content) > 400:
                before = message_tokens([message])
                head = content[:SHORTENED_KEEP]
                self.answered = {k: v for k, v in self.answered.items() if v not in shortened}
                message["content"] = (
                    f"{head}\n[older tool output shortened to save context; call the tool "
                    "again if you need it]"
                )
                used += message_tokens([message]) - before
                done.outputs += 1
        # Still too long: drop whole turns from the front (a turn starts at a user message).
        while used > budget_tokens:
            starts = [
                i
                for i, m in enumerate(self.messages)
                if m.get("role") == "user" and result_ids(m) is None
            ]
            if len(starts) < 2:
                break
            used -= message_tokens(self.messages[: starts[1]])
            del self.messages[: starts[1]]
            self.answered.clear()
            done.turns += 1
        return done.to(used)

    def to_json(self) -> dict[str, Any]:
        # The `--conversation-file` format, read back by `from_json`: a file of its own
        # version, not a message of the wire, so not `lantern.converter`'s to write.
        return {
            "version": FILE_VERSION,
            "id": self.id,
            "workspace": self.workspace_key,
            "messages": self.messages,
            "seen": self.seen.to_json(),
            "answered": self.answered,
            "toolProtocol": self.tool_protocol,
            "warnedCut": self.warned_cut,
            "instructions": self.instructions,
            "tokenRatio": self.token_ratio,
        }

    @classmethod
    def from_json(cls, data: object) -> Conversation:
        """A conversation from a file's JSON; ValueError unless every part has the shape
        Lantern writes (`conversation_file.checked`)."""
        data = checked(data)
        return cls(
            id=data["id"],
            messages=list(data["messages"]),
            seen=SeenLines.from_json(data.get("seen") or []),
            answered=dict(data.get("answered") or {}),
            workspace_key=str(data.get("workspace") or ""),
            tool_protocol="text" if data.get("toolProtocol") == "text" else "native",
            warned_cut=data.get("warnedCut") is True,
            instructions=_texts(data.get("instructions")),
            token_ratio=_ratio(data.get("tokenRatio")),
        )

    def save(self, path: Path) -> None:
        """Write the file whole or not at all: a new temporary file with a random name in
        the same folder, created exclusively (`mkstemp`: O_EXCL, mode 0600, so nothing
        planted there — a link, another file — is written through), then renamed over
        `path` (a link at `path` itself is replaced, not followed)."""
        # json_text: a lone surrogate a model sent is written as an escape, not a crash.
        text = json_text(self.to_json())
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: Path) -> Conversation:
        """The conversation kept in `path`; OSError, or ValueError saying (in one line,
        quoting nothing of it) what is wrong with the file."""
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None
        return cls.from_json(parsed(text))


class Conversations:
    """In-memory conversations of a server, by id."""

    def __init__(self) -> None:
        self._by_id: dict[str, Conversation] = {}

    def get_or_create(
        self,
        conversation_id: str | None,
        workspace_key: str,
        history: Sequence[HistoryTurn] = (),
    ) -> Conversation:
        """The conversation by id, or a new one; `history` seeds it while it is empty."""
        conv = self._by_id.get(conversation_id) if conversation_id else None
        if conv is None:
            conv = Conversation(workspace_key=workspace_key)
            if conversation_id:
                conv.id = conversation_id
            self._by_id[conv.id] = conv
        if history:
            conv.seed(history)
        return conv

    def reset(self, conversation_id: str) -> bool:
        return self._by_id.pop(conversation_id, None) is not None
