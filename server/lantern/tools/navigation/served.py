"""Asking the editor's language servers from a tree-sitter definition, and saying so.

A lookup finds the name's definitions with the code engine first; the position of each
definition's name (the first token of that name inside it) is where the language
server is asked from, so `Class.member` means that member and no other `member`. The
best-ranked few are asked at once, with one bounded wait; their answers' locations are
taken together. Where the engine found no definition, a use of the name is asked from
instead (`use_anchor`). The result's header says where it came from (`told`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from lantern.code.cache import ParseCache
from lantern.code.definitions import Definition
from lantern.code.references import Use
from lantern.escaping import cap, escape_line
from lantern.tools.base import ToolContext
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.symbols import last_segment, match_rank
from lantern.tools.navigator import NavAnswer, NavigationTimeout, Navigator
from lantern.workspace.lines import split_lines
from lantern.workspace.redact.redactor import redact

MAX_ANCHORS = 4  # definitions (or uses) one lookup asks from
MAX_SOURCE_SHOWN = 60  # characters of who answered, once redacted and escaped


@dataclass(frozen=True)
class Anchor:
    """Where a definition's name stands: 1-based line, 0-based column in code points."""

    rank: int
    path: str  # as the model writes it
    line: int
    column: int
    line_text: str
    definition: Definition | None = None  # whose name it is; None: a use of the name


def _at(file: Loaded, lines: Sequence[bytes], use: Use, rank: int, d: Definition | None) -> Anchor:
    raw = lines[use.line - 1]
    column = len(raw[: use.column].decode("utf-8", "replace"))
    return Anchor(rank, file.path, use.line, column, raw.decode("utf-8", "replace"), d)


def anchors_in(file: Loaded, name: str, cache: ParseCache) -> list[Anchor]:
    """The definitions of `name` in one file, each at its name's first token."""
    defined = cache.definitions(file.key, file.data, file.language)
    ranked = [(r, d) for d in defined if (r := match_rank(d.name, name)) is not None]
    if not ranked:
        return []
    uses = cache.naming(file.key, file.data, file.language, last_segment(name))
    lines = split_lines(file.data())
    found = []
    for rank, definition in ranked:
        use = _name_token(definition, uses)
        if use is not None and use.line <= len(lines):
            found.append(_at(file, lines, use, rank, definition))
    return found


def use_anchor(file: Loaded, name: str, cache: ParseCache) -> Anchor | None:
    """The first use of `name`'s last segment in one file that defines nothing (an import,
    a call): where to ask for its definition when the engine found none."""
    uses = cache.uses(file.key, file.data, file.language, last_segment(name)).uses
    first = min(
        (u for u in uses if not u.is_definition), key=lambda u: (u.line, u.column), default=None
    )
    if first is None:
        return None
    lines = split_lines(file.data())
    return _at(file, lines, first, 0, None) if first.line <= len(lines) else None


def _name_token(definition: Definition, uses: Sequence[Use]) -> Use | None:
    inside = [u for u in uses if u.is_definition and definition.start <= u.line <= definition.end]
    return min(inside, key=lambda u: (u.line, u.column), default=None)


@dataclass(frozen=True)
class Asked:
    """What the language server said: its answer (None: none), the header line, and who
    answered (redacted, escaped and cut: for the header and the audit log)."""

    answer: NavAnswer | None
    header: str
    source: str | None = None


def _merged(answers: Sequence[NavAnswer]) -> NavAnswer:
    """The answers from several requests as one (the first one's source)."""
    return NavAnswer(
        answers[0].source,
        [location for answer in answers for location in answer.locations],
        sum(answer.malformed for answer in answers),
        sum(answer.over for answer in answers),
        symbols=[symbol for answer in answers for symbol in answer.symbols],
    )


def _absolute(ctx: ToolContext, path: str) -> str:
    (target,) = ctx.workspace.targets(path, file=True)
    return os.path.join(target.root.path, *target.parts)


def best(anchors: Sequence[Anchor]) -> list[Anchor]:
    """The anchors to ask from: exact matches first, then shallower paths, at most four."""
    ordered = sorted(anchors, key=lambda a: (a.rank, a.path.count("/"), a.path, a.line))
    return ordered[:MAX_ANCHORS]


def asking(
    ctx: ToolContext, navigator: Navigator, op: str, anchors: Sequence[Anchor]
) -> list[Awaitable[NavAnswer | None]]:
    """One request of `op` from each anchor, not yet sent."""
    return [
        navigator.navigate(op, _absolute(ctx, a.path), a.line, a.column, a.line_text)
        for a in anchors
    ]


async def settled(
    jobs: Sequence[Awaitable[NavAnswer | None]],
) -> tuple[list[NavAnswer | None], bool]:
    """The requests sent at once (each bounded by the navigator's wait): their answers, in
    order (None: none, or none in time), and whether any ran out of time."""
    answers = await asyncio.gather(*jobs, return_exceptions=True)
    timed_out = False
    out: list[NavAnswer | None] = []
    for answer in answers:
        if isinstance(answer, NavigationTimeout):
            timed_out = True
            out.append(None)
        elif isinstance(answer, BaseException):
            raise answer
        else:
            out.append(answer)
    return out, timed_out


def told(navigator: Navigator, given: Sequence[NavAnswer], timed_out: bool) -> Asked:
    """The header for what was given: the first answer's source (redacted, escaped, then
    cut), or why there is none."""
    if given:
        shown = cap(escape_line(redact(given[0].source).text), MAX_SOURCE_SHOWN)
        return Asked(_merged(given), f"[language server: {shown}]", shown)
    if timed_out:
        seconds = f"{navigator.timeout_s:g}"
        why = f"the language server did not answer in {seconds} s"
    else:
        why = "no language server answered"
    return Asked(None, f"[syntax only: {why}]")


async def ask(ctx: ToolContext, op: str, anchors: Sequence[Anchor]) -> Asked | None:
    """Ask `op` from the best anchors; None when there is no navigator offering `op`
    (or nothing to ask from): the tool answers exactly as without one."""
    navigator = ctx.navigator
    if navigator is None or not anchors or not navigator.offers(op):
        return None
    answers, timed_out = await settled(asking(ctx, navigator, op, best(anchors)))
    given = [a for a in answers if a is not None and (a.locations or a.malformed or a.over)]
    return told(navigator, given, timed_out)
