"""What every tool shares: what defines it, its context, its result, and the approval step.

A tool is one module (`read_file.py`, `search.py`, `outline.py`, …) that ends with its
`TOOL`: name, description, arguments, how it runs and how a call reads in one line; the
registry lists those `TOOL`s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lantern.approvals.approver import ApprovalRequest, Approver, Decision, PromptObserver
from lantern.errors import ToolError
from lantern.escaping import escape_line
from lantern.tools.arguments import json_schema
from lantern.workspace.roots import Opened, Workspace

if TYPE_CHECKING:
    from lantern.code.cache import ParseCache
    from lantern.tools.navigator import Navigator

_INLINE_DEPTH = 32  # folders; a deeper folder chain is walked in a worker thread


@dataclass(frozen=True)
class SeenSpan:
    """Lines of a file that were shown to the model (for `seen` references)."""

    path: str
    start: int
    end: int


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    code: str | None = None
    path: str | None = None  # the workspace-relative path the call touched
    decision: str | None = None  # auto | user | mention | denied | refused:<code>
    seen: list[SeenSpan] = field(default_factory=list)  # for `seen` references
    redactions: int = 0
    source: str | None = None  # the language server that answered (audited)

    @property
    def bytes(self) -> int:
        # surrogatepass: a lone surrogate echoed from the model is counted, not a crash.
        return len(self.content.encode("utf-8", "surrogatepass"))

    def public(self) -> dict[str, Any]:
        """The `lantern tool` output shape."""
        return {
            "content": self.content,
            "is_error": self.is_error,
            "code": self.code,
            "bytes": self.bytes,
        }


@dataclass
class ToolContext:
    """What one tool call runs with.

    `observer` hears about a prompt this call opens (the agent loop turns it
    into `awaiting_approval` events); without one, prompts are silent.
    """

    workspace: Workspace
    approvals: Approver
    conversation_id: str = "default"
    observer: PromptObserver | None = None
    call_id: str | None = None  # the model's call this context runs (named in the prompt)
    # The conversation's parse cache (outline, find_symbol, find_references); None: a
    # cache for this call alone.
    code_cache: ParseCache | None = None
    # The editor's language servers (`navigator.py`); None: syntax only (the CLI).
    navigator: Navigator | None = None


@dataclass(frozen=True)
class Tool:
    """One tool, whole: what the model is told, what it may send, how it runs, how a call
    reads in one line for people (`summarize` gets the parsed argument object), and how to
    ask for less (`narrow`)."""

    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Any, ToolContext], Awaitable[ToolResult]]
    summarize: Callable[[Mapping[str, Any]], str]
    narrow: str = ""
    """How to ask for less when a result does not fit the context window (the model is told)."""

    def spec(self) -> dict[str, Any]:
        """The OpenAI `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json_schema(self.args),
            },
        }


async def approve(
    ctx: ToolContext,
    tool: str,
    opened: Opened,
    *,
    folder: bool = False,
    lines: tuple[int, int] | None = None,
    path: str | None = None,
    pattern: str | None = None,
) -> str:
    """The approval step of the read path (docs/read-path.md#check-6). `path` names the
    request when it is not the opened target's (`.` for a search over every root);
    `pattern` is a search's, shown in the prompt.

    Returns the audit decision (`auto` or `user`), or raises `denied_by_user` /
    `approval_timeout`.
    """
    path = path or opened.target.rel
    workspace = ctx.workspace
    folders: tuple[tuple[str, Hashable], ...] = ()
    try:
        if folder and len(opened.target.parts) <= _INLINE_DEPTH:
            folders = workspace.folder_chain(opened, path)
        elif folder:  # one open per folder on the way down: a deep path walks in a worker
            folders = await asyncio.to_thread(workspace.folder_chain, opened, path)
        roots = workspace.persistent_identity()
    except OSError as exc:  # a workspace folder gone or unreadable since the open
        message = f"a workspace folder could not be opened ({exc.strerror})"
        raise ToolError("io_error", message) from None
    request = ApprovalRequest(
        tool=tool,
        path=path,
        identity=opened.identity,
        conversation_id=ctx.conversation_id,
        workspace_key=workspace.key,
        workspace_name=workspace.name,
        folder=folder,
        start_line=lines[0] if lines else None,
        end_line=lines[1] if lines else None,
        size=None if folder else opened.stat.st_size,
        names=opened.target.root.names,
        root_named=workspace.multi,
        call_id=ctx.call_id,
        pattern=pattern,
        folders=folders,
        workspace_identity=roots,
    )
    outcome = await ctx.approvals.decide(request, observer=ctx.observer)
    named = escape_line(path)  # a name from the disk, on its way to the model
    if outcome.decision is Decision.TIMEOUT:
        raise ToolError("approval_timeout", f"no answer to the request to read {named}; not read")
    if not outcome.decision.allowed:
        raise ToolError("denied_by_user", f"the user denied access to {named}")
    return outcome.by
