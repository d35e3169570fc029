"""find_references: where a name is used in code, as `path:LINE: text`.

Candidates are the files where the name's last segment stands as a whole word (ripgrep,
`navigation/files.py`); in those, the code engine finds the identifiers of that name,
never a word inside a comment or a string. Each line with a use is shown once, redacted
and cut like a search hit; a line that defines the name ends with ` [definition]`.
For `Class.member` the uses are those of `member`: without types, which object a use
belongs to is not known.
A use whose line redaction changed so that the name is no longer plainly there is not
shown (`navigation/shown.py`).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from lantern.code.cache import ParseCache
from lantern.tools.arguments import ToolArgs
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult
from lantern.tools.find_symbol import summarize
from lantern.tools.navigation.caches import cache_for
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.lookup import look_up
from lantern.tools.navigation.shown import ShownUse, show_uses
from lantern.tools.navigation.symbols import MAX_NAME_CHARS, last_segment, symbol_name
from lantern.tools.ripgrep.result_filter import display

DESCRIPTION = (
    "Find the uses of a symbol in code (callers, reads, imports), never in comments or "
    "strings. `name` is an identifier or `Class.member`. Returns `path:LINE: text`, one "
    "line per use; a line that defines the name ends with ` [definition]`."
)
MAX_USES = 200
DEFINITION_MARK = " [definition]"


class FindReferencesArgs(ToolArgs):
    name: str = Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="Identifier or Class.member, e.g. 'parse_config' or 'Session.close'.",
    )
    path: str = Field(".", description="Workspace-relative folder (or file) to look in.")

    _check_name = field_validator("name")(symbol_name)


class _Found:
    def __init__(self, name: str, cache: ParseCache) -> None:
        self.name = name
        self.cache = cache
        self.uses: list[ShownUse] = []
        self.more = False

    def visit(self, file: Loaded) -> None:
        room = MAX_USES + 1 - len(self.uses)  # one more than shown: to know there is more
        if room <= 0:
            self.more = True
            return
        found = self.cache.uses(file.key, file.data, file.language, last_segment(self.name))
        lines: dict[int, bool] = {}
        for use in found:
            lines[use.line] = lines.get(use.line, False) or use.is_definition
        if len(lines) > room:  # only the first lines of a file full of uses are shown
            self.more = True
            lines = {n: lines[n] for n in sorted(lines)[:room]}
        if lines:
            self.uses += show_uses(file.path, file.data(), lines, self.name)


def _render(name: str, where: str, uses: list[ShownUse], more: bool) -> str:
    lines = [f"[untrusted uses of {name!r} under {where}]"]
    for use in uses[:MAX_USES]:
        mark = DEFINITION_MARK if use.definition else ""
        lines.append(f"{display(use.path)}:{use.line}: {use.text}{mark}")
    if more or len(uses) > MAX_USES:
        lines.append(f"[more uses not shown (at most {MAX_USES}); narrow with path=]")
    return "\n".join(lines)


async def find_references(args: FindReferencesArgs, ctx: ToolContext) -> ToolResult:
    found = _Found(args.name, cache_for(ctx.code_cache))
    where, decision, extra = await look_up(
        ctx, "find_references", args.path, args.name, found.visit
    )
    if not found.uses:
        head = f"[no uses of {args.name!r} under {where}]"
        return ToolResult("\n".join([head, *extra]), path=where, decision=decision)
    uses = sorted(found.uses, key=lambda u: (u.path, u.line))
    kept = uses[:MAX_USES]
    redactions = sum(use.redactions for use in kept)
    if redactions:
        extra.insert(0, f"[redacted {redactions} secret(s)]")
    content = _render(args.name, where, uses, found.more)
    return ToolResult(
        "\n".join([content, *extra]),
        path=where,
        decision=decision,
        seen=[SeenSpan(use.path, use.line, use.line) for use in kept],
        redactions=redactions,
    )


NARROW = "pass `path` to look in one folder or file"
TOOL = Tool("find_references", DESCRIPTION, FindReferencesArgs, find_references, summarize, NARROW)
