"""What one question ends with: the answer, its references, and why it stopped.

`AskResult.to_dict` is the `lantern/ask` result (docs/protocol.md#requests) and
what `lantern ask --json` prints. A stop other than `done` carries the best
partial answer; a failure, a filtered or a cut-off answer carries `detail`
(a stable code, the provider's words, the fixes), and a turn that succeeded
with something to know (the endpoint cut the prompt) carries `warnings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lantern.agent.references import Reference
from lantern.agent.reply import ModelError, Usage
from lantern.agent.tool_round import ToolCallRecord

StopReason = Literal[
    "done", "max_steps", "budget", "timeout", "cancelled", "error", "filtered", "truncated"
]


def usage_json(usage: Usage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "promptTokens": usage.prompt_tokens,
        "completionTokens": usage.completion_tokens,
    }
    if usage.estimated:
        data["estimated"] = True
    return data


def detail_json(detail: ModelError, code: str | None = None) -> dict[str, Any]:
    """A failure or outcome as data; `code` replaces `model_<kind>` for a stop that is not
    an error (`filtered`, `truncated`) or for a warning (`prompt_truncated`)."""
    data = detail.to_dict()
    if code is not None:
        data["code"] = code
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
    detail: ModelError | None = None
    """Why it stopped, as data: the model failure, or what cut the answer short."""
    warnings: list[ModelError] = field(default_factory=list)
    model: str | None = None
    """The model that answered (also when Lantern chose Ollama's first model)."""

    @property
    def error_code(self) -> str | None:
        return f"model_{self.error_kind}" if self.error_kind else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "conversationId": self.conversation_id,
            "answer": self.answer,
            "references": [r.to_dict() for r in self.references],
            "toolCalls": [c.to_dict() for c in self.tool_calls],
            "usage": usage_json(self.usage),
            "stopReason": self.stop_reason,
            "model": self.model,
        }
        if self.error:
            data["error"] = self.error
        if self.stop_reason == "error" and self.error_code:
            data["errorCode"] = self.error_code
        if self.detail is not None:
            outcome = None if self.stop_reason == "error" else self.stop_reason
            data["detail"] = detail_json(self.detail, outcome)
        if self.warnings:
            data["warnings"] = [detail_json(w, "prompt_truncated") for w in self.warnings]
        return data
