"""find_references: where a name is used in code, as `path:LINE: text`.

Candidates are the files where the name's last segment stands as a whole word (ripgrep,
`navigation/files.py`); in those, the code engine finds the identifiers of that name,
never a word inside a comment or a string: it looks only where the name stands as a
word, and stops one line past what can still be shown; code nested too deep to search
is named in a note. Each line with a use is shown once, redacted and cut like a search
hit; a line that defines the name ends with ` [definition]`.
For `Class.member` the uses are those of `member`: without types, which object a use
belongs to is not known.
A use whose line redaction changed so that the name is no longer plainly there is not
shown (`navigation/shown.py`).

When the editor offers its language servers (`ToolContext.navigator`), they are asked
for the references of the definition the engine found (`navigation/served.py`), and
their answer is shown instead, each location through the read path first
(`navigation/located.py`); the header says which answered. No answer, an empty one or
none in time: the engine's uses, and the header says why.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from lantern.code.cache import ParseCache
from lantern.code.definitions import deep_words
from lantern.tools.arguments import ToolArgs
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult
from lantern.tools.find_symbol import summarize
from lantern.tools.navigation.caches import cache_for
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.located import locate
from lantern.tools.navigation.lookup import look_up
from lantern.tools.navigation.served import Anchor, anchors_in, ask
from lantern.tools.navigation.shown import ShownUse, show_uses
from lantern.tools.navigation.symbols import MAX_NAME_CHARS, last_segment, symbol_name
from lantern.tools.navigation.unsearched import not_searched
from lantern.tools.navigator import NavAnswer
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
    def __init__(self, name: str, cache: ParseCache, anchored: bool) -> None:
        self.name = name
        self.cache = cache
        self.anchored = anchored  # find the definitions to ask a language server from
        self.anchors: list[Anchor] = []
        self.uses: list[ShownUse] = []
        self.more = False
        self.unsearched: list[tuple[str, str]] = []  # (path, what): code too deep to search

    def visit(self, file: Loaded) -> None:
        if self.anchored:
            self.anchors += anchors_in(file, self.name, self.cache)
        room = MAX_USES + 1 - len(self.uses)  # one more than shown: to know there is more
        if room <= 0:
            self.more = True
            return
        # One line more than there is room for: to know there are more.
        name = last_segment(self.name)
        found = self.cache.uses_only(file.key, file.data, file.language, name, room + 1)
        if found.unsearched:
            self.unsearched.append((file.path, deep_words(found.unsearched)))
        lines: dict[int, bool] = {}
        for use in found.uses:
            lines[use.line] = lines.get(use.line, False) or use.is_definition
        if len(lines) > room:  # only the first lines of a file full of uses are shown
            self.more = True
            lines = {n: lines[n] for n in sorted(lines)[:room]}
        if lines:
            self.uses += show_uses(file.path, file.data(), lines, self.name)


def _render(name: str, where: str, uses: list[ShownUse], more: bool, header: str | None) -> str:
    lines = [f"[untrusted uses of {name!r} under {display(where)}]"]
    if header is not None:
        lines.append(header)
    for use in uses[:MAX_USES]:
        mark = DEFINITION_MARK if use.definition else ""
        lines.append(f"{display(use.path)}:{use.line}: {use.text}{mark}")
    if more or len(uses) > MAX_USES:
        lines.append(f"[more uses not shown (at most {MAX_USES}); narrow with path=]")
    return "\n".join(lines)


async def _served(
    ctx: ToolContext, args: FindReferencesArgs, where: str, answer: NavAnswer, anchors: list[Anchor]
) -> tuple[list[ShownUse], bool, list[str]]:
    """The language server's locations that may be shown, as uses; whether there were more
    than shown; and the notes on what was dropped."""
    within = ctx.workspace.targets(args.path, file=False)
    located = await locate(ctx, within, answer)
    defined = {(a.path, a.line) for a in anchors}
    uses: list[ShownUse] = []
    more = False
    for file in sorted(located.files, key=lambda f: f.path):
        room = MAX_USES + 1 - len(uses)
        if room <= 0:
            more = True
            break
        numbers = sorted(file.lines)
        if len(numbers) > room:
            more, numbers = True, numbers[:room]
        lines = {n: (file.path, n) in defined for n in numbers}
        uses += show_uses(file.path, file.data, lines, args.name)
    return uses, more, located.notes(where)


async def find_references(args: FindReferencesArgs, ctx: ToolContext) -> ToolResult:
    cache = cache_for(ctx.code_cache)
    found = _Found(args.name, cache, ctx.navigator is not None)
    where, decision, extra = await look_up(
        ctx, "find_references", args.path, args.name, found.visit
    )
    asked = await ask(ctx, "references", found.anchors)
    header = asked.header if asked is not None else None
    uses, more, source = found.uses, found.more, None
    if asked is not None and asked.answer is not None:
        source = asked.source
        uses, more, dropped = await _served(ctx, args, where, asked.answer, found.anchors)
        extra = [*dropped, *extra]
    else:
        extra = [*not_searched(found.unsearched), *extra]
    if not uses:
        head = f"[no uses of {args.name!r} under {display(where)}]"
        lines = [head, *([header] if header else []), *extra]
        return ToolResult("\n".join(lines), path=where, decision=decision, source=source)
    uses = sorted(uses, key=lambda u: (u.path, u.line))
    kept = uses[:MAX_USES]
    redactions = sum(use.redactions for use in kept)
    if redactions:
        extra.insert(0, f"[redacted {redactions} secret(s)]")
    content = _render(args.name, where, uses, more, header)
    return ToolResult(
        "\n".join([content, *extra]),
        path=where,
        decision=decision,
        seen=[SeenSpan(use.path, use.line, use.line) for use in kept],
        redactions=redactions,
        source=source,
    )


NARROW = "pass `path` to look in one folder or file"
TOOL = Tool("find_references", DESCRIPTION, FindReferencesArgs, find_references, summarize, NARROW)
