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
- `Allow in Chat`: the same file — same relative path and `Identity` (device,
  inode, generation or birth time where known, change time and size), so a file
  swapped, re-created under a reused inode number, or changed afterwards is
  asked about again — for the rest of the conversation.

Paths and `approval.allow` globs are compared as the file's root compares names
(`ApprovalRequest.key`): on a disk that folds case, `DOCS/x` is `docs/x`.
- For `list_files`, `search` and code lookups (folder `outline`, `find_symbol`,
  `find_references`) any yes covers that folder and all below it for the rest of the
  conversation while it is the same folder from the same roots (`ApprovalRequest.folders`),
  for that kind of access: a listing covers no search or lookup, a search covers all.
- `Always Allow`: every read in this workspace from now on, stored under
  `platformdirs.user_data_path("lantern")` with the roots' paths and their
  folders' inode, generation and birth time (`workspace_identity`). The jail,
  the denylist and `approval.deny` still hold.

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
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal, Protocol

import platformdirs

from lantern.escaping import escape_line
from lantern.workspace.ignore.globs import GlobList
from lantern.workspace.jail import Identity
from lantern.workspace.names import EXACT, Names

PATTERN_SHOWN = 80  # how much of a search pattern the prompt shows
INSTRUCTIONS = "project_instructions"  # the tool of a request for AGENTS.md & co. (a read)
_FOLDER_VERBS = {"search": "search the contents of", "outline": "outline the code in"}
_LOOKUPS = {"find_symbol": "look up definitions of", "find_references": "find uses of"}


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
    # list_files / search: each folder from `.` down to `path` and its identity (`folder_chain`)
    folders: tuple[tuple[str, Hashable], ...] = ()
    # Always Allow: the roots' (inode, generation, birth time) (`Workspace.persistent_identity`)
    workspace_identity: RootsIdentity = ()

    @property
    def key(self) -> str:
        """`path` in the form grants and allow globs compare: `DOCS/x` is `docs/x` on a
        disk that folds case. A leading workspace folder name is kept exact: `App` and
        `app` are two roots."""
        return self.key_of(self.path)

    def key_of(self, path: str) -> str:
        """Any path of this request's root in the form grants compare (see `key`)."""
        if not self.root_named:
            return self.names.exact_path(path)
        head, slash, rest = path.partition("/")
        return head + slash + self.names.exact_path(rest) if rest else path

    def identities_down_to(self, folder: str) -> tuple[Hashable, ...]:
        """The identities of the workspace's roots and of each folder from them down to
        `folder` (a key at or above this request's): what a grant for `folder` is bound to."""
        return tuple(ident for path, ident in self.folders if _covers(self.key_of(path), folder))

    def message(self) -> str:
        """The prompt text, e.g. `Lantern wants to read src/app.py (lines 1–400, 12 KB)`;
        the path (a name from the disk) escaped onto one line, so it adds no line of its own."""
        path = escape_line(self.path)
        if self.folder:
            where = "the workspace" if path == "." else path
            what = shown_pattern(self.pattern) if self.pattern is not None else None
            if what is not None and self.tool in _LOOKUPS:
                return f"Lantern wants to {_LOOKUPS[self.tool]} `{what}` in {where}"
            if what is not None and self.tool == "search":
                return f"Lantern wants to search {where} for `{what}`"
            return f"Lantern wants to {_FOLDER_VERBS.get(self.tool, 'list the files in')} {where}"
        detail = []
        if self.start_line is not None and self.end_line is not None:
            detail.append(f"lines {self.start_line}–{self.end_line}")
        if self.size is not None:
            detail.append(human_size(self.size))
        suffix = f" ({', '.join(detail)})" if detail else ""
        why = " as project instructions for the model" if self.tool == INSTRUCTIONS else ""
        verb = "outline" if self.tool == "outline" else "read"
        return f"Lantern wants to {verb} {path}{suffix}{why}"


@dataclass(frozen=True)
class Outcome:
    """An approver's answer, and whether a person gave it (`user`), a rule did (`auto`), or
    the user chose the file by naming it with the question (`mention`)."""

    decision: Decision
    by: Literal["auto", "user", "mention"]
    waited: float = field(default=0.0, compare=False)
    """Seconds this request waited for a person: its own prompt, or one before it in the
    same conversation (one prompt at a time) whose answer then covered it."""


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


#: Each root folder's (inode, generation, birth time): what `Always Allow` keeps.
RootsIdentity = tuple[tuple[int, int | None, int | None], ...]


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

    def allowed(self, key: str, identity: RootsIdentity = ()) -> bool:
        return self.entry(key, identity) is not None

    def entry(self, key: str, identity: RootsIdentity | None = None) -> dict[str, object] | None:
        """The stored grant of workspace `key` (`name`, `always`, `since`, `roots`), or
        None; with `identity`, only while its roots are the folders it was given for (an
        entry stored without `roots`, by an older version, matches none)."""
        entry = self._load().get(key)
        if not (isinstance(entry, dict) and entry.get("always") is True):
            return None
        if identity is not None and entry.get("roots") != [list(i) for i in identity]:
            return None
        return entry

    def allow(self, key: str, name: str, identity: RootsIdentity = ()) -> None:
        workspaces = self._load()
        workspaces[key] = {
            "name": name,
            "always": True,
            "since": int(time.time()),
            "roots": [list(i) for i in identity],
        }
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


_CODE = frozenset({"outline", "find_symbol", "find_references", "list_files"})  # a lookup grant
_GRANT_COVERS = {"search": _CODE | {"search"}, "list_files": frozenset({"list_files"})}


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
        # (tool, folder, the identities from the roots down to it) per conversation
        self._folders: dict[str, set[tuple[str, str, Hashable]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}  # one prompt at a time, per conversation

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
        self._locks.pop(conversation_id, None)

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
        held = self._folders.get(conversation_id, ())
        return sorted({(tool, folder) for tool, folder, _ in held})

    def forget_file(self, conversation_id: str, key: str) -> bool:
        """Forget the grant for file `key`, whichever identities it was given for."""
        held = self._files.get(conversation_id, set())
        gone = {entry for entry in held if entry[0] == key}
        held -= gone
        return bool(gone)

    def forget_folder(self, conversation_id: str, tool: str, folder: str) -> bool:
        held = self._folders.get(conversation_id, set())
        gone = {entry for entry in held if entry[:2] == (tool, folder)}
        held -= gone
        return bool(gone)

    def _remembered(self, req: ApprovalRequest) -> bool:
        if req.folder:
            return any(
                req.tool in _GRANT_COVERS.get(tool, _CODE)
                and _covers(folder, req.key)
                and req.identities_down_to(folder) == ident
                for tool, folder, ident in self._folders.get(req.conversation_id, ())
            )
        return (req.key, req.identity) in self._files.get(req.conversation_id, set())

    def _always(self, req: ApprovalRequest) -> bool:
        return self.grants.allowed(req.workspace_key, req.workspace_identity)

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        if self.mode == "workspace":
            return Outcome(Decision.ALLOW_ONCE, "auto")
        if self._allowed_by_glob(request):
            return Outcome(Decision.ALLOW_ONCE, "auto")
        if self._remembered(request) or self._always(request):
            return Outcome(Decision.ALLOW_ONCE, "user")
        # One prompt at a time per conversation: its concurrent calls for the same file
        # then see the first answer; another conversation's prompt does not wait.
        lock = self._locks.setdefault(request.conversation_id, asyncio.Lock())
        queued = lock.locked()
        started = time.perf_counter()
        async with lock:
            # A prompt answered while this call waited may cover it (the same file,
            # or "Always Allow").
            if self._remembered(request) or self._always(request):
                waited = time.perf_counter() - started if queued else 0.0
                return Outcome(Decision.ALLOW_ONCE, "user", waited)
            if observer is not None:
                observer.asking(request)
            decision = await self.prompt.ask(request)
            if observer is not None:
                observer.answered(request, decision)
            self._remember(request, decision)
        return Outcome(decision, "user", time.perf_counter() - started)

    def _remember(self, req: ApprovalRequest, decision: Decision) -> None:
        if not decision.allowed:
            return
        if req.folder:
            # list_files and search ask once per conversation per folder and tool.
            ident = req.identities_down_to(req.key)
            self._folders.setdefault(req.conversation_id, set()).add((req.tool, req.key, ident))
        elif decision is Decision.ALLOW_CONVERSATION:
            self._files.setdefault(req.conversation_id, set()).add((req.key, req.identity))
        if decision is Decision.ALLOW_WORKSPACE:
            self.grants.allow(req.workspace_key, req.workspace_name, req.workspace_identity)
