"""`lantern serve`: the language server. Wiring only: LSP in, `Session` calls, LSP out.

Methods (DESIGN section 8): `lantern/ask`, `lantern/resetConversation`,
notifications `lantern/event`; work-done progress with cancel; approvals as
`window/showMessageRequest`; settings from `initializationOptions`,
`workspace/configuration` (section `lantern`) and
`workspace/didChangeConfiguration`. stdout carries JSON-RPC only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import sys
import threading
import uuid
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern import __version__
from lantern.lsp.approver import EditorApprover
from lantern.lsp.framing import StdinChunks, read_messages
from lantern.session import NoWorkspace, Selection, Session

log = logging.getLogger("lantern.lsp")

ASK = "lantern/ask"
RESET = "lantern/resetConversation"
EVENT = "lantern/event"
INFO = "lantern/info"  # not in DESIGN section 8: lets an editor show the model and the audit log


def plain(value: Any) -> Any:
    """pygls hands custom params over as nested namedtuples; turn them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class LanternServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("lantern", __version__)
        self.session = Session(
            EditorApprover(self, lambda: self.session.settings.approval.timeout_seconds)
        )
        self.by_token: dict[str | int, asyncio.Task[Any]] = {}
        self.pending_problems: list[str] = []

    def report(self, problems: list[str]) -> None:
        for problem in problems:
            log.warning("setting ignored: %s", problem)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"Lantern: {problem}; using the default",
                )
            )


def _folders(params: types.InitializeParams) -> list[str]:
    if params.workspace_folders:
        return [to_fs_path(f.uri) or "" for f in params.workspace_folders]
    if params.root_uri:
        return [to_fs_path(params.root_uri) or ""]
    return [params.root_path] if params.root_path else []


def _selection(context: Any) -> Selection | None:
    if not isinstance(context, dict) or not isinstance(context.get("uri"), str):
        return None
    path = to_fs_path(context["uri"])
    if not path:
        raise JsonRpcInvalidParams("context.uri must be a file URI")
    rng = context.get("range")
    if not isinstance(rng, dict):
        return Selection(path, 1, 400)
    start = int(rng["start"]["line"])
    end = int(rng["end"]["line"])
    if end > start and int(rng["end"].get("character", 0)) == 0:
        end -= 1  # a selection that ends at the start of a line does not include it
    return Selection(path, start + 1, max(start, end) + 1)


def _error_result(conversation_id: str | None, message: str) -> dict[str, Any]:
    return {
        "conversationId": conversation_id,
        "answer": "",
        "references": [],
        "toolCalls": [],
        "usage": {"promptTokens": 0, "completionTokens": 0},
        "stopReason": "error",
        "error": message,
    }


def build_server() -> LanternServer:
    server = LanternServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: LanternServer, params: types.InitializeParams) -> None:
        skipped = ls.session.set_folders(_folders(params))
        options = params.initialization_options
        ls.pending_problems = ls.session.configure(
            init_options=options if isinstance(options, dict) else {}
        )
        ls.pending_problems += [f"workspace folder {name} is not a folder" for name in skipped]

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LanternServer, params: types.InitializedParams) -> None:
        threading.Thread(target=_warm_up, daemon=True).start()
        problems = ls.pending_problems
        ls.pending_problems = []
        problems += await _pull_configuration(ls)
        ls.report(problems)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed_configuration(
        ls: LanternServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pushed = params.settings.get("lantern") if isinstance(params.settings, dict) else None
        if isinstance(pushed, dict):
            ls.report(ls.session.configure(configuration=pushed))
        else:
            ls.report(await _pull_configuration(ls))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def changed_folders(ls: LanternServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = {to_fs_path(f.uri) for f in params.event.removed}
        folders = [f for f in ls.session.folders if f not in removed]
        folders += [p for f in params.event.added if (p := to_fs_path(f.uri)) and p not in folders]
        ls.report(
            [f"workspace folder {n} is not a folder" for n in ls.session.set_folders(folders)]
        )

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancelled(ls: LanternServer, params: types.WorkDoneProgressCancelParams) -> None:
        task = ls.by_token.get(params.token)
        if task is not None:
            task.cancel()

    @server.feature(RESET)
    def reset(ls: LanternServer, params: Any) -> dict[str, bool]:
        conversation_id = plain(params).get("conversationId")
        if not isinstance(conversation_id, str):
            raise JsonRpcInvalidParams("conversationId must be a string")
        return {"reset": ls.session.reset(conversation_id)}

    @server.feature(INFO)
    def info(ls: LanternServer, params: Any) -> dict[str, Any]:
        from lantern.audit import audit_path

        return {
            "version": __version__,
            "model": ls.session.settings.model,
            "auditLog": str(audit_path()),
        }

    @server.feature(ASK)
    async def ask(ls: LanternServer, params: Any) -> dict[str, Any]:
        return await _ask(ls, plain(params) or {})

    return server


async def _pull_configuration(ls: LanternServer) -> list[str]:
    caps = ls.client_capabilities.workspace
    if caps is None or not caps.configuration:
        return []
    try:
        items = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="lantern")])
        )
    except Exception as exc:
        log.warning("could not read the client's settings: %s", exc)
        return []
    section = plain(items[0]) if items else None
    return ls.session.configure(configuration=section if isinstance(section, dict) else {})


def _warm_up() -> None:
    """Import the agent stack in the background so the first question does not wait for it."""
    import lantern.agent.loop  # noqa: F401


async def _progress_token(ls: LanternServer, given: Any) -> str | int | None:
    if isinstance(given, str | int):
        return given
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    token = f"lantern-{uuid.uuid4().hex[:12]}"
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as exc:
        log.info("client refused a progress token: %s", exc)
        return None
    return token


def _progress_text(event: dict[str, Any]) -> str:
    """`read_file src/app.py: awaiting approval` for the editor's progress notification."""
    args = event.get("arguments")
    target = ""
    if isinstance(args, dict):
        target = str(args.get("path") or args.get("pattern") or "")[:60]
    status = str(event["status"]).replace("_", " ")
    return f"{event['name']} {target}: {status}" if target else f"{event['name']}: {status}"


async def _ask(ls: LanternServer, params: dict[str, Any]) -> dict[str, Any]:
    question = params.get("question")
    if not isinstance(question, str) or not question.strip():
        raise JsonRpcInvalidParams("question must be a non-empty string")
    conversation_id = params.get("conversationId")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise JsonRpcInvalidParams("conversationId must be a string")
    selection = _selection(params.get("context"))
    request_id = ls.protocol.msg_id
    token = await _progress_token(ls, params.get("workDoneToken"))
    current = {"id": conversation_id}
    progress = ls.work_done_progress

    def on_event(event: dict[str, Any]) -> None:
        ls.protocol.notify(
            EVENT, {"conversationId": current["id"], "requestId": request_id, **event}
        )
        if token is not None and event.get("kind") == "tool":
            progress.report(
                token,
                types.WorkDoneProgressReport(message=_progress_text(event)),
            )

    def on_conversation(conversation: str) -> None:
        current["id"] = conversation

    task = asyncio.current_task()
    if token is not None:
        progress.begin(
            token,
            types.WorkDoneProgressBegin(title="Lantern", message=question[:80], cancellable=True),
        )
        if task is not None:
            ls.by_token[token] = task
    try:
        result = await ls.session.ask(
            question,
            conversation_id=conversation_id,
            selection=selection,
            on_event=on_event,
            on_conversation=on_conversation,
        )
    except NoWorkspace as exc:
        return _error_result(conversation_id, str(exc))
    except Exception as exc:
        from lantern.agent.endpoint import EndpointError

        if not isinstance(exc, EndpointError):
            raise
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Lantern: {exc}")
        )
        return _error_result(conversation_id, str(exc))
    finally:
        if token is not None:
            ls.by_token.pop(token, None)
            progress.end(token, types.WorkDoneProgressEnd(message="done"))
    if result.stop_reason == "cancelled":
        raise asyncio.CancelledError  # pygls answers with the LSP "request cancelled" error
    return result.to_dict()


class _ClientLog(logging.Handler):
    """Warnings and errors also go to the client as `window/logMessage`."""

    def __init__(self, server: LanternServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy or self.server.protocol.writer is None:
            return
        self._busy = True
        try:
            level = (
                types.MessageType.Error
                if record.levelno >= logging.ERROR
                else types.MessageType.Warning
            )
            self.server.window_log_message(
                types.LogMessageParams(type=level, message=self.format(record))
            )
        except Exception:
            pass
        finally:
            self._busy = False


def _reply_error(writer: StdoutWriter, code: int, message: str, msg_id: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
    data = body.encode("utf-8")
    writer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)


def _deliver(server: LanternServer, writer: StdoutWriter, body: bytes) -> None:
    protocol = server.protocol
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except JsonRpcException as exc:
        raw = json.loads(body)
        if "method" in raw and "id" in raw:
            _reply_error(writer, exc.code, exc.message or "Invalid params", raw["id"])
        return
    try:
        protocol.handle_message(message)
    except (concurrent.futures.InvalidStateError, asyncio.InvalidStateError):
        # The client answered a request the server already gave up on (a prompt that
        # timed out, or whose question was cancelled); nothing waits for the answer.
        log.info("ignoring a late reply to a request that was given up")


async def _run(server: LanternServer, writer: StdoutWriter) -> None:
    stop = threading.Event()
    server._stop_event = stop
    chunks = StdinChunks(sys.stdin.fileno(), asyncio.get_running_loop())
    await read_messages(
        chunks,
        deliver=lambda body: _deliver(server, writer, body),
        reply_error=lambda code, message, msg_id: _reply_error(writer, code, message, msg_id),
        stopped=stop.is_set,
    )


def serve() -> int:
    """Run the language server on stdin/stdout until `exit` or end of input."""
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the JSON-RPC stream
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="lantern %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = build_server()
    writer = StdoutWriter(stdout)
    server.protocol.set_writer(writer)
    logging.getLogger("lantern").addHandler(_ClientLog(server))
    code = 0
    try:
        asyncio.run(_run(server, writer))
        code = 0 if server.protocol._shutdown else 1
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    except (KeyboardInterrupt, BrokenPipeError):
        code = 1
    log.info("language server stopped (exit %d)", code)
    return code
