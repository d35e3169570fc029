"""find_symbol: where a name is defined, as `path:START-END KIND NAME  SIGNATURE`.

Candidates are the files where the name's last segment stands as a whole word (ripgrep,
`navigation/files.py`); only those are parsed (through the conversation's parse cache),
and only definitions whose qualified name is the name, or ends with `.name`, are kept.
Ranked: an exact qualified match first, then shallower paths, then by path and line.
What is shown is redacted (`navigation/shown.py`). A file whose definitions nest too
deep to be listed in full is named in a note (`navigation/unsearched.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from lantern.code.cache import ParseCache
from lantern.tools.arguments import ToolArgs, shown
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult
from lantern.tools.navigation.caches import cache_for
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.lookup import look_up
from lantern.tools.navigation.shown import ShownDefinition, show_definitions
from lantern.tools.navigation.symbols import (
    MAX_NAME_CHARS,
    match_rank,
    symbol_name,
)
from lantern.tools.navigation.unsearched import not_searched

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
    def __init__(self, name: str, cache: ParseCache) -> None:
        self.name = name
        self.cache = cache
        self.shown: list[tuple[int, ShownDefinition]] = []
        self.unsearched: list[tuple[str, str]] = []  # (path, what its definitions leave out)

    def visit(self, file: Loaded) -> None:
        found, unlisted = self.cache.listing(file.key, file.data, file.language)
        if unlisted:
            self.unsearched.append((file.path, unlisted.words()))
        ranked = [(rank, d) for d in found if (rank := match_rank(d.name, self.name)) is not None]
        if not ranked:
            return
        ranks = {id(d): rank for rank, d in ranked}
        for item in show_definitions(file.path, file.data(), [d for _, d in ranked]):
            self.shown.append((ranks[id(item.definition)], item))


def _ranked(found: _Found) -> list[ShownDefinition]:
    """Exact qualified matches first, then shallower paths, then by path and line."""
    ordered = sorted(
        found.shown,
        key=lambda r: (r[0], r[1].path.count("/"), r[1].path, r[1].definition.start),
    )
    return [item for _, item in ordered]


def _render(name: str, where: str, ranked: list[ShownDefinition]) -> str:
    lines = [f"[untrusted definitions of {name!r} under {where}]"]
    lines += [item.line for item in ranked[:MAX_DEFINITIONS]]
    if len(ranked) > MAX_DEFINITIONS:
        more = len(ranked) - MAX_DEFINITIONS
        lines.append(f"[{more} more definition(s) not shown; narrow with path= or Class.member]")
    return "\n".join(lines)


async def find_symbol(args: FindSymbolArgs, ctx: ToolContext) -> ToolResult:
    found = _Found(args.name, cache_for(ctx.code_cache))
    where, decision, extra = await look_up(ctx, "find_symbol", args.path, args.name, found.visit)
    extra = [*not_searched(found.unsearched), *extra]
    if not found.shown:
        head = f"[no definition of {args.name!r} under {where}]"
        return ToolResult("\n".join([head, *extra]), path=where, decision=decision)
    ranked = _ranked(found)
    content = _render(args.name, where, ranked)
    kept = ranked[:MAX_DEFINITIONS]
    seen = [SeenSpan(item.path, item.definition.start, item.name_line) for item in kept]
    redactions = sum(item.redactions for item in kept)
    if redactions:
        extra.insert(0, f"[redacted {redactions} secret(s)]")
    return ToolResult(
        "\n".join([content, *extra]),
        path=where,
        decision=decision,
        seen=seen,
        redactions=redactions,
    )


NARROW = "pass `path` to look in one folder, or a qualified name (`Class.member`)"
TOOL = Tool("find_symbol", DESCRIPTION, FindSymbolArgs, find_symbol, summarize, NARROW)
