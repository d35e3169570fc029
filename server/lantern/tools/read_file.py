"""read_file: numbered lines of one file, through every check of the read path."""

from __future__ import annotations

import asyncio
import os

from lantern.tools.base import Shown, ToolContext, ToolResult, approve
from lantern.tools.schemas import ReadFileArgs
from lantern.workspace.errors import ToolError
from lantern.workspace.text import MAX_FILE_BYTES, MAX_LINES, render, window

DESCRIPTION = (
    "Read lines of a text file in the workspace. Returns numbered lines (`12│text`) with the "
    f"file's total line count; at most {MAX_LINES} lines and 32 KiB per call, and a [partial …] "
    "note says which offset continues. Prefer search to find the lines you need first."
)


def _read_capped(fd: int, cap: int) -> bytes:
    """Read at most cap+1 bytes, whatever st_size says."""
    chunks: list[bytes] = []
    left = cap + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


async def read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    (target,) = ctx.workspace.targets(args.path, file=True)
    opened = ctx.workspace.open_checked(target, "file")
    too_large = ToolError(
        "too_large",
        f"{target.shown} is larger than {MAX_FILE_BYTES // (1 << 20)} MiB; "
        "use search to find the lines you need",
    )
    try:
        if opened.stat.st_size > MAX_FILE_BYTES:
            raise too_large
        last = args.offset + min(args.limit, MAX_LINES) - 1
        decision = await approve(ctx, "read_file", opened, lines=(args.offset, last))
        data = await asyncio.to_thread(_read_capped, opened.fd, MAX_FILE_BYTES)
    finally:
        opened.close()
    if len(data) > MAX_FILE_BYTES:
        raise too_large
    win = window(data, target.shown, args.offset, args.limit)
    shown = [Shown(target.shown, win.first, win.last)] if win.lines else []
    return ToolResult(
        render(win, target.shown),
        path=target.shown,
        decision=decision,
        shown=shown,
        redactions=sum(win.redactions.values()),
    )
