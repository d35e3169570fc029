"""list_files: the files under a folder, with sizes, as ripgrep's walk sees them."""

from __future__ import annotations

from lantern.approvals import human_size
from lantern.tools import ripgrep
from lantern.tools.base import ToolContext, ToolResult, approve
from lantern.tools.results import ResultFilter
from lantern.tools.schemas import LIST_MAX_RESULTS, ListFilesArgs
from lantern.workspace.roots import Opened

DESCRIPTION = (
    "List files under a workspace folder (default: the whole workspace), with sizes. "
    "Honours .gitignore and .lanternignore and leaves out secrets. Use `glob` "
    "(e.g. '*.py', 'src/**/*.ts') to narrow it; results are capped and say so."
)


async def _list(opened: Opened, ctx: ToolContext, glob: str | None) -> list[str]:
    args = ["--files", *ripgrep.COMMON_FLAGS, *ripgrep.policy_flags(ctx.workspace, glob)]
    proc = await ripgrep.start(args, opened)
    stdout, stderr = await proc.communicate()
    # With --no-messages an unreadable folder makes rg exit 2 silently: keep what it listed.
    if proc.returncode not in (0, 1) and stderr.strip():
        raise ripgrep.usage_error(stderr, "glob", [r.path for r in ctx.workspace.roots])
    return sorted(ripgrep.relative(p) for p in stdout.decode("utf-8", "replace").splitlines())


async def list_files(args: ListFilesArgs, ctx: ToolContext) -> ToolResult:
    targets = ctx.workspace.targets(args.path, file=False)
    opened = [ctx.workspace.open_checked(t, "dir") for t in targets]
    try:
        where = "." if len(targets) > 1 else targets[0].shown
        decision = await approve(ctx, "list_files", opened[0], folder=True, shown=where)
        limit = min(args.max_results, LIST_MAX_RESULTS)
        rows: list[str] = []
        total = 0
        for handle in opened:
            found = await _list(handle, ctx, args.glob)
            total += len(found)
            check = ResultFilter(
                ctx.workspace, handle.target, handle.fd, gitignore_inside=bool(args.glob)
            )
            try:
                for rel in found:
                    if len(rows) >= limit:
                        break
                    st = check.allowed(rel)
                    if st is None:
                        total -= 1
                        continue
                    shown = ctx.workspace.shown(handle.target.root, (*handle.target.parts, rel))
                    rows.append(f"{shown} ({human_size(st.st_size)})")
            finally:
                check.close()
    finally:
        for handle in opened:
            handle.close()
    glob_note = f" matching {args.glob!r}" if args.glob else ""
    if not rows:
        return ToolResult(f"[no files{glob_note} under {where}]", path=where, decision=decision)
    head = f"[{total:,} file(s){glob_note} under {where}]"
    lines = [head, *rows]
    if total > len(rows):
        lines.append(
            f"[{total - len(rows):,} more file(s) not shown; narrow with path= or glob=, "
            f"or raise max_results (up to {LIST_MAX_RESULTS})]"
        )
    return ToolResult("\n".join(lines), path=where, decision=decision)
