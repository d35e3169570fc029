"""read_file: numbered lines of one file, through every check of the read path."""

from __future__ import annotations

import asyncio
import os

from lantern.tools.base import Shown, ToolContext, ToolResult, approve
from lantern.tools.schemas import ReadFileArgs
from lantern.workspace.errors import ToolError
from lantern.workspace.roots import Opened, Target, Workspace
from lantern.workspace.text import MAX_FILE_BYTES, MAX_LINES, render, window

DESCRIPTION = (
    "Read lines of a text file in the workspace. Returns numbered lines (`12│text`) with the "
    f"file's total line count; at most {MAX_LINES} lines and 32 KiB per call, and a [partial …] "
    "note says which offset continues. Prefer search to find the lines you need first."
)


def _read_capped(fd: int, cap: int, size_hint: int) -> bytes:
    """Read at most cap+1 bytes, whatever st_size says (it only sizes the first read)."""
    chunks: list[bytes] = []
    left = cap + 1
    want = min(left, size_hint + 1)
    while left > 0:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        want = min(left, 1 << 16)  # the file grew, or the hint was wrong
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(shown: str) -> ToolError:
    return ToolError(
        "too_large",
        f"{shown} is larger than {MAX_FILE_BYTES // (1 << 20)} MiB; "
        "use search to find the lines you need",
    )


async def _read_open(opened: Opened, offset: int, limit: int, decision: str | None) -> ToolResult:
    """Checks 7–10 on a handle that passed checks 2–6; closes the handle."""
    shown = opened.target.shown
    try:
        data = await asyncio.to_thread(_read_capped, opened.fd, MAX_FILE_BYTES, opened.stat.st_size)
    finally:
        opened.close()
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(shown)
    win = window(data, shown, offset, limit)
    return ToolResult(
        render(win, shown),
        path=shown,
        decision=decision,
        shown=[Shown(shown, win.first, win.last)] if win.lines else [],
        redactions=sum(win.redactions.values()),
    )


async def read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    (target,) = ctx.workspace.targets(args.path, file=True)
    opened = ctx.workspace.open_checked(target, "file")
    try:
        if opened.stat.st_size > MAX_FILE_BYTES:
            raise _too_large(target.shown)
        last = args.offset + min(args.limit, MAX_LINES) - 1
        decision = await approve(ctx, "read_file", opened, lines=(args.offset, last))
    except BaseException:
        opened.close()
        raise
    return await _read_open(opened, args.offset, args.limit, decision)


async def read_selection(workspace: Workspace, target: Target, start: int, end: int) -> ToolResult:
    """The user's own selection: every check of the read path except the prompt."""
    opened = workspace.open_checked(target, "file")
    if opened.stat.st_size > MAX_FILE_BYTES:
        opened.close()
        raise _too_large(target.shown)
    return await _read_open(opened, start, end - start + 1, "user")
