"""Small translations between LSP values and `Session` values, used by the handlers.

Each is a pure function of what the client sent (or what pygls negotiated), so the
handlers in `server.py` read as wiring. The shapes are in docs/protocol.md#requests.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern.agent.failure import Detail
from lantern.agent.inputs import (
    SEVERITIES,
    Diagnostic,
    EditorContext,
    HistoryTurn,
    Lines,
    Mention,
)
from lantern.agent.positions import Position, Range
from lantern.agent.result import AskResult
from lantern.agent.tokens import Usage
from lantern.lsp import messages
from lantern.workspace.suggestions import Suggestion, Symbol

if TYPE_CHECKING:  # the agent side, loaded on first use (`session.load_agent_side`)
    from lantern.agent.events import ToolEvent


def folders(params: types.InitializeParams) -> list[str]:
    """The workspace roots of `initialize`: `workspaceFolders`, else `rootUri`, else `rootPath`."""
    if params.workspace_folders:
        return [to_fs_path(f.uri) or "" for f in params.workspace_folders]
    if params.root_uri:
        return [to_fs_path(params.root_uri) or ""]
    return [params.root_path] if params.root_path else []


def _lines(rng: types.Range) -> Lines:
    """An LSP range as 1-based inclusive lines; a range that ends at `character: 0` of a
    later line does not include that line. (lsprotocol refuses negative numbers.)"""
    start, end = sorted((rng.start, rng.end), key=lambda p: (p.line, p.character))
    last = end.line - 1 if end.line > start.line and end.character == 0 else end.line
    return Lines(start.line + 1, last + 1)


def _selection(rng: types.Range | None) -> Lines | None:
    """An empty selection (a cursor) is no selection."""
    if rng is None or rng.start == rng.end:
        return None
    return _lines(rng)


def _diagnostic(d: messages.EditorDiagnostic) -> Diagnostic:
    severity = SEVERITIES[d.severity - 1] if d.severity is not None else None
    return Diagnostic(_lines(d.range), d.message, severity, d.source)


def editor_context(context: messages.AskContext | None) -> EditorContext | None:
    """`lantern/ask`'s `context` as the agent's `EditorContext` (docs/protocol.md)."""
    if context is None:
        return None
    path = to_fs_path(context.uri) if context.uri.startswith("file:") else None
    if not path:
        raise JsonRpcInvalidParams("context.uri must be a file URI")
    return EditorContext(
        path,
        selection=_selection(context.range),
        visible=_lines(context.visible_range) if context.visible_range else None,
        diagnostics=tuple(_diagnostic(d) for d in context.diagnostics or ()),
    )


def mentions(given: list[messages.MentionParam] | None) -> list[Mention]:
    """`lantern/ask`'s `mentions`: each file or folder the user named, and the lines chosen."""
    found = []
    for index, mention in enumerate(given or ()):
        path = _local_path(mention.uri)
        if not path:
            raise JsonRpcInvalidParams(f"mentions[{index}].uri must be a file URI")
        found.append(Mention(path, _selection(mention.range)))
    return found


def _local_path(uri: str) -> str | None:
    """The file a `file:` URI names; None for any other URI, or one pygls cannot read."""
    if not uri.startswith("file:"):
        return None
    try:
        return to_fs_path(uri) or None
    except ValueError:
        return None


def mention_symbol(symbol: messages.MentionSymbol) -> Symbol:
    """One of `lantern/suggestMentions`' `symbols`; a URI that names no local file by an
    absolute path gives no path (the symbol is dropped)."""
    path = _local_path(symbol.uri)
    path = path if path and os.path.isabs(path) else None
    return Symbol(symbol.name, symbol.container_name, path, symbol.range.start.line)


def suggestion(
    found: Suggestion, symbols: list[messages.MentionSymbol]
) -> messages.MentionSuggestion:
    """One completion item: a file's or folder's `file:` URI; a symbol's URI and range as
    the client gave them."""
    if found.symbol is None:
        return messages.MentionSuggestion(
            found.kind, found.label, Path(found.path).as_uri(), refused=found.refused
        )
    given = symbols[found.symbol]
    start, end = given.range.start, given.range.end
    return messages.MentionSuggestion(
        found.kind,
        found.label,
        given.uri,
        detail=found.detail,
        range=Range(Position(start.line, start.character), Position(end.line, end.character)),
        refused=found.refused,
    )


def history(turns: list[messages.HistoryTurn] | None) -> list[HistoryTurn]:
    """`lantern/ask`'s `history` as the agent's turns."""
    if not turns:
        return []
    return [HistoryTurn(t.question, t.answer) for t in turns]


def error_result(
    conversation_id: str | None, code: str, message: str, detail: Detail | None = None
) -> AskResult:
    """A question that could not start: `stopReason: "error"` with a stable `errorCode`."""
    return AskResult(
        conversation_id=conversation_id,
        answer="",
        references=[],
        tool_calls=[],
        usage=Usage(),
        stop_reason="error",
        model=None,  # no model answered
        error=message,
        error_code=code,
        detail=detail,
    )


def position_encoding(ls: LanguageServer) -> str:
    """The encoding pygls negotiated at `initialize` (the client's first of utf-8/16/32)."""
    try:
        encoding = ls.workspace.position_encoding
    except RuntimeError:  # not initialized
        encoding = None
    if isinstance(encoding, types.PositionEncodingKind):
        return encoding.value
    return encoding or types.PositionEncodingKind.Utf16.value


def progress_text(event: ToolEvent) -> str:
    """`read_file src/app.py · lines 1–400: awaiting approval` for the progress notification."""
    status = event.status.replace("_", " ")
    return f"{event.name} {event.summary}: {status}" if event.summary else f"{event.name}: {status}"
