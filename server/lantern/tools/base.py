"""What every tool shares: its context, its result, and the approval step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from lantern.approvals import ApprovalRequest, Decision, Outcome
from lantern.workspace.errors import ToolError
from lantern.workspace.roots import Opened, Workspace


class Approvals(Protocol):
    """The gate a tool goes through: mode and globs, remembered answers, then a prompt."""

    async def decide(self, request: ApprovalRequest) -> Outcome: ...


@dataclass(frozen=True)
class Shown:
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
    decision: str | None = None  # auto | user | denied | refused:<code>
    shown: list[Shown] = field(default_factory=list)
    redactions: int = 0

    @property
    def bytes(self) -> int:
        return len(self.content.encode("utf-8"))

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
    workspace: Workspace
    approvals: Approvals
    conversation_id: str = "default"


async def approve(
    ctx: ToolContext,
    tool: str,
    opened: Opened,
    *,
    folder: bool = False,
    lines: tuple[int, int] | None = None,
    shown: str | None = None,
) -> str:
    """Check 6; returns the audit decision (`auto` or `user`) or raises a refusal."""
    path = shown or opened.target.shown
    request = ApprovalRequest(
        tool=tool,
        path=path,
        identity=opened.identity,
        conversation_id=ctx.conversation_id,
        workspace_key=ctx.workspace.key,
        workspace_name=ctx.workspace.name,
        folder=folder,
        start_line=lines[0] if lines else None,
        end_line=lines[1] if lines else None,
        size=None if folder else opened.stat.st_size,
    )
    outcome = await ctx.approvals.decide(request)
    if outcome.decision is Decision.TIMEOUT:
        raise ToolError("approval_timeout", f"no answer to the request to read {path}; not read")
    if not outcome.decision.allowed:
        raise ToolError("denied_by_user", f"the user denied access to {path}")
    return outcome.by
