"""search: regex matches as `path:line: text`, through ripgrep, under the read-path rules."""

from __future__ import annotations

import stat

from lantern.tools import ripgrep
from lantern.tools.base import Shown, ToolContext, ToolResult, approve
from lantern.tools.results import ResultFilter
from lantern.tools.schemas import SEARCH_MAX_RESULTS, SearchArgs
from lantern.workspace.redact import redact
from lantern.workspace.roots import Opened
from lantern.workspace.text import MAX_FILE_BYTES

DESCRIPTION = (
    "Search file contents in the workspace with a regular expression (ripgrep syntax). "
    "Returns matching lines as `path:line: text`. Same ignore rules as list_files. "
    "Narrow with `path` (a folder or a file) and `glob`."
)
MAX_MATCH_CHARS = 300
_RG_COLUMNS = "600"


def _flags(args: SearchArgs, ctx: ToolContext) -> list[str]:
    return [
        *ripgrep.COMMON_FLAGS,
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--null",
        f"--max-columns={_RG_COLUMNS}",
        "--max-columns-preview",
        f"--max-filesize={MAX_FILE_BYTES}",
        "--case-sensitive" if args.case_sensitive else "--ignore-case",
        *ripgrep.policy_flags(ctx.workspace, args.glob),
        "--regexp",
        args.pattern,
    ]


async def _matches(
    handle: Opened, args: SearchArgs, ctx: ToolContext, want: int
) -> tuple[list[tuple[str, int, str]], bool]:
    """Up to `want` allowed matches under one folder handle, and whether more exist."""
    is_dir = stat.S_ISDIR(handle.stat.st_mode)
    # A folder is searched from its handle; a single file is fed to rg on stdin.
    proc = await ripgrep.start(
        [*_flags(args, ctx), "." if is_dir else "-"], handle, stdin=not is_dir
    )
    assert proc.stdout is not None and proc.stderr is not None
    found: list[tuple[str, int, str]] = []
    verdicts: dict[str, bool] = {}
    check = (
        ResultFilter(ctx.workspace, handle.target, handle.fd, gitignore_inside=bool(args.glob))
        if is_dir
        else None
    )
    more = False
    try:
        async for raw in proc.stdout:
            name, _, rest = raw.rstrip(b"\n").partition(b"\0")
            number, _, text = rest.partition(b":")
            rel = ripgrep.relative(name.decode("utf-8", "replace"))
            if check is not None:
                if rel not in verdicts:
                    verdicts[rel] = check.allowed(rel) is not None
                if not verdicts[rel]:
                    continue
            if len(found) >= want:
                more = True
                break
            parts = (*handle.target.parts, rel) if check is not None else handle.target.parts
            shown = ctx.workspace.shown(handle.target.root, parts)
            found.append((shown, int(number or 0), text.decode("utf-8", "replace")))
        if not more:
            await proc.wait()
            stderr = await proc.stderr.read()
            # Exit 2 without a message is an unreadable folder (--no-messages): keep the matches.
            if proc.returncode not in (0, 1) and stderr.strip():
                raise ripgrep.usage_error(stderr, "pattern", [r.path for r in ctx.workspace.roots])
    finally:
        if check is not None:
            check.close()
        await ripgrep.stop(proc)
    return found, more


def _render(found: list[tuple[str, int, str]], more: bool, args: SearchArgs) -> tuple[str, int]:
    redacted = redact("\n".join(text for _, _, text in found))
    lines = [f"[untrusted search results for {args.pattern!r}]"]
    for (path, number, _), text in zip(found, redacted.text.split("\n"), strict=True):
        if len(text) > MAX_MATCH_CHARS:
            text = text[:MAX_MATCH_CHARS] + "…"
        lines.append(f"{path}:{number}: {text}")
    if more:
        lines.append(
            f"[more matches not shown; narrow the pattern, path or glob, "
            f"or raise max_results (up to {SEARCH_MAX_RESULTS})]"
        )
    if redacted.count:
        lines.append(f"[redacted {redacted.count} secret(s)]")
    return "\n".join(lines), redacted.count


async def search(args: SearchArgs, ctx: ToolContext) -> ToolResult:
    targets = ctx.workspace.targets(args.path, file=False)
    opened = [ctx.workspace.open_checked(t, "any") for t in targets]
    try:
        where = "." if len(targets) > 1 else targets[0].shown
        decision = await approve(ctx, "search", opened[0], folder=True, shown=where)
        want = min(args.max_results, SEARCH_MAX_RESULTS)
        found: list[tuple[str, int, str]] = []
        more = False
        for handle in opened:
            part, part_more = await _matches(handle, args, ctx, want - len(found))
            found += part
            more = more or part_more
            if len(found) >= want:
                break
    finally:
        for handle in opened:
            handle.close()
    if not found:
        return ToolResult(
            f"[no matches for {args.pattern!r} under {where}]", path=where, decision=decision
        )
    found.sort(key=lambda m: (m[0], m[1]))
    content, redactions = _render(found, more, args)
    shown = [Shown(path, number, number) for path, number, _ in found]
    return ToolResult(content, path=where, decision=decision, shown=shown, redactions=redactions)
