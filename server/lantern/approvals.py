"""Who says yes to a read.

Every read goes through one `Approver`: a tool builds an `ApprovalRequest`,
hands it over with the call's `PromptObserver` (from its `ToolContext`), and
never learns who answered. Two approvers exist:

- `Fixed` gives one answer to every request and never prompts: `lantern tool`
  and `lantern ask --approve allow|deny`.
- `Remembering` applies `approval.mode` and `approval.allow`, then the answers
  it remembers, and only then asks a person through a `Prompt`: the editor's
  (`lsp/approver.py`) or the terminal's (`cli/ask.py`).

What each answer covers:

- `Allow`: that one call.
- `Allow in Chat`: the same file — same relative path, device and inode, so a
  file swapped afterwards is asked about again — for the rest of the
  conversation.

Paths and `approval.allow` globs are compared as the file's root compares names
(`ApprovalRequest.key`): on a disk that folds case, `DOCS/x` is `docs/x`.
- For `list_files` and `search` any yes covers that folder and everything
  below it for the rest of the conversation, for that kind of access only:
  names and contents are different grants. A listing grant never covers a
  search (a search with a file as its path shows the whole file); a search
  grant covers listings, since search results name their files anyway.
- `Always Allow`: every read — files, listings and searches — in this
  workspace from now on, stored under `platformdirs.user_data_path("lantern")`.
  The jail, the denylist and `approval.deny` still hold.

`Deny`, `TIMEOUT` (no answer in time) and anything else that is no clear yes
refuse, and none of them is remembered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Literal, Protocol

import platformdirs

from lantern.escaping import escape_line
from lantern.workspace.ignore.globs import GlobList
from lantern.workspace.jail import Identity
from lantern.workspace.names import EXACT, Names

PATTERN_SHOWN = 80  # how much of a search pattern the prompt shows


class Decision(Enum):
    ALLOW_ONCE = "allow"
    ALLOW_CONVERSATION = "allow_conversation"
    ALLOW_WORKSPACE = "allow_workspace"
    DENY = "deny"
    TIMEOUT = "timeout"

    @property
    def allowed(self) -> bool:
        return self in (Decision.ALLOW_ONCE, Decision.ALLOW_CONVERSATION, Decision.ALLOW_WORKSPACE)


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str
    path: str  # as the model sees it: workspace-relative
    identity: Identity
    conversation_id: str
    workspace_key: str
    workspace_name: str
    folder: bool = False  # list_files / search: a folder, not one file
    start_line: int | None = None
    end_line: int | None = None
    size: int | None = None
    names: Names = EXACT  # how the file's root compares names (folded where its disk folds)
    root_named: bool = False  # `path` starts with a workspace folder's name (several roots)
    call_id: str | None = None  # the model's tool call that asks (an editor shows it there)
    pattern: str | None = None  # search: the pattern, shown in the prompt

    @property
    def key(self) -> str:
        """`path` in the form grants and allow globs compare: `DOCS/x` is `docs/x` on a
        disk that folds case. A leading workspace folder name is kept exact: `App` and
        `app` are two roots."""
        if not self.root_named:
            return self.names.exact_path(self.path)
        head, slash, rest = self.path.partition("/")
        return head + slash + self.names.exact_path(rest) if rest else self.path

    def message(self) -> str:
        """The prompt text, e.g. `Lantern wants to read src/app.py (lines 1–400, 12 KB)`.

        The path is a name from the disk: shown escaped on one line, so a file
        name can never add a line of its own to the prompt.
        """
        path = escape_line(self.path)
        if self.folder:
            where = "the workspace" if path == "." else path
            if self.tool == "search" and self.pattern is not None:
                return f"Lantern wants to search {where} for `{shown_pattern(self.pattern)}`"
            verb = "search the contents of" if self.tool == "search" else "list the files in"
            return f"Lantern wants to {verb} {where}"
        detail = []
        if self.start_line is not None and self.end_line is not None:
            detail.append(f"lines {self.start_line}–{self.end_line}")
        if self.size is not None:
            detail.append(human_size(self.size))
        suffix = f" ({', '.join(detail)})" if detail else ""
        return f"Lantern wants to read {path}{suffix}"


@dataclass(frozen=True)
class Outcome:
    """An approver's answer, and whether a person gave it (`user`) or a rule did (`auto`)."""

    decision: Decision
    by: Literal["auto", "user"]


class PromptObserver(Protocol):
    """Told when a prompt opens and when it is answered (the loop shows `awaiting_approval`).

    Only called when a person is actually asked: a rule or a remembered answer
    decides without telling it.
    """

    def asking(self, request: ApprovalRequest) -> None: ...

    def answered(self, request: ApprovalRequest, decision: Decision) -> None: ...


class Approver(Protocol):
    """Decides whether one read may go ahead: the one gate every tool goes through."""

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome: ...


class Prompt(Protocol):
    """Asks a person about one request; anything but a clear yes is a deny."""

    async def ask(self, request: ApprovalRequest) -> Decision: ...


class Fixed:
    """One answer for every request (`--approve allow|deny`): no prompt, no memory."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        return Outcome(self.decision, "auto")


def shown_pattern(pattern: str, limit: int = PATTERN_SHOWN) -> str:
    """A search pattern for the prompt: escaped onto one line, at most about `limit`
    characters (an escape is never cut in half; `…` marks a cut)."""
    shown: list[str] = []
    used = 0
    for char in pattern:
        piece = escape_line(char)
        if used + len(piece) > limit:
            shown.append("…")
            break
        shown.append(piece)
        used += len(piece)
    return "".join(shown)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def grants_path() -> Path:
    return platformdirs.user_data_path("lantern") / "approvals.json"


class WorkspaceGrants:
    """`Always Allow`, persisted as JSON keyed by workspace hash."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or grants_path()

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        return workspaces if isinstance(workspaces, dict) else {}

    def allowed(self, key: str) -> bool:
        return self.entry(key) is not None

    def entry(self, key: str) -> dict[str, object] | None:
        """The stored grant of workspace `key` (`name`, `always`, `since`), or None."""
        entry = self._load().get(key)
        return entry if isinstance(entry, dict) and entry.get("always") is True else None

    def allow(self, key: str, name: str) -> None:
        workspaces = self._load()
        workspaces[key] = {"name": name, "always": True, "since": int(time.time())}
        self._write(workspaces)

    def revoke(self, key: str) -> None:
        workspaces = self._load()
        if workspaces.pop(key, None) is not None:
            self._write(workspaces)

    def _write(self, workspaces: dict[str, dict[str, object]]) -> None:
        """Replace the file atomically, so a crash never leaves half a JSON document."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".approvals-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"workspaces": workspaces}, out, indent=2)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _covers(folder: str, path: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


#: What a folder grant for each tool also covers: contents (search) imply names
#: (list_files); names never imply contents.
_GRANT_COVERS = {
    "search": frozenset({"search", "list_files"}),
    "list_files": frozenset({"list_files"}),
}


class Remembering:
    """Applies `approval.mode` and `approval.allow`, then remembered answers, then asks `prompt`."""

    def __init__(
        self,
        prompt: Prompt,
        *,
        mode: Literal["ask", "workspace"] = "ask",
        allow_globs: Sequence[str] = (),
        grants: WorkspaceGrants | None = None,
    ) -> None:
        self.prompt = prompt
        self.configure(mode=mode, allow_globs=allow_globs)
        self.grants = grants or WorkspaceGrants()
        self._files: dict[str, set[tuple[str, Identity]]] = {}
        self._folders: dict[str, set[tuple[str, str]]] = {}  # (tool, folder) per conversation
        self._lock = asyncio.Lock()

    def configure(self, *, mode: Literal["ask", "workspace"], allow_globs: Sequence[str]) -> None:
        """Follow a settings change; remembered answers are kept."""
        self.mode = mode
        self._allow_globs = tuple(allow_globs)
        self._allow: dict[Names, GlobList] = {}

    def _allowed_by_glob(self, req: ApprovalRequest) -> bool:
        """`approval.allow`, compared as the file's root compares names."""
        if not self._allow_globs or req.folder:
            return False
        spec = self._allow.get(req.names)
        if spec is None:
            spec = GlobList(map(req.names.pattern, self._allow_globs), widest=False)
            self._allow[req.names] = spec
        return spec.match_file(req.key)

    def forget_conversation(self, conversation_id: str) -> None:
        self._files.pop(conversation_id, None)
        self._folders.pop(conversation_id, None)

    # -------------------------------------------------- what is remembered (lantern/grants)

    def conversations(self) -> list[str]:
        """The conversations that hold a remembered file or folder grant."""
        return sorted(
            {c for c, g in self._files.items() if g} | {c for c, g in self._folders.items() if g}
        )

    def file_grants(self, conversation_id: str) -> list[str]:
        """The files (as `ApprovalRequest.key`) granted for the rest of a conversation."""
        return sorted({key for key, _ in self._files.get(conversation_id, ())})

    def folder_grants(self, conversation_id: str) -> list[tuple[str, str]]:
        """The (tool, folder) grants of a conversation."""
        return sorted(self._folders.get(conversation_id, ()))

    def forget_file(self, conversation_id: str, key: str) -> bool:
        """Forget the grant for file `key`, whichever identities it was given for."""
        held = self._files.get(conversation_id, set())
        gone = {entry for entry in held if entry[0] == key}
        held -= gone
        return bool(gone)

    def forget_folder(self, conversation_id: str, tool: str, folder: str) -> bool:
        held = self._folders.get(conversation_id, set())
        if (tool, folder) not in held:
            return False
        held.discard((tool, folder))
        return True

    def _remembered(self, req: ApprovalRequest) -> bool:
        if req.folder:
            return any(
                req.tool in _GRANT_COVERS.get(tool, {tool}) and _covers(folder, req.key)
                for tool, folder in self._folders.get(req.conversation_id, ())
            )
        return (req.key, req.identity) in self._files.get(req.conversation_id, set())

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        if self.mode == "workspace":
            return Outcome(Decision.ALLOW_ONCE, "auto")
        if self._allowed_by_glob(request):
            return Outcome(Decision.ALLOW_ONCE, "auto")
        if self._remembered(request) or self.grants.allowed(request.workspace_key):
            return Outcome(Decision.ALLOW_ONCE, "user")
        # One prompt at a time: concurrent calls for the same file then see the first answer.
        async with self._lock:
            # A prompt answered while this call waited may cover it (the same file,
            # or "Always Allow").
            if self._remembered(request) or self.grants.allowed(request.workspace_key):
                return Outcome(Decision.ALLOW_ONCE, "user")
            if observer is not None:
                observer.asking(request)
            decision = await self.prompt.ask(request)
            if observer is not None:
                observer.answered(request, decision)
            self._remember(request, decision)
        return Outcome(decision, "user")

    def _remember(self, req: ApprovalRequest, decision: Decision) -> None:
        if not decision.allowed:
            return
        if req.folder:
            # list_files and search ask once per conversation per folder and tool.
            self._folders.setdefault(req.conversation_id, set()).add((req.tool, req.key))
        elif decision is Decision.ALLOW_CONVERSATION:
            self._files.setdefault(req.conversation_id, set()).add((req.key, req.identity))
        if decision is Decision.ALLOW_WORKSPACE:
            self.grants.allow(req.workspace_key, req.workspace_name)
