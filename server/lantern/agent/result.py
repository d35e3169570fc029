"""What one question ends with: the answer, its references, and why it stopped.

`AskResult` is the `lantern/ask` result (docs/protocol.md#requests) as the
language server sends it and `lantern ask --json` prints it, written by the one
converter (`lantern.converter`). A stop other than `done` carries the best
partial answer; a failure, a filtered or a cut-off answer carries `detail` (a
stable code, the provider's words, the fixes), and a turn that succeeded with
something to know (the endpoint cut the prompt) carries `warnings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lantern.agent.failure import Detail
from lantern.agent.tokens import Usage
from lantern.shapes import OPTIONAL

if TYPE_CHECKING:  # the result is built without them (`lsp/translate.error_result`)
    from lantern.agent.events import Compaction, ContextFill, StopReason, ToolCallRecord
    from lantern.agent.references import Reference


@dataclass
class AskResult:
    conversation_id: str | None  # None: the question could not start (`no_workspace`, …)
    answer: str
    references: list[Reference]
    tool_calls: list[ToolCallRecord]
    usage: Usage
    stop_reason: StopReason
    model: str | None
    """The model that answered (also when Lantern chose Ollama's first model); None when
    no model answered."""
    error: str | None = field(default=None, metadata=OPTIONAL)
    error_code: str | None = field(default=None, metadata=OPTIONAL)
    """Set with `stopReason: "error"`: `model_<kind>`, `no_model`, `no_workspace`, …"""
    detail: Detail | None = field(default=None, metadata=OPTIONAL)
    """Why it stopped, as data: the failure, or what cut the answer short."""
    warnings: list[Detail] = field(default_factory=list, metadata=OPTIONAL)
    context: ContextFill | None = field(default=None, metadata=OPTIONAL)
    """How full the context window was after the last request, and where it came from."""
    compactions: list[Compaction] = field(default_factory=list, metadata=OPTIONAL)
    """What was summarized, shortened or dropped to fit the window during the question."""

    def in_encoding(self, encoding: str | None) -> AskResult:
        """The result with its references' ranges and spans counted in `encoding`."""
        return replace(self, references=[r.in_encoding(encoding) for r in self.references])
