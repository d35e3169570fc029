"""A lookup of a name under a path, as `find_symbol` and `find_references` both run it."""

from __future__ import annotations

from lantern.tools.base import ToolContext, approve
from lantern.tools.navigation.files import Visit, file_language, walk_all, walk_notes
from lantern.tools.navigation.symbols import last_segment
from lantern.tools.ripgrep.result_filter import open_targets


async def look_up(
    ctx: ToolContext, tool: str, path: str, name: str, visit: Visit, ranked: bool = False
) -> tuple[str, str, list[str]]:
    """Open `path`'s targets, refuse a file in an unknown language (or over the cap) before
    anyone is asked, ask for `tool` on the folder (`name` shown), then walk every file
    ripgrep names for the name's last segment with `visit` (`ranked`: only the files
    likeliest to define it, within a budget: `files.walk`).

    Returns where (the path as shown: `.` for every root), the audit decision, and the
    notes to put after the result."""
    targets = ctx.workspace.targets(path, file=False)
    opened, notes = await open_targets(ctx.workspace, targets, "any")
    try:
        where = "." if len(targets) > 1 else targets[0].rel
        for handle in opened:
            file_language(handle)  # a file: known language, within the cap, or refused now
        decision = await approve(ctx, tool, opened[0], folder=True, path=where, pattern=name)
        walked = await walk_all(ctx, opened, visit, last_segment(name), ranked)
    finally:
        for handle in opened:
            handle.close()
    return where, decision, [*walk_notes(walked), *notes]
