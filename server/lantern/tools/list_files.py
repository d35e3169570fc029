"""list_files: the files under a folder, with sizes, as ripgrep's walk sees them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from itertools import groupby
from operator import itemgetter, methodcaller
from typing import Any

from pydantic import Field, field_validator

from lantern.approvals.approver import human_size
from lantern.errors import ToolError
from lantern.tools.arguments import ToolArgs, in_glob, no_nul, shown
from lantern.tools.base import Tool, ToolContext, ToolResult, approve
from lantern.tools.ripgrep import process as ripgrep
from lantern.tools.ripgrep.result_filter import (
    FolderRules,
    ResultFilter,
    display,
    open_targets,
    prepare,
    split_rel,
)
from lantern.workspace.ignore.files import NeedsWorker, inline_now
from lantern.workspace.roots import Opened

_INLINE_DEPTH = 32  # deeper names are checked in a worker thread
_SPLIT = methodcaller("rpartition", "/")  # a name's folder, "/", base name
DESCRIPTION = (
    "List files under a workspace folder (default: the whole workspace), with sizes. "
    "Honours .gitignore and .lanternignore and leaves out secrets. Use `glob` "
    "(e.g. '*.py', 'src/**/*.ts') to narrow it; results are capped and say so."
)
LIST_DEFAULT_RESULTS = 200
LIST_MAX_RESULTS = 2000


class ListFilesArgs(ToolArgs):
    path: str = Field(".", description="Workspace-relative folder to list; '.' is the root.")
    glob: str | None = Field(
        None,
        max_length=512,
        description="Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'.",
    )
    max_results: int = Field(
        LIST_DEFAULT_RESULTS,
        ge=1,
        description=f"At most this many files (up to {LIST_MAX_RESULTS}).",
    )

    _check_glob = field_validator("glob")(no_nul)


def summarize(arguments: Mapping[str, Any]) -> str:
    """`src (*.py)`: the folder listed and the glob that narrows it."""
    return f"{shown(arguments.get('path', '.'))}{in_glob(arguments)}"


class _Names:
    """Names from rg's NUL-separated output, checked as they arrive.

    Names are grouped by folder: a folder is checked once (its names, its ignore files),
    then each file only by its own name (`ResultFilter.allowed_names`). On the event loop
    (`inline_only`) a deep name raises `NeedsWorker` and stays queued; `feed` in a worker
    thread goes on from it.
    """

    def __init__(self, check: ResultFilter) -> None:
        self.check = check
        self.allowed: list[str] = []  # names as rg wrote them
        self._rest = b""
        self._queue: list[str] = []
        self._next = 0
        self._folders: dict[str, tuple[tuple[str, ...], FolderRules]] = {}

    def feed(self, chunk: bytes, final: bool) -> None:
        data = self._rest + chunk
        cut = len(data) if final else data.rfind(b"\0") + 1
        self._rest = data[cut:]
        if cut:  # one decode for the batch: NUL never occurs inside a name
            self._queue += os.fsdecode(data[:cut]).split("\0")
        queue, check, folders, allowed = self._queue, self.check, self._folders, self.allowed
        i = self._next
        try:  # one run of names in the same folder at a time
            for where, run in groupby(map(_SPLIT, queue[i:]), key=itemgetter(0)):
                known = folders.get(where)
                if known is None:
                    folder = split_rel(where)
                    if len(folder) >= _INLINE_DEPTH and inline_now():
                        raise NeedsWorker
                    known = folders[where] = (folder, check.folder_rules(folder))
                elif len(known[0]) >= _INLINE_DEPTH and inline_now():
                    raise NeedsWorker
                bases = [base for _, _, base in run]
                if "" in bases or "." in bases:  # never from rg: checked as whole paths
                    at = [k for k, base in enumerate(bases) if base not in ("", ".")]
                    found = [
                        name
                        for name, base in zip(queue[i : i + len(bases)], bases, strict=True)
                        if base in ("", ".") and name and check.name_allowed(split_rel(name))
                    ]  # all of the run, or (NeedsWorker) none of it
                    kept = check.allowed_names(known[1], [bases[k] for k in at])
                    allowed += found
                    allowed += [queue[i + at[k]] for k in kept]
                else:
                    allowed += [queue[i + k] for k in check.allowed_names(known[1], bases)]
                i += len(bases)
        finally:
            self._next = i
        del queue[:i]
        self._next = 0


async def _list(
    opened: Opened, ctx: ToolContext, glob: str | None, fed: list[str], names: _Names
) -> bool:
    """Run rg --files (NUL-separated: a name may hold a newline) and check what it lists
    while it walks, within rg's time limit; whether every name was shallow enough to be
    checked on the event loop."""
    args = [
        "--files",
        "--null",
        f"--threads={ripgrep.walk_threads()}",
        *ripgrep.COMMON_FLAGS,
        *ripgrep.policy_flags(opened.target.root, glob),
    ]
    proc = await ripgrep.start([*args, *fed], opened)
    try:
        async with asyncio.timeout(ripgrep.TIMEOUT_S):
            inline = await ripgrep.pump(proc, names.feed)
            await ripgrep.check_exit(proc, "glob", ctx.workspace)
    except TimeoutError:
        raise ToolError(
            "io_error",
            f"listing took longer than {ripgrep.TIMEOUT_S:.0f} s; narrow it with path= or glob=",
        ) from None
    finally:
        await ripgrep.stop(proc)
    return inline


def _rows(
    check: ResultFilter, allowed: list[str], ctx: ToolContext, room: int
) -> tuple[list[str], int]:
    """Rows for the first `room` allowed files by name (each looked up through the jail),
    and the total."""
    rows: list[str] = []
    total = len(allowed)
    allowed.sort()
    for name in allowed:
        if len(rows) >= room:
            break
        rel = split_rel(name)
        st = check.stat_file(rel)
        if st is None:
            total -= 1
            continue
        named = ctx.workspace.relative(check.target.root, (*check.target.parts, *rel))
        rows.append(f"{display(named)} ({human_size(st.st_size)})")
    return rows, total


async def list_files(args: ListFilesArgs, ctx: ToolContext) -> ToolResult:
    targets = ctx.workspace.targets(args.path, file=False)
    opened, notes = await open_targets(ctx.workspace, targets, "dir")
    try:
        where = "." if len(targets) > 1 else targets[0].rel
        decision = await approve(ctx, "list_files", opened[0], folder=True, path=where)
        limit = min(args.max_results, LIST_MAX_RESULTS)
        rows: list[str] = []
        total = 0
        for handle in opened:
            check, fed = await prepare(ctx.workspace, handle.target, feed_rg=True)
            try:
                names = _Names(check)
                room = limit - len(rows)
                if await _list(handle, ctx, args.glob, fed, names):
                    part, count = _rows(check, names.allowed, ctx, room)
                else:
                    part, count = await asyncio.to_thread(_rows, check, names.allowed, ctx, room)
            finally:
                check.close()
            rows += part
            total += count
    finally:
        for handle in opened:
            handle.close()
    glob_note = f" matching {args.glob!r}" if args.glob else ""
    if not rows:
        text = "\n".join([f"[no files{glob_note} under {display(where)}]", *notes])
        return ToolResult(text, path=where, decision=decision)
    head = f"[{total:,} file(s){glob_note} under {display(where)}]"
    lines = [head, *rows]
    if total > len(rows):
        lines.append(
            f"[{total - len(rows):,} more file(s) not shown; narrow with path= or glob=, "
            f"or raise max_results (up to {LIST_MAX_RESULTS})]"
        )
    return ToolResult("\n".join([*lines, *notes]), path=where, decision=decision)


NARROW = "list a sub-folder"
TOOL = Tool("list_files", DESCRIPTION, ListFilesArgs, list_files, summarize, NARROW)
