"""outline: the definitions of a file, or the top-level definitions of a folder's files.

Each line is `path:START-END KIND NAME  SIGNATURE` (NAME qualified for members,
`Class.method`), the signature from the redacted text (`navigation/shown.py`). A file is
parsed whole (through the conversation's parse cache) and approved like a read of it;
its outline keeps source order, a map of the file, cut at `MAX_OUTPUT_BYTES` with a note
of how many definitions are left, and a note of what nesting left out (`[not listed: …]`,
`code/definitions.Unlisted`).

A folder is walked as list_files walks it (`navigation/files.py`) and approved like a
search of it. Its outline is bounded: files are outlined in the walk's order (shallowest
first, then by path) until their lines fill the output or `SOURCE_BUDGET` bytes of
source have been outlined; a file over `BIG_FILE` (most often a generated table) is
passed over. A note says how many files were outlined of how many, and how to see the
rest. The files outlined are shown most important first: shallower files first, then
files with more top-level definitions, then by path. Within each file the definitions
come in groups, each in source order: public classes, functions and types first, then
private helpers, then public constants, then private ones (public as
`code/visibility.py` tells it: exported, `pub`, `public`, not `static`, no leading
underscore…). When the lines pass `MAX_OUTPUT_BYTES`, what is kept is decided group by
group across all files: every file's public definitions before any private helper, and
every helper before any constant (within a group, files in the order above). The note
then says how many definitions of which groups, in how many files, were left out.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from lantern.code.cache import ParseCache
from lantern.code.definitions import Unlisted, deep_words
from lantern.errors import ToolError
from lantern.tools.arguments import ToolArgs, shown
from lantern.tools.base import SeenSpan, Tool, ToolContext, ToolResult, approve
from lantern.tools.navigation.caches import cache_for
from lantern.tools.navigation.files import (
    Loaded,
    Walked,
    file_language,
    visit_file,
    walk_all,
    walk_notes,
)
from lantern.tools.navigation.shown import ShownDefinition, show_definitions
from lantern.tools.navigation.unsearched import not_searched
from lantern.tools.ripgrep.result_filter import display, open_targets
from lantern.workspace.lines import looks_binary
from lantern.workspace.roots import Opened
from lantern.workspace.text import MAX_OUTPUT_BYTES

_CHUNK = 400  # definitions of one file shown (redacted, rendered) at a time
# A folder outline stops once the lines it gathered fill the output, or once it outlined
SOURCE_BUDGET = 1 << 20  # this many bytes of source,
BIG_FILE = 256 << 10  # passing over any file larger than this.
# Kinds grouped as constants: a C function-like macro (`pr_fmt`) is a `#define` as well.
_CONSTANT_KINDS = frozenset({"constant", "macro"})
# A folder outline's groups, in the order they are kept and shown within each file.
_PUBLIC, _PRIVATE, _PUBLIC_CONSTANTS, _PRIVATE_CONSTANTS = range(4)
DESCRIPTION = (
    "Outline code: for a file, every definition (classes, functions, methods, types, "
    "constants) with its line range and signature, one per line as "
    "`path:START-END KIND NAME  SIGNATURE`; for a folder, the top-level definitions of its "
    "files, most important first (in each file public definitions, then private helpers, "
    "then constants). Use it to learn a file's shape before reading it."
)


class OutlineArgs(ToolArgs):
    path: str = Field(description="Workspace-relative file or folder, e.g. src/app.py or src.")


def summarize(arguments: Mapping[str, Any]) -> str:
    """`src/app.py`: the file or folder outlined."""
    return shown(arguments.get("path", "."))


@dataclass(frozen=True)
class _FileOutline:
    path: str
    depth: int
    lines: list[ShownDefinition]


class _Folder:
    """Top-level definitions of each file a folder walk hands over, until it has enough."""

    def __init__(self, cache: ParseCache) -> None:
        self.cache = cache
        self.files: list[_FileOutline] = []
        self.unsearched: list[tuple[str, str]] = []  # (path, what): code too deep to query
        self.outlined = 0  # files outlined
        self.big = 0  # files passed over, larger than BIG_FILE
        self.source = 0  # bytes of source outlined
        self.shown = 0  # bytes of the lines gathered

    def visit(self, file: Loaded) -> bool:
        """Outline one file; True once the outline has enough (the walk then ends)."""
        if self.enough():
            return True
        if file.key[2] > BIG_FILE:
            self.big += 1
            return False
        self.outlined += 1
        self.source += file.key[2]
        found, unlisted = self.cache.listing(file.key, file.data, file.language)
        if unlisted.deep_line:
            self.unsearched.append((file.path, deep_words(unlisted.deep_line)))
        top = [d for d in found if d.depth == 0]
        if top:
            lines = show_definitions(file.path, file.data(), top)
            if lines:
                self.files.append(_FileOutline(file.path, file.depth, lines))
                self.shown += _shown_bytes(lines)
        return self.enough()

    def enough(self) -> bool:
        return self.shown > MAX_OUTPUT_BYTES or self.source >= SOURCE_BUDGET

    def note(self, walked: Walked) -> list[str]:
        """How many files were outlined of how many, when the outline had enough or passed
        files over (the walk's own cap has its note, `walk_notes`)."""
        total = walked.files + walked.left
        if not (walked.ended or self.big) or self.outlined == total:
            return []
        big = (
            f"; {self.big:,} file(s) over {BIG_FILE >> 10:,} KiB passed over (often generated)"
            if self.big
            else ""
        )
        return [
            f"[outlined {self.outlined:,} of {total:,} supported file(s), shallowest first, "
            f"then by path{big}; outline a sub-folder or a file to see the rest]"
        ]


def _group(item: ShownDefinition) -> int:
    d = item.definition
    constant = d.kind in _CONSTANT_KINDS
    if d.public:
        return _PUBLIC_CONSTANTS if constant else _PUBLIC
    return _PRIVATE_CONSTANTS if constant else _PRIVATE


def _fit(lines: list[ShownDefinition]) -> list[ShownDefinition]:
    """The first lines within MAX_OUTPUT_BYTES."""
    used = 0
    for i, item in enumerate(lines):
        used += len(item.line.encode("utf-8", "replace")) + 1
        if used > MAX_OUTPUT_BYTES:
            return lines[:i]
    return lines


def _result(
    head: str, kept: list[ShownDefinition], notes: list[str], where: str, decision: str
) -> ToolResult:
    lines = [head, *(item.line for item in kept), *notes]
    redactions = sum(item.redactions for item in kept)
    if redactions:
        lines.append(f"[redacted {redactions} secret(s)]")
    seen = [SeenSpan(item.path, item.definition.start, item.name_line) for item in kept]
    return ToolResult(
        "\n".join(lines), path=where, decision=decision, seen=seen, redactions=redactions
    )


@dataclass(frozen=True)
class _Ranked:
    group: int
    file: int  # its file's place in the outline
    index: int  # its place in its file (source order)
    item: ShownDefinition


def _left_note(left: list[_Ranked]) -> str:
    """What a folder outline left out, in numbers, and how to see it."""
    counts = [
        (sum(1 for r in left if r.group == _PUBLIC), "public definition(s)"),
        (sum(1 for r in left if r.group == _PRIVATE), "private helper(s)"),
        (sum(1 for r in left if r.group >= _PUBLIC_CONSTANTS), "constant(s)"),
    ]
    parts = ", ".join(f"{count:,} {what}" for count, what in counts if count)
    files = len({r.file for r in left})
    return (
        f"[{len(left):,} more definition(s) in {files:,} file(s) not shown: {parts} "
        "(public definitions are kept first, private helpers and constants last); "
        "outline a sub-folder or a file to see them]"
    )


def _folder_lines(files: list[_FileOutline]) -> tuple[list[ShownDefinition], list[str]]:
    """The lines a folder outline shows, file by file, and a note on what is left out."""
    files = sorted(files, key=lambda f: (f.depth, -len(f.lines), f.path))
    ranked = [
        _Ranked(_group(item), rank, i, item)
        for rank, f in enumerate(files)
        for i, item in enumerate(f.lines)
    ]
    ranked.sort(key=lambda r: (r.group, r.file, r.index))  # the order lines are kept in
    count = len(_fit([r.item for r in ranked]))
    kept, left = ranked[:count], ranked[count:]
    kept.sort(key=lambda r: (r.file, r.group, r.index))  # the order they are shown in
    return [r.item for r in kept], [_left_note(left)] if left else []


def _shown_bytes(items: list[ShownDefinition]) -> int:
    return sum(len(item.line.encode("utf-8", "replace")) + 1 for item in items)


def _one_file(handle: Opened, cache: ParseCache) -> tuple[list[ShownDefinition], int, Unlisted]:
    """A worker thread: parse (or find in the cache) and show the file's definitions, a
    chunk at a time until the output is full; how many were not looked at; and what the
    definitions leave out."""
    holder: list[tuple[list[ShownDefinition], int, Unlisted]] = []

    def visit(file: Loaded) -> None:
        data = file.data()
        if looks_binary(data):
            raise ToolError("binary_file", f"{file.path} is a binary file; not outlined")
        found, unlisted = cache.listing(file.key, data, file.language)
        shown: list[ShownDefinition] = []
        done = 0
        while done < len(found) and _shown_bytes(shown) <= MAX_OUTPUT_BYTES:
            shown += show_definitions(file.path, data, found[done : done + _CHUNK])
            done += _CHUNK
        holder.append((shown, max(0, len(found) - done), unlisted))

    visit_file(handle, visit)
    return holder[0]


async def _outline_file(handle: Opened, ctx: ToolContext, cache: ParseCache) -> ToolResult:
    rel = handle.target.rel
    file_language(handle)  # a known language, within the cap, or refused before asking
    decision = await approve(ctx, "outline", handle)
    items, unread, unlisted = await asyncio.to_thread(_one_file, handle, cache)
    left = [f"[not listed: {unlisted.words()}]"] if unlisted else []
    if not items:
        head = f"[no definitions in {display(rel)}]"
        return ToolResult("\n".join([head, *left]), path=rel, decision=decision)
    total = len(items) + unread
    head = f"[untrusted outline of {display(rel)}: {total:,} definition(s)]"
    kept = _fit(items)
    more = total - len(kept)
    notes = [f"[{more:,} more definition(s) not shown; use find_symbol or read_file for the rest]"]
    return _result(head, kept, [*(notes if more else []), *left], rel, decision)


async def outline(args: OutlineArgs, ctx: ToolContext) -> ToolResult:
    targets = ctx.workspace.targets(args.path, file=False)
    opened, notes = await open_targets(ctx.workspace, targets, "any")
    cache = cache_for(ctx.code_cache)
    try:
        if len(opened) == 1 and not stat.S_ISDIR(opened[0].stat.st_mode):
            return await _outline_file(opened[0], ctx, cache)
        where = "." if len(targets) > 1 else targets[0].rel
        decision = await approve(ctx, "outline", opened[0], folder=True, path=where)
        folder = _Folder(cache)
        walked = await walk_all(ctx, opened, folder.visit, None)
    finally:
        for handle in opened:
            handle.close()
    extra = [*folder.note(walked), *not_searched(folder.unsearched), *walk_notes(walked), *notes]
    if not folder.files:
        head = f"[no definitions found in the supported files under {display(where)}]"
        return ToolResult("\n".join([head, *extra]), path=where, decision=decision)
    kept, left = _folder_lines(folder.files)
    head = (
        f"[untrusted outline of {display(where)}: top-level definitions of {len(folder.files):,} "
        "file(s), shallower files and files with more definitions first; in each file "
        "public definitions, then private helpers, then constants]"
    )
    result = _result(head, kept, left, where, decision)
    if extra:
        result.content = "\n".join([result.content, *extra])
    return result


NARROW = "outline a sub-folder or one file"
TOOL = Tool("outline", DESCRIPTION, OutlineArgs, outline, summarize, NARROW)
