"""Small translations between LSP values and `Session` values, used by the handlers.

Each is a pure function of what the client sent (or what pygls negotiated), so the
handlers in `server.py` read as wiring. The shapes are in docs/protocol.md#requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern.lsp import messages
from lantern.session import Selection

if TYPE_CHECKING:
    from lantern.agent.conversation import HistoryTurn


def folders(params: types.InitializeParams) -> list[str]:
    """The workspace roots of `initialize`: `workspaceFolders`, else `rootUri`, else `rootPath`."""
    if params.workspace_folders:
        return [to_fs_path(f.uri) or "" for f in params.workspace_folders]
    if params.root_uri:
        return [to_fs_path(params.root_uri) or ""]
    return [params.root_path] if params.root_path else []


def selection(context: messages.AskContext | None) -> Selection | None:
    """`lantern/ask`'s `context: {uri, range?}` as 1-based inclusive lines of a file."""
    if context is None:
        return None
    path = to_fs_path(context.uri)
    if not path:
        raise JsonRpcInvalidParams("context.uri must be a file URI")
    rng = context.range
    if rng is None:
        # Imported here: it pulls in the redaction modules, which `initialize` does not need.
        from lantern.workspace.text import MAX_LINES

        return Selection(path, 1, MAX_LINES)  # no range: the file from its start
    start, end = rng.start.line, rng.end.line
    if end > start and rng.end.character == 0:
        end -= 1  # a selection that ends at the start of a line does not include it
    return Selection(path, start + 1, max(start, end) + 1)


def history(turns: list[messages.HistoryTurn] | None) -> list[HistoryTurn]:
    """`lantern/ask`'s `history` as the agent's turns."""
    if not turns:
        return []
    from lantern.agent.conversation import HistoryTurn

    return [HistoryTurn(t.question, t.answer) for t in turns]


def ask_result(data: dict[str, Any]) -> messages.AskResult:
    """The session's result dict as the typed `lantern/ask` result; a key the type lacks
    is an error, so the type (and docs/protocol.md) cannot fall behind the agent."""
    result: messages.AskResult = messages.converter().structure(data, messages.AskResult)
    return result


def error_result(conversation_id: str | None, code: str, message: str) -> messages.AskResult:
    """A question that could not start: `stopReason: "error"` with a stable `errorCode`."""
    return messages.AskResult(
        conversation_id=conversation_id,
        answer="",
        references=[],
        tool_calls=[],
        usage={"promptTokens": 0, "completionTokens": 0},
        stop_reason="error",
        model=None,  # no model answered
        error_code=code,
        error=message,
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


def progress_text(event: dict[str, Any]) -> str:
    """`read_file src/app.py · lines 1–400: awaiting approval` for the progress notification."""
    summary = str(event.get("summary") or "")
    status = str(event["status"]).replace("_", " ")
    return f"{event['name']} {summary}: {status}" if summary else f"{event['name']}: {status}"
