"""Locations a language server named, through the read path before anything is shown.

Everything in a client's answer is untrusted (`tools/navigator.py`). Each location
becomes a workspace file only when it is a `file:` path inside a workspace folder and
under the folder the lookup was approved for; the file is then opened as `read_file`
opens one (the name policy, the ignore rules, the jail with no link followed, a regular
file only) and read with its size cap. A line past the end of the file is dropped.
What is dropped is counted by reason, never named: the model learns how many, not
which. At most `MAX_FILES` files are opened for one answer.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from lantern.errors import ToolError
from lantern.tools.base import ToolContext
from lantern.tools.navigator import NavAnswer
from lantern.tools.ripgrep.result_filter import display
from lantern.workspace.lines import read_capped, split_lines
from lantern.workspace.roots import Target
from lantern.workspace.text import MAX_FILE_BYTES

MAX_FILES = 500  # files one answer may open

NOT_FILE = "not in file: URIs"
OUTSIDE = "outside the workspace"
MALFORMED = "malformed"
PAST_END = "past the end of their file"
TOO_LARGE = f"in files over {MAX_FILE_BYTES // (1 << 20)} MiB"
TOO_MANY = "beyond what one answer may hold"
TOO_MANY_FILES = f"in files beyond the first {MAX_FILES}"
_REFUSED = {
    "ignored_path": "in ignored files",
    "sensitive_path": "in files the name policy refuses",
    "permission_denied": "in files that may not be opened",
    "symlink": "behind symbolic links",
    "not_regular_file": "in things that are not regular files",
    "is_directory": "in things that are not regular files",
    "not_found": "in files that do not exist",
}


@dataclass
class LocatedFile:
    """One file that passed every check: its path as the model writes it, its bytes (at
    most the cap), the 1-based lines the answer named in it, and the path as the answer
    named it."""

    path: str
    data: bytes
    lines: set[int] = field(default_factory=set)
    named: str = ""


@dataclass
class Located:
    files: list[LocatedFile] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    def notes(self, where: str) -> list[str]:
        """What the model is told about what was dropped, one line per reason."""
        out = []
        for reason, count in sorted(self.dropped.items()):
            shown = f"outside {display(where)}" if reason == "outside the path" else reason
            out.append(f"[{count:,} more location(s) {shown}, not shown]")
        return out


def _under(target: Target, within: Sequence[Target]) -> bool:
    return any(target.root is w.root and target.parts[: len(w.parts)] == w.parts for w in within)


def _refusal(exc: ToolError) -> str:
    return _REFUSED.get(exc.code, f"refused by the read path ({exc.code})")


def _read_counted(fd: int, size: int) -> tuple[bytes, int]:
    data = read_capped(fd, MAX_FILE_BYTES, size)
    return data, len(split_lines(data))


async def _read(ctx: ToolContext, target: Target) -> tuple[bytes, int]:
    """The file's bytes, opened and read as `read_file` does (in a worker thread), and its
    line count; raises `ToolError`."""
    opened = await ctx.workspace.open_checked_async(target, "file")
    try:
        if opened.stat.st_size > MAX_FILE_BYTES:
            raise ToolError("too_large", "")
        data, count = await asyncio.to_thread(_read_counted, opened.fd, opened.stat.st_size)
    finally:
        opened.close()
    if len(data) > MAX_FILE_BYTES:
        raise ToolError("too_large", "")
    return data, count


async def locate(ctx: ToolContext, within: Sequence[Target], answer: NavAnswer) -> Located:
    """The answer's locations as files that may be shown, and what was dropped."""
    located = Located()
    dropped = located.dropped
    if answer.malformed:
        dropped[MALFORMED] += answer.malformed
    if answer.over:
        dropped[TOO_MANY] += answer.over
    wanted: dict[str, set[int]] = {}
    for location in answer.locations:
        if location.path is None:
            dropped[NOT_FILE] += 1
        else:
            wanted.setdefault(location.path, set()).add(location.line + 1)
    for number, (path, lines) in enumerate(wanted.items()):
        if number >= MAX_FILES:
            dropped[TOO_MANY_FILES] += len(lines)
            continue
        try:
            target = ctx.workspace.target_for_abspath(path)
        except ToolError:
            dropped[OUTSIDE] += len(lines)
            continue
        if not _under(target, within):
            dropped["outside the path"] += len(lines)
            continue
        try:
            data, count = await _read(ctx, target)
        except ToolError as exc:
            dropped[TOO_LARGE if exc.code == "too_large" else _refusal(exc)] += len(lines)
            continue
        inside = {n for n in lines if n <= count}
        if len(inside) < len(lines):
            dropped[PAST_END] += len(lines) - len(inside)
        if inside:
            located.files.append(LocatedFile(target.rel, data, inside, path))
    return located
