"""read_file: numbered lines of one file, through every check of the read path."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from lantern.errors import ToolError
from lantern.tools.arguments import ToolArgs, shown, whole
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult, approve
from lantern.tools.ripgrep.result_filter import display
from lantern.workspace.lines import MAX_LINES, read_capped
from lantern.workspace.roots import Opened
from lantern.workspace.text import MAX_FILE_BYTES, Window, render, window

DESCRIPTION = (
    "Read lines of a text file in the workspace. Returns numbered lines (`12│text`) with the "
    f"file's total line count; at most {MAX_LINES} lines and 32 KiB per call, and a [partial …] "
    "note says which offset continues. Prefer search to find the lines you need first."
)


class ReadFileArgs(ToolArgs):
    path: str = Field(description="Workspace-relative path of the file, e.g. src/app.py.")
    offset: int = Field(1, ge=1, description="1-based number of the first line to read.")
    limit: int = Field(
        MAX_LINES,
        ge=1,
        description=f"Number of lines to read (at most {MAX_LINES} and 32 KiB are returned).",
    )


def summarize(arguments: Mapping[str, Any]) -> str:
    """`src/app.py · lines 1–400`: the window the tool shows at most."""
    first = whole(arguments.get("offset"), 1)
    count = min(whole(arguments.get("limit"), MAX_LINES), MAX_LINES)
    return f"{shown(arguments.get('path', '.'))} · lines {first}–{first + count - 1}"


def _too_large(rel: str) -> ToolError:
    return ToolError(
        "too_large",
        f"{rel} is larger than {MAX_FILE_BYTES // (1 << 20)} MiB; "
        "use search to find the lines you need",
    )


def _shown(data: bytes, rel: str, offset: int, limit: int) -> tuple[Window, str]:
    win = window(data, rel, offset, limit)
    return win, render(win, display(rel))


async def _read_open(opened: Opened, offset: int, limit: int, decision: str | None) -> ToolResult:
    """Checks 7–10 on a handle that passed checks 2–6; closes the handle."""
    rel = opened.target.rel
    try:
        # On a worker thread: a read on a network or cloud-backed file system can block.
        data = await asyncio.to_thread(read_capped, opened.fd, MAX_FILE_BYTES, opened.stat.st_size)
    finally:
        opened.close()
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(rel)
    # Decoding and redaction on a worker thread too: a large window of long or
    # secret-dense lines takes a while, and the server answers other requests meanwhile.
    win, text = await asyncio.to_thread(_shown, data, rel, offset, limit)
    return ToolResult(
        text,
        path=rel,
        decision=decision,
        seen=[SeenSpan(rel, win.first, win.last)] if win.lines else [],
        redactions=sum(win.redactions.values()),
    )


async def read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    (target,) = ctx.workspace.targets(args.path, file=True)
    opened = await ctx.workspace.open_checked_async(target, "file")
    try:
        if opened.stat.st_size > MAX_FILE_BYTES:
            raise _too_large(target.rel)
        last = args.offset + min(args.limit, MAX_LINES) - 1
        decision = await approve(ctx, "read_file", opened, lines=(args.offset, last))
    except BaseException:
        opened.close()
        raise
    return await _read_open(opened, args.offset, args.limit, decision)


NARROW = "read fewer lines at a time with `offset` and `limit`"
TOOL = Tool("read_file", DESCRIPTION, ReadFileArgs, read_file, summarize, NARROW)
