"""find_symbol: where a name is defined, as `path:START-END KIND NAME  SIGNATURE`.

Candidates are the files where the name's last segment stands as a whole word (ripgrep,
`navigation/files.py`); only those are parsed (through the conversation's parse cache),
and only definitions whose qualified name is the name, or ends with `.name`, are kept.
Over `SEARCH_BUDGET` candidates, those where a matching line looks like a definition are
parsed, then the shallowest up to the budget, and a note says so (`navigation/likely.py`).
Ranked: an exact qualified match first, then shallower paths, then by path and line.
What is shown is redacted (`navigation/shown.py`). A file whose definitions nest too
deep to be listed in full is named in a note (`navigation/unsearched.py`).

When the editor offers its language servers (`ToolContext.navigator`): the best few
definitions found get a `  type: …` line from the client's hover at their names
(`navigation/typed.py`); where the engine found none, the client's `definition` (from
the name's uses) and `workspaceSymbols` answer instead (`navigation/defined.py`). The
header says which answered; no answer, or none in time: the engine's answer and a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from lantern.code.cache import ParseCache
from lantern.tools.arguments import ToolArgs, shown
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult
from lantern.tools.navigation.caches import cache_for
from lantern.tools.navigation.defined import served_definitions
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.lookup import look_up
from lantern.tools.navigation.served import MAX_ANCHORS, Anchor, anchors_in, use_anchor
from lantern.tools.navigation.shown import ShownDefinition, show_definitions
from lantern.tools.navigation.symbols import (
    MAX_NAME_CHARS,
    match_rank,
    symbol_name,
)
from lantern.tools.navigation.typed import TYPE_PREFIX, Types, types_of
from lantern.tools.navigation.unsearched import not_searched
from lantern.tools.navigator import Navigator
from lantern.tools.ripgrep.result_filter import display

DESCRIPTION = (
    "Find where a symbol is defined: classes, functions, methods, types, constants. "
    "`name` is a bare identifier (`parse_config`) or `Class.member`. Returns one line per "
    "definition, `path:START-END KIND NAME  SIGNATURE`, exact matches first. Faster and "
    "more precise than search for a definition; then read_file the lines you need."
)
MAX_DEFINITIONS = 50


class FindSymbolArgs(ToolArgs):
    name: str = Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="Identifier or Class.member, e.g. 'Session' or 'Session.close'.",
    )
    path: str = Field(".", description="Workspace-relative folder (or file) to look in.")

    _check_name = field_validator("name")(symbol_name)


def summarize(arguments: Mapping[str, Any]) -> str:
    """`Session.close in src`: the name and where."""
    return f"{shown(arguments.get('name', ''))} in {shown(arguments.get('path', '.'))}"


class _Found:
    def __init__(self, name: str, cache: ParseCache, navigator: Navigator | None) -> None:
        self.name = name
        self.cache = cache
        self.shown: list[tuple[int, ShownDefinition]] = []
        # Where to ask a language server from: the definitions' names (for their hover),
        # and the first use in each of the first files with no definition.
        self.typed = navigator is not None and navigator.offers("hover")
        self.asks_uses = navigator is not None and navigator.offers("definition")
        self.anchors: list[Anchor] = []
        self.uses: list[Anchor] = []
        self.unsearched: list[tuple[str, str]] = []  # (path, what its definitions leave out)

    def visit(self, file: Loaded) -> None:
        found, unlisted = self.cache.listing(file.key, file.data, file.language)
        if unlisted:
            self.unsearched.append((file.path, unlisted.words()))
        ranked = [(rank, d) for d in found if (rank := match_rank(d.name, self.name)) is not None]
        if not ranked:
            if self.asks_uses and len(self.uses) < MAX_ANCHORS:
                use = use_anchor(file, self.name, self.cache)
                self.uses += [use] if use is not None else []
            return
        ranks = {id(d): rank for rank, d in ranked}
        for item in show_definitions(file.path, file.data(), [d for _, d in ranked]):
            self.shown.append((ranks[id(item.definition)], item))
        if self.typed:
            self.anchors += anchors_in(file, self.name, self.cache)


def _ranked(found: _Found) -> list[ShownDefinition]:
    """Exact qualified matches first, then shallower paths, then by path and line."""
    ordered = sorted(
        found.shown,
        key=lambda r: (r[0], r[1].path.count("/"), r[1].path, r[1].definition.start),
    )
    return [item for _, item in ordered]


def _head(name: str, where: str, header: str | None) -> list[str]:
    head = f"[untrusted definitions of {name!r} under {display(where)}]"
    return [head, *([header] if header else [])]


def _more(more: int) -> list[str]:
    if more <= 0:
        return []
    return [f"[{more} more definition(s) not shown; narrow with path= or Class.member]"]


def _render(
    name: str, where: str, ranked: list[ShownDefinition], header: str | None, types: Types
) -> str:
    lines = _head(name, where, header)
    for item in ranked[:MAX_DEFINITIONS]:
        lines.append(item.line)
        typed = types.get((item.path, item.definition))
        if typed is not None:
            lines.append(TYPE_PREFIX + typed.text)
    lines += _more(len(ranked) - MAX_DEFINITIONS)
    return "\n".join(lines)


def _noted(redactions: int, notes: list[str]) -> list[str]:
    return [f"[redacted {redactions} secret(s)]", *notes] if redactions else notes


async def _not_found(
    args: FindSymbolArgs,
    ctx: ToolContext,
    found: _Found,
    where: str,
    decision: str,
    extra: list[str],
) -> ToolResult:
    """No definition the engine found: the language servers' definitions, if any."""
    served = await served_definitions(ctx, args.name, args.path, where, found.uses)
    if served is None or not served.lines:
        head = f"[no definition of {args.name!r} under {display(where)}]"
        told = [served.header, *served.notes] if served is not None else []
        source = served.source if served is not None else None
        return ToolResult(
            "\n".join([head, *told, *extra]), path=where, decision=decision, source=source
        )
    lines = [*_head(args.name, where, served.header), *served.lines, *_more(served.more)]
    notes = _noted(served.redactions, [*served.notes, *extra])
    return ToolResult(
        "\n".join([*lines, *notes]),
        path=where,
        decision=decision,
        seen=served.seen,
        redactions=served.redactions,
        source=served.source,
    )


async def find_symbol(args: FindSymbolArgs, ctx: ToolContext) -> ToolResult:
    found = _Found(args.name, cache_for(ctx.code_cache), ctx.navigator)
    where, decision, extra = await look_up(
        ctx, "find_symbol", args.path, args.name, found.visit, ranked=True
    )
    extra = [*not_searched(found.unsearched), *extra]
    if not found.shown:
        return await _not_found(args, ctx, found, where, decision, extra)
    ranked = _ranked(found)
    kept = ranked[:MAX_DEFINITIONS]
    listed = {(item.path, item.definition) for item in kept}
    anchors = [a for a in found.anchors if (a.path, a.definition) in listed]
    types, asked = await types_of(ctx, anchors)
    content = _render(args.name, where, ranked, asked.header if asked else None, types)
    seen = [SeenSpan(item.path, item.definition.start, item.name_line) for item in kept]
    redactions = sum(item.redactions for item in kept)
    redactions += sum(typed.redactions for typed in types.values())
    return ToolResult(
        "\n".join([content, *_noted(redactions, extra)]),
        path=where,
        decision=decision,
        seen=seen,
        redactions=redactions,
        source=asked.source if asked else None,
    )


NARROW = "pass `path` to look in one folder, or a qualified name (`Class.member`)"
TOOL = Tool("find_symbol", DESCRIPTION, FindSymbolArgs, find_symbol, summarize, NARROW)
