"""What a client sends with a question, as plain values (`lantern/ask`, docs/protocol.md):
the editor's state when the user asked (`context`: the active file, the visible lines,
the selection, the file's problems), the earlier turns the client kept (`history`) and
the files and folders the user named with the question (`mentions`).

The language server builds these from what a client sends (`lsp/translate.py`) before
the agent side is loaded, so this module loads nothing. What the model is told of the
editor's state, and the selection's read, are `editor_context.py`'s; how the turns
start a conversation is `conversation.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("error", "warning", "information", "hint")  # LSP's 1–4


@dataclass(frozen=True)
class Lines:
    """1-based, inclusive."""

    start: int
    end: int

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"


@dataclass(frozen=True)
class Diagnostic:
    lines: Lines
    message: str
    severity: str | None = None  # one of SEVERITIES
    source: str | None = None


@dataclass(frozen=True)
class HistoryTurn:
    """One earlier question and its answer, as a client kept them (`lantern/ask` `history`)."""

    question: str
    answer: str


@dataclass(frozen=True)
class EditorContext:
    """The editor's state when the user asked, in the session's terms (no LSP types)."""

    path: str  # absolute, from the client's URI
    selection: Lines | None = None
    visible: Lines | None = None
    diagnostics: tuple[Diagnostic, ...] = field(default=())


@dataclass(frozen=True)
class Mention:
    """A file or folder the user named with the question: its path — absolute as an editor
    gives it, or relative to the workspace as the model names it — and the lines chosen
    (None: all of a file, or a folder's listing; which one is the disk's to say when the
    call is made: `mentions.calls`)."""

    path: str
    lines: Lines | None = None
