"""Small translations between LSP values and `Session` values, used by the handlers.

Each is a pure function of what the client sent (or what pygls negotiated), so the
handlers in `server.py` read as wiring. The shapes are in docs/protocol.md#requests.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern.session import Selection


def plain(value: Any) -> Any:
    """pygls hands custom params over as nested namedtuples; turn them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def folders(params: types.InitializeParams) -> list[str]:
    """The workspace roots of `initialize`: `workspaceFolders`, else `rootUri`, else `rootPath`."""
    if params.workspace_folders:
        return [to_fs_path(f.uri) or "" for f in params.workspace_folders]
    if params.root_uri:
        return [to_fs_path(params.root_uri) or ""]
    return [params.root_path] if params.root_path else []


def selection(context: Any) -> Selection | None:
    """`lantern/ask`'s `context: {uri, range?}` as 1-based inclusive lines of a file."""
    if not isinstance(context, dict) or not isinstance(context.get("uri"), str):
        return None
    path = to_fs_path(context["uri"])
    if not path:
        raise JsonRpcInvalidParams("context.uri must be a file URI")
    rng = context.get("range")
    if not isinstance(rng, dict):
        # Imported here: it pulls in the redaction modules, which `initialize` does not need.
        from lantern.workspace.text import MAX_LINES

        return Selection(path, 1, MAX_LINES)  # no range: the file from its start
    start = int(rng["start"]["line"])
    end = int(rng["end"]["line"])
    if end > start and int(rng["end"].get("character", 0)) == 0:
        end -= 1  # a selection that ends at the start of a line does not include it
    return Selection(path, start + 1, max(start, end) + 1)


def error_result(conversation_id: str | None, code: str, message: str) -> dict[str, Any]:
    """A question that could not start: `stopReason: "error"` with a stable `errorCode`."""
    return {
        "conversationId": conversation_id,
        "answer": "",
        "references": [],
        "toolCalls": [],
        "usage": {"promptTokens": 0, "completionTokens": 0},
        "stopReason": "error",
        "model": None,  # no model answered
        "errorCode": code,
        "error": message,
    }


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
