"""search: regex matches as `path:line: text`, through ripgrep, under the read-path rules.

ripgrep only finds candidates: its `--json` events give the real file name and
the line numbers. Each file with hits is then checked by name, opened again
through the jail and read by Lantern (the same size rule as read_file), the
whole text is redacted, and the hit lines are taken from the redacted text:
a line inside a private-key block shows as redacted even when the block began
far above it, and what is shown is always what the jail let Lantern read.
A match inside a redacted secret is no hit at all (`ripgrep/recheck.py`); the hit
lines redaction changed are searched again in batches, many files at once.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from lantern.errors import ToolError
from lantern.tools.arguments import ToolArgs, in_glob, no_nul, shown
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult, approve
from lantern.tools.ripgrep import process as ripgrep
from lantern.tools.ripgrep.hits import Collector, Hit
from lantern.tools.ripgrep.result_filter import display, open_targets, prepare
from lantern.workspace.roots import Opened, Root
from lantern.workspace.text import MAX_FILE_BYTES

DESCRIPTION = (
    "Search file contents in the workspace with a regular expression (ripgrep syntax). "
    "Returns matching lines as `path:line: text`. Same ignore rules as list_files. "
    "Narrow with `path` (a folder or a file) and `glob`."
)
MAX_MATCH_CHARS = 300
SEARCH_DEFAULT_RESULTS = 50
SEARCH_MAX_RESULTS = 500


class SearchArgs(ToolArgs):
    pattern: str = Field(
        min_length=1, max_length=1000, description="Regular expression (ripgrep syntax)."
    )
    path: str = Field(".", description="Workspace-relative folder or file to search in.")
    glob: str | None = Field(
        None, max_length=512, description="Only files matching this glob, e.g. '*.py'."
    )
    case_sensitive: bool = Field(
        False, description="Match case exactly; by default matching ignores case."
    )
    max_results: int = Field(
        SEARCH_DEFAULT_RESULTS,
        ge=1,
        description=f"At most this many matching lines (up to {SEARCH_MAX_RESULTS}).",
    )

    _check_pattern_glob = field_validator("pattern", "glob")(no_nul)


def summarize(arguments: Mapping[str, Any]) -> str:
    """`/retry/ in src (*.py)`: the pattern, where, and the glob that narrows it."""
    pattern = shown(arguments.get("pattern", ""))
    return f"/{pattern}/ in {shown(arguments.get('path', '.'))}{in_glob(arguments)}"


def _pattern_flags(args: SearchArgs) -> list[str]:
    """The pattern and its case: also what a redacted hit line is searched again with."""
    return [
        "--case-sensitive" if args.case_sensitive else "--ignore-case",
        "--regexp",
        args.pattern,
    ]


def _flags(args: SearchArgs, root: Root) -> list[str]:
    """rg's argv; no `--threads`: rg uses every core (see `ripgrep.walk_threads`)."""
    return [
        *ripgrep.COMMON_FLAGS,
        "--json",
        f"--max-filesize={MAX_FILE_BYTES}",
        *ripgrep.policy_flags(root, args.glob),
        *_pattern_flags(args),
    ]


async def _run(proc: ripgrep.Rg, collector: Collector, ctx: ToolContext) -> None:
    """Feed rg's output to the collector until done or enough (hits are checked while rg
    still runs; small files right on the event loop, see `ripgrep.pump`)."""
    async with asyncio.timeout(ripgrep.TIMEOUT_S):
        await ripgrep.pump(proc, collector.feed, lambda: collector.full)
        if not collector.full:
            await ripgrep.check_exit(proc, "pattern", ctx.workspace)


async def _matches(
    handle: Opened, args: SearchArgs, ctx: ToolContext, want: int
) -> tuple[list[Hit], bool, bool]:
    """Up to `want` shown hits under one handle, whether more exist, and whether rg timed out."""
    is_dir = stat.S_ISDIR(handle.stat.st_mode)
    # A single file needs no result filter: its handle already passed every check.
    check, extra = (
        await prepare(ctx.workspace, handle.target, feed_rg=True) if is_dir else (None, [])
    )
    collector = Collector(ctx.workspace, handle, check, want, _pattern_flags(args))
    timed_out = False
    try:
        # A folder is searched from its handle; a single file is fed to rg on stdin.
        flags = [*_flags(args, handle.target.root), *extra, "." if is_dir else "-"]
        proc = await ripgrep.start(flags, handle, stdin=not is_dir)
        try:
            await _run(proc, collector, ctx)
        except TimeoutError:
            timed_out = True
        finally:
            await ripgrep.stop(proc)
        if collector.waiting:  # the last hit lines with secrets, checked again together
            await asyncio.to_thread(collector.finish)
    finally:
        if check is not None:
            check.close()
    return collector.hits, collector.more, timed_out


def _render(found: list[Hit], more: bool, late: bool, args: SearchArgs) -> tuple[str, int]:
    lines = [f"[untrusted search results for {args.pattern!r}]"]
    redactions = 0
    for hit in found:
        text = hit.text
        if len(text) > MAX_MATCH_CHARS:
            text = text[:MAX_MATCH_CHARS] + "…"
        redactions += hit.redactions
        lines.append(f"{display(hit.path)}:{hit.line}: {text}")
    if more:
        lines.append(
            f"[more matches not shown; narrow the pattern, path or glob, "
            f"or raise max_results (up to {SEARCH_MAX_RESULTS})]"
        )
    if late:
        lines.append(f"[search stopped after {ripgrep.TIMEOUT_S:.0f} s; results are incomplete]")
    if redactions:
        lines.append(f"[redacted {redactions} secret(s)]")
    return "\n".join(lines), redactions


def _too_large(handle: Opened) -> ToolError:
    return ToolError(
        "too_large",
        f"{handle.target.rel} is larger than {MAX_FILE_BYTES // (1 << 20)} MiB; "
        "Lantern does not search files that large",
    )


async def search(args: SearchArgs, ctx: ToolContext) -> ToolResult:
    targets = ctx.workspace.targets(args.path, file=False)
    opened, notes = await open_targets(ctx.workspace, targets, "any")
    try:
        for handle in opened:
            if not stat.S_ISDIR(handle.stat.st_mode) and handle.stat.st_size > MAX_FILE_BYTES:
                raise _too_large(handle)
        where = "." if len(targets) > 1 else targets[0].rel
        decision = await approve(
            ctx, "search", opened[0], folder=True, path=where, pattern=args.pattern
        )
        want = min(args.max_results, SEARCH_MAX_RESULTS)
        found: list[Hit] = []
        more = late = False
        for handle in opened:
            part, part_more, part_late = await _matches(handle, args, ctx, want - len(found))
            found += part
            more, late = more or part_more, late or part_late
            if len(found) >= want:
                break
    finally:
        for handle in opened:
            handle.close()
    if not found:
        note = " (search stopped early)" if late else ""
        text = "\n".join([f"[no matches for {args.pattern!r} under {where}]{note}", *notes])
        return ToolResult(text, path=where, decision=decision)
    found.sort(key=lambda h: (h.path, h.line))
    content, redactions = _render(found, more, late, args)
    content = "\n".join([content, *notes])
    seen = [SeenSpan(h.path, h.line, h.line) for h in found]
    return ToolResult(content, path=where, decision=decision, seen=seen, redactions=redactions)


NARROW = "search a sub-folder (`path`) or some files (`glob`), or a more precise pattern"
TOOL = Tool("search", DESCRIPTION, SearchArgs, search, summarize, NARROW)
