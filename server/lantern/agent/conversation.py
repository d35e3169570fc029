"""Conversations: the history a follow-up question builds on, and its budget.

A conversation keeps the OpenAI-format messages after the system prompt,
which lines were shown to the model (for `seen` references) and which tool
calls were already answered (for "already returned above"). When the history
outgrows `maxContextTokens`, the oldest tool outputs are shortened first,
then the oldest whole turns are dropped.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lantern.agent.references import SeenLines

CHARS_PER_TOKEN = 4
SHORTENED_KEEP = 200
FILE_VERSION = 1


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        total += len(str(message.get("content") or "")) // CHARS_PER_TOKEN + 4
        for call in message.get("tool_calls") or ():
            total += len(call["function"]["arguments"]) // CHARS_PER_TOKEN + 8
    return total


@dataclass
class Conversation:
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    messages: list[dict[str, Any]] = field(default_factory=list)
    seen: SeenLines = field(default_factory=SeenLines)
    answered: dict[str, str] = field(default_factory=dict)  # call key -> call id
    workspace_key: str = ""

    def compact(self, budget_tokens: int, system_tokens: int = 0) -> int:
        """Shorten old tool outputs, then drop old turns, until the history fits; returns tokens."""
        used = estimate_tokens(self.messages) + system_tokens
        for message in self.messages[:-1]:
            if used <= budget_tokens:
                return used
            content = message.get("content")
            if message.get("role") == "tool" and isinstance(content, str) and len(content) > 400:
                head = content[:SHORTENED_KEEP]
                shortened = message.get("tool_call_id")
                self.answered = {k: v for k, v in self.answered.items() if v != shortened}
                message["content"] = (
                    f"{head}\n[older tool output shortened to save context; call the tool "
                    "again if you need it]"
                )
                used = estimate_tokens(self.messages) + system_tokens
        # Still too long: drop whole turns from the front (a turn starts at a user message).
        while used > budget_tokens:
            starts = [i for i, m in enumerate(self.messages) if m.get("role") == "user"]
            if len(starts) < 2:
                break
            del self.messages[: starts[1]]
            self.answered.clear()
            used = estimate_tokens(self.messages) + system_tokens
        return used

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FILE_VERSION,
            "id": self.id,
            "workspace": self.workspace_key,
            "messages": self.messages,
            "seen": self.seen.to_json(),
            "answered": self.answered,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        if data.get("version") != FILE_VERSION or not isinstance(data.get("messages"), list):
            raise ValueError("not a Lantern conversation file")
        return cls(
            id=str(data["id"]),
            messages=list(data["messages"]),
            seen=SeenLines.from_json(data.get("seen") or []),
            answered=dict(data.get("answered") or {}),
            workspace_key=str(data.get("workspace") or ""),
        )

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), ensure_ascii=False), "utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Conversation:
        return cls.from_json(json.loads(path.read_text("utf-8")))


class Conversations:
    """In-memory conversations of a server, by id."""

    def __init__(self) -> None:
        self._by_id: dict[str, Conversation] = {}

    def get_or_create(self, conversation_id: str | None, workspace_key: str) -> Conversation:
        if conversation_id and conversation_id in self._by_id:
            return self._by_id[conversation_id]
        conv = Conversation(workspace_key=workspace_key)
        if conversation_id:
            conv.id = conversation_id
        self._by_id[conv.id] = conv
        return conv

    def reset(self, conversation_id: str) -> bool:
        return self._by_id.pop(conversation_id, None) is not None
