"""The state a language server keeps between requests, free of any LSP types.

A `Session` owns the workspace folders, the resolved settings, the
conversations and the approval memory, and answers questions with the same
agent loop as `lantern ask`. The `lsp/` package only translates JSON-RPC to
calls on it.

The agent side (the loop, the model client, openai: `compose.AgentSide`) is
loaded on first use, through `load_agent_side` alone, so the server answers
`initialize` before it is imported (`benchmarks/server_bench.py`); the server
warms it up in a thread once initialized. That function holds the server's one
function-level import (`tests/unit/test_import_graph.py`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lantern.approvals.approver import Prompt, Remembering
from lantern.approvals.grants import Grant, list_grants, revoke_grant
from lantern.settings.sources import Settings, load_settings_lenient
from lantern.settings.trust import narrow
from lantern.workspace.policy import Policy
from lantern.workspace.roots import FILE_SYSTEM_ROOT, Workspace, is_file_system_root
from lantern.workspace.suggestions import Suggestion, Symbol, suggest

if TYPE_CHECKING:
    from lantern.agent.events import EventSink
    from lantern.agent.inputs import EditorContext, HistoryTurn, Mention
    from lantern.agent.provider.model_lists import LocalServer, ModelList
    from lantern.agent.result import AskResult
    from lantern.compose import AgentSide
    from lantern.tools.navigator import Navigator


class NoWorkspace(Exception):
    """Asked before any workspace folder was opened.

    Clients recognise it by `code`, sent as the result's `errorCode`, not by its message.
    """

    code = "no_workspace"


def load_agent_side() -> type[AgentSide]:
    """The agent side's entry, importing it (and openai) on the first call: the boundary
    between what the server loads to start and what it loads to answer."""
    from lantern.compose import AgentSide

    return AgentSide


def _merge(low: Mapping[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(low)
    for key, value in high.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _identity(workspace: Workspace | None) -> tuple[tuple[int, int | None, int | None], ...] | None:
    """The roots' identity for listing `Always Allow`; None when a root cannot be read."""
    if workspace is None:
        return None
    try:
        return workspace.persistent_identity()
    except OSError:
        return None


class Session:
    def __init__(
        self,
        prompt: Prompt,
        environ: Mapping[str, str] | None = None,
        navigator: Navigator | None = None,
    ) -> None:
        self.navigator = navigator  # the client's language servers (`lantern/navigate`)
        self.environ = os.environ if environ is None else environ
        self.folders: list[str] = []
        self.workspace: Workspace | None = None
        self._init_options: Mapping[str, Any] = {}
        self._configuration: Mapping[str, Any] = {}
        self._folder_configurations: list[Mapping[str, Any]] = []
        self.settings = Settings()
        self._problems: set[str] = set()
        self.approvals = Remembering(prompt)
        self._agent_side: AgentSide | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._suggesting = asyncio.Lock()  # one completion walk at a time

    # ---------------------------------------------------------------- configuration

    def set_folders(self, folders: Sequence[str]) -> list[str]:
        """Use these folders as the jail's roots; returns why each skipped one was skipped
        (not a folder, or the file system root: see `workspace/roots.py`)."""
        usable, problems = [], []
        for folder in folders:
            if not os.path.isdir(folder):
                name = os.path.basename(folder.rstrip("/"))
                problems.append(f"workspace folder {name} is not a folder")
            elif is_file_system_root(folder):
                problems.append(FILE_SYSTEM_ROOT)
            else:
                usable.append(folder)
        self.folders = usable
        self._rebuild_workspace()
        return problems

    def configure(
        self,
        *,
        init_options: Mapping[str, Any] | None = None,
        configuration: Mapping[str, Any] | None = None,
        folder_configurations: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str]:
        """Re-resolve settings; returns a message for each bad setting (its default is kept).

        `folder_configurations` (the client's settings for each workspace folder) can
        only narrow the result: see `lantern.settings.trust`.

        A problem that was already returned by the previous call is not returned again,
        so a bad `initializationOptions` value is reported once, not on every change.
        """
        if init_options is not None:
            self._init_options = init_options
        if configuration is not None:
            self._configuration = configuration
        if folder_configurations is not None:
            self._folder_configurations = list(folder_configurations)
        client = _merge(self._init_options, self._configuration)
        self.settings, problems = load_settings_lenient(
            client=client, environ=self.environ, client_source="client settings"
        )
        for folder in self._folder_configurations:
            self.settings = narrow(self.settings, folder)
        new = [p for p in problems if p not in self._problems]
        self._problems = set(problems)
        approval = self.settings.approval
        self.approvals.configure(mode=approval.mode, allow_globs=approval.allow)
        self._rebuild_workspace()
        return new

    def _rebuild_workspace(self) -> None:
        policy = Policy(self.settings.approval.deny)
        self.workspace = Workspace(self.folders, policy) if self.folders else None

    # ---------------------------------------------------------------- mentions

    async def suggest_mentions(self, query: str, symbols: Sequence[Symbol]) -> list[Suggestion]:
        """What `@query` may mention (`workspace/suggestions.py`): none before a folder is
        open. Walked in a worker thread, one walk at a time (a client sends one per key)."""
        workspace = self.workspace
        if workspace is None:
            return []
        async with self._suggesting:
            return await asyncio.to_thread(suggest, workspace, query, symbols)

    # ---------------------------------------------------------------- questions

    @property
    def agent_side(self) -> AgentSide:
        """The conversations and model clients; the agent side is loaded by the first use."""
        if self._agent_side is None:
            self._agent_side = load_agent_side()()
        return self._agent_side

    def reset(self, conversation_id: str) -> bool:
        self.approvals.forget_conversation(conversation_id)
        return self.agent_side.conversations.reset(conversation_id)

    # ---------------------------------------------------------------- models

    async def models(self) -> ModelList:
        """The models of the endpoint the settings resolve to, or why there are none."""
        return await self.agent_side.models(self.settings, self.environ)

    async def local_servers(self) -> list[LocalServer]:
        """The model servers answering on this machine (no key is sent to them)."""
        return await self.agent_side.local_servers(self.environ)

    # ---------------------------------------------------------------- grants

    def grants(self, conversation_id: str | None) -> list[Grant]:
        """The open workspace's `Always Allow` and one conversation's remembered grants."""
        workspace = self.workspace
        return list_grants(
            self.approvals,
            workspace_key=workspace.key if workspace else None,
            workspace_name=workspace.name if workspace else "",
            conversation_id=conversation_id,
            workspace_identity=_identity(workspace),
        )

    def revoke_grant(self, grant_id: str) -> bool:
        workspace = self.workspace
        return revoke_grant(
            self.approvals,
            grant_id,
            workspace_key=workspace.key if workspace else None,
            workspace_name=workspace.name if workspace else "",
        )

    async def ask(
        self,
        question: str,
        *,
        conversation_id: str | None,
        editor: EditorContext | None = None,
        on_event: EventSink,
        on_conversation: Callable[[str], None] | None = None,
        history: Sequence[HistoryTurn] = (),
        mentions: Sequence[Mention] = (),
    ) -> AskResult:
        """Answer `question` in a conversation; `history` seeds it when it has no messages,
        `editor` is what the user's editor showed (`agent/editor_context.py`); raises
        `NoWorkspace`, or `EndpointError` when no model can be found."""
        workspace = self.workspace
        if workspace is None:
            raise NoWorkspace("open a folder first: Lantern answers about workspace folders")
        side = self.agent_side
        endpoint, model = side.client(self.settings, self.environ)
        conv = side.conversations.get_or_create(conversation_id, workspace.key, history)
        if on_conversation is not None:
            on_conversation(conv.id)
        lock = self._locks.setdefault(conv.id, asyncio.Lock())
        async with lock:  # one question at a time per conversation
            one = await side.agent(
                endpoint,
                model,
                workspace,
                self.approvals,
                self.settings,
                self.environ,
                self.navigator,
            )
            return await one.ask(question, conv, on_event, editor=editor, mentions=mentions)
