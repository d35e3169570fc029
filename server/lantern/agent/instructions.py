"""Project instructions: each workspace root's AGENTS.md (or a cousin), through the read path.

With the first question of a conversation (and while `projectInstructions` is on),
each root's first of `AGENTS.md`, `CLAUDE.md`, `.github/copilot-instructions.md`
and `.cursorrules` that the read path lets Lantern open (checks 2–5: a link, a
FIFO, an ignored, denied or secret-named file is skipped) is offered like a read:
the user approves it (tool `project_instructions`, so the prompt says why; the
answers and what they remember are read_file's), it is read, decoded, redacted,
escaped and numbered as read_file's lines are (`12│…`, so no line can imitate the
frame: `instruction_frame.py`), cut to `CAP_BYTES` on a line boundary, and audited.
What was approved is kept in the conversation as framed, untrusted text and put
before the first user message of every request (`with_instructions`), so history
compaction never drops it. It is only text: nothing in it is followed (`@path` lines
load nothing), and no setting, approval or check reads it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from lantern.agent.conversation import Conversation
from lantern.agent.instruction_frame import frame
from lantern.approvals.approver import INSTRUCTIONS, Approver
from lantern.audit import AuditLog
from lantern.errors import ToolError
from lantern.tools.base import SeenSpan, ToolContext, approve
from lantern.workspace.lines import MAX_LINES, read_capped
from lantern.workspace.roots import Opened, Root, Target, Workspace
from lantern.workspace.text import MAX_FILE_BYTES, Window, window

#: In order of preference: the first one the read path opens is the root's.
NAMES: tuple[tuple[str, ...], ...] = (
    ("AGENTS.md",),
    ("CLAUDE.md",),
    (".github", "copilot-instructions.md"),
    (".cursorrules",),
)


@dataclass(frozen=True)
class Loaded:
    """One root's instructions as the model gets them, and the lines they showed."""

    path: str
    text: str
    seen: SeenSpan | None


def framed(rel: str, win: Window) -> tuple[str, int]:
    """The text the model gets for one file's window, and how many lines it shows."""
    return frame(rel, win.lines, win.total, sum(win.redactions.values()))


def _first_open(workspace: Workspace, root: Root) -> Opened | None:
    """The root's first instruction file the read path opens (checks 2–5), or None.
    Blocking: up to four opens, so it runs in a worker thread."""
    for parts in NAMES:
        target = Target(root, parts, workspace.relative(root, parts))
        try:
            return workspace.open_checked(target, "file")
        except (ToolError, OSError):
            continue
    return None


def _close_orphan(job: asyncio.Future[Opened | None]) -> None:
    if not job.cancelled() and job.exception() is None and (opened := job.result()) is not None:
        opened.close()


async def _opened(workspace: Workspace, root: Root) -> Opened | None:
    """`_first_open` off the event loop (a slow disk stalls no other request); a handle
    opened after the caller was cancelled is closed."""
    job = asyncio.ensure_future(asyncio.to_thread(_first_open, workspace, root))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        job.add_done_callback(_close_orphan)
        raise


async def _read(ctx: ToolContext, opened: Opened) -> tuple[Window, str]:
    """Approve (check 6), read and render (7–10); closes the handle. Returns the window
    and the audit decision (`auto` or `user`)."""
    rel = opened.target.rel
    try:
        if opened.stat.st_size > MAX_FILE_BYTES:
            raise ToolError("too_large", f"{rel} is larger than the read limit")
        decision = await approve(ctx, INSTRUCTIONS, opened)
        data = await asyncio.to_thread(read_capped, opened.fd, MAX_FILE_BYTES, opened.stat.st_size)
    finally:
        opened.close()
    if len(data) > MAX_FILE_BYTES:
        raise ToolError("too_large", f"{rel} is larger than the read limit")
    return await asyncio.to_thread(window, data, rel, 1, MAX_LINES), decision


async def _load(ctx: ToolContext, opened: Opened, audit: AuditLog | None) -> Loaded | None:
    started = time.perf_counter()
    rel = opened.target.rel
    loaded: Loaded | None = None
    try:
        win, decision = await _read(ctx, opened)
    except ToolError as exc:
        denied = exc.code in ("denied_by_user", "approval_timeout")
        decision, content = ("denied" if denied else f"refused:{exc.code}"), exc.message
    except OSError as exc:
        decision, content = "refused:io_error", exc.strerror or "I/O error"
    else:
        content = ""
        if win.lines:
            content, shown = framed(rel, win)
            seen = SeenSpan(rel, 1, shown) if shown else None
            loaded = Loaded(rel, content, seen)
    if audit is not None:
        audit.tool_call(
            conversation=ctx.conversation_id,
            tool=INSTRUCTIONS,
            path=rel,
            decision=decision,
            content=content,
            ms=(time.perf_counter() - started) * 1000,
        )
    return loaded


async def offer(
    workspace: Workspace, approvals: Approver, conversation_id: str, audit: AuditLog | None
) -> list[Loaded]:
    """Each root's instructions that the user let through, in the roots' order."""
    ctx = ToolContext(workspace, approvals, conversation_id=conversation_id)
    loaded = []
    for root in workspace.roots:
        opened = await _opened(workspace, root)
        item = await _load(ctx, opened, audit) if opened is not None else None
        if item is not None:
            loaded.append(item)
    return loaded


async def offer_once(
    conv: Conversation, workspace: Workspace, approvals: Approver, audit: AuditLog | None
) -> None:
    """The project instructions, offered once per conversation (docs/agent-loop.md)."""
    if conv.instructions is not None:
        return
    loaded = await offer(workspace, approvals, conv.id, audit)
    conv.instructions = [item.text for item in loaded]
    conv.seen.add_all(item.seen for item in loaded if item.seen is not None)


def with_instructions(messages: list[dict[str, Any]], texts: list[str]) -> list[dict[str, Any]]:
    """`messages` (the history after the system prompt) with `texts` put before the
    content of the first user message: copied, never changed in place. A history that
    starts otherwise gets a user message of its own in front."""
    if not texts:
        return messages
    block = "\n\n".join(texts)
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "user" and isinstance(first["content"], str):
        return [{**first, "content": f"{block}\n\n{first['content']}"}, *messages[1:]]
    return [{"role": "user", "content": block}, *messages]
