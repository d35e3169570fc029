"""`lantern serve`: the language server's handlers. LSP in, `Session` calls, LSP out.

Methods: `lantern/ask`, `lantern/resetConversation`, `lantern/info`, and the
editor view's `lantern/grants`, `lantern/revokeGrant`, `lantern/models`,
`lantern/localServers`, `lantern/suggestMentions` (`editor_requests.py`);
notifications `lantern/event`; work-done progress with cancel; approvals as
`window/showMessageRequest`, or `lantern/approve` for a client that asks for it
(`approver.py`); `lantern/navigate` to a client that offers its language servers
(`navigator.py`); settings from
`initializationOptions`, `workspace/configuration` (section `lantern`) and
`workspace/didChangeConfiguration` (docs/protocol.md#requests, #events,
#approvals, #cancel). Reference ranges and spans are counted in the position
encoding pygls negotiated at `initialize` (the client's first choice of
utf-8/16/32). Each handler gets typed params and returns a typed result
(`messages.py`): pygls has already checked the params' shape, and answered a
request whose params do not fit with -32602 (`protocol.py`). Reading and
writing stdio is `transport.py`'s job; the small LSP-to-session conversions are
in `translate.py`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern import __version__, memory, startup
from lantern.agent.failure import EndpointError
from lantern.audit import audit_path
from lantern.lsp import editor_requests, translate
from lantern.lsp.approver import EditorPrompt, client_offers
from lantern.lsp.messages import (
    ASK,
    EVENT,
    INFO,
    RESET,
    AskParams,
    EventParams,
    InfoResult,
    NoParams,
    ResetParams,
    ResetResult,
    converter,
)
from lantern.lsp.navigator import ClientNavigator
from lantern.lsp.protocol import LanternProtocol
from lantern.lsp.transport import serve_stdio
from lantern.platform_gate import CODE as UNSUPPORTED_PLATFORM
from lantern.platform_gate import unsupported
from lantern.session import NoWorkspace, Session, load_agent_side
from lantern.workspace.lines import MAX_LINES

if TYPE_CHECKING:
    from lantern.agent.events import Event
    from lantern.agent.result import AskResult

log = logging.getLogger("lantern.lsp")

__all__ = ["ASK", "EVENT", "INFO", "RESET", "LanternServer", "build_server", "serve"]


class LanternServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "lantern", __version__, protocol_cls=LanternProtocol, converter_factory=converter
        )
        self.session = Session(
            EditorPrompt(self, lambda: self.session.settings.approval.timeout_seconds),
            navigator=ClientNavigator(self),
        )
        self.by_token: dict[str | int, asyncio.Task[Any]] = {}
        self.pending_problems: list[str] = []
        #: Folder changes and settings pulls, one at a time and in the order they came:
        #: each reads the folders the one before it left (two quick
        #: `didChangeWorkspaceFolders` both count), and a question waits for those
        #: sent before it.
        self.folders_lock = asyncio.Lock()

    def report(self, problems: list[str]) -> None:
        for problem in problems:
            log.warning("setting ignored: %s", problem)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"Lantern: {problem}; using the default",
                )
            )


def build_server() -> LanternServer:
    server = LanternServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: LanternServer, params: types.InitializeParams) -> None:
        skipped = ls.session.set_folders(translate.folders(params))
        options = params.initialization_options
        ls.pending_problems = ls.session.configure(
            init_options=options if isinstance(options, dict) else {}
        )
        ls.pending_problems += skipped
        # Started: collect as usual from when the answer is sent (`lantern.startup`).
        asyncio.get_running_loop().call_soon(startup.loaded)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LanternServer, params: types.InitializedParams) -> None:
        # The agent side loads in the background, so the first question does not wait for it.
        threading.Thread(target=load_agent_side, daemon=True).start()
        problems = ls.pending_problems
        ls.pending_problems = []
        async with ls.folders_lock:
            problems += await _pull_configuration(ls)
        ls.report(problems)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed_configuration(
        ls: LanternServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pushed = params.settings.get("lantern") if isinstance(params.settings, dict) else None
        async with ls.folders_lock:
            if isinstance(pushed, dict):
                problems = ls.session.configure(configuration=pushed)
            else:
                problems = await _pull_configuration(ls)
        ls.report(problems)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def changed_folders(
        ls: LanternServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        removed = {to_fs_path(f.uri) for f in params.event.removed}
        async with ls.folders_lock:  # the folders as the change before this one left them
            folders = [f for f in ls.session.folders if f not in removed]
            folders += [
                p for f in params.event.added if (p := to_fs_path(f.uri)) and p not in folders
            ]
            # A new folder's own settings may narrow (deny globs, lower limits): read them
            # before its files become reachable.
            problems = await _pull_configuration(ls, folders)
            problems += ls.session.set_folders(folders)
        ls.report(problems)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancelled(ls: LanternServer, params: types.WorkDoneProgressCancelParams) -> None:
        task = ls.by_token.get(params.token)
        if task is not None:
            task.cancel()

    @server.feature(RESET)
    def reset(ls: LanternServer, params: ResetParams) -> ResetResult:
        return ResetResult(reset=ls.session.reset(params.conversation_id))

    @server.feature(INFO)
    def info(ls: LanternServer, params: NoParams | None) -> InfoResult:
        return InfoResult(
            version=__version__,
            model=ls.session.settings.model,
            audit_log=str(audit_path()),
            read_max_lines=MAX_LINES,
        )

    @server.feature(ASK)
    async def ask(ls: LanternServer, params: AskParams) -> AskResult:
        try:
            return await _ask(ls, params)
        finally:
            # What the question's parses freed goes back to the system, off the loop.
            asyncio.get_running_loop().run_in_executor(None, memory.release)

    editor_requests.register(server)
    return server


async def _pull_configuration(ls: LanternServer, folders: list[str] | None = None) -> list[str]:
    caps = ls.client_capabilities.workspace
    if caps is None or not caps.configuration:
        return []
    # The unscoped section is the user's; each folder's section can only narrow it.
    scoped = [
        types.ConfigurationItem(section="lantern", scope_uri=Path(f).as_uri())
        for f in (ls.session.folders if folders is None else folders)
    ]
    try:
        items = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="lantern"), *scoped])
        )
    except Exception as exc:
        log.warning("could not read the client's settings: %s", exc)
        return []
    values = list(items or [])
    section = values[0] if values else None
    return ls.session.configure(
        configuration=section if isinstance(section, dict) else {},
        folder_configurations=[v for v in values[1:] if isinstance(v, dict)],
    )


async def _progress_token(ls: LanternServer, given: str | int | None) -> str | int | None:
    if given is not None:
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


async def _ask(ls: LanternServer, params: AskParams) -> AskResult:
    question, conversation_id = params.question, params.conversation_id
    refusal = unsupported()
    if refusal is not None:  # native Windows: every tool would be refused, so ask no model
        return translate.error_result(conversation_id, UNSUPPORTED_PLATFORM, refusal)
    editor = translate.editor_context(params.context)
    mentions = translate.mentions(params.mentions)
    request_id = ls.protocol.msg_id
    token = await _progress_token(ls, params.work_done_token)
    current = {"id": conversation_id}
    progress = ls.work_done_progress

    def on_event(event: Event) -> None:
        ls.protocol.notify(EVENT, EventParams(current["id"], request_id, event))
        if token is not None and event.kind == "tool":
            progress.report(
                token,
                types.WorkDoneProgressReport(message=translate.progress_text(event)),
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
        async with ls.folders_lock:  # folder changes sent before the question apply to it
            pass
        result = await ls.session.ask(
            question,
            conversation_id=conversation_id,
            editor=editor,
            on_event=on_event,
            on_conversation=on_conversation,
            history=translate.history(params.history),
            mentions=mentions,
        )
    except NoWorkspace as exc:
        return translate.error_result(conversation_id, NoWorkspace.code, str(exc))
    except EndpointError as exc:
        if not client_offers(ls, "showsErrors"):  # else the client shows `detail` itself
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"Lantern: {exc}")
            )
        return translate.error_result(conversation_id, exc.code, str(exc), exc.detail())
    finally:
        if token is not None:
            ls.by_token.pop(token, None)
            progress.end(token, types.WorkDoneProgressEnd(message="done"))
    if result.stop_reason == "cancelled":
        raise asyncio.CancelledError  # pygls answers with the LSP "request cancelled" error
    return result.in_encoding(translate.position_encoding(ls))


def serve() -> NoReturn:
    """Run the language server on stdin/stdout until `exit` or end of input; never returns."""
    memory.limit_arenas()  # before any thread starts
    serve_stdio(build_server)
