"""Asking the editor's language servers from a tree-sitter definition, and saying so.

A lookup finds the name's definitions with the code engine first; the position of each
definition's name (the first token of that name inside it) is where the language
server is asked from, so `Class.member` means that member and no other `member`. The
best-ranked few are asked at once; their answers' locations are taken together. The result's
header says where it came from (`header`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass

from lantern.code.cache import ParseCache
from lantern.code.definitions import Definition
from lantern.code.references import Use
from lantern.escaping import escape_line
from lantern.tools.base import ToolContext
from lantern.tools.navigation.files import Loaded
from lantern.tools.navigation.symbols import last_segment, match_rank
from lantern.tools.navigator import NavAnswer, NavigationTimeout
from lantern.workspace.lines import split_lines
from lantern.workspace.redact.redactor import redact

MAX_ANCHORS = 4  # definitions one lookup asks from


@dataclass(frozen=True)
class Anchor:
    """Where a definition's name stands: 1-based line, 0-based column in code points."""

    rank: int
    path: str  # as the model writes it
    line: int
    column: int
    line_text: str


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
        if use is None or use.line > len(lines):
            continue
        raw = lines[use.line - 1]
        column = len(raw[: use.column].decode("utf-8", "replace"))
        text = raw.decode("utf-8", "replace")
        found.append(Anchor(rank, file.path, use.line, column, text))
    return found


def _name_token(definition: Definition, uses: Sequence[Use]) -> Use | None:
    inside = [u for u in uses if u.is_definition and definition.start <= u.line <= definition.end]
    return min(inside, key=lambda u: (u.line, u.column), default=None)


@dataclass(frozen=True)
class Asked:
    """What the language server said: its answer (None: none), the header line, and who
    answered (escaped and redacted: for the header and the audit log)."""

    answer: NavAnswer | None
    header: str
    source: str | None = None


def _merged(answers: Sequence[NavAnswer]) -> NavAnswer:
    """The answers from several definitions as one (the first one's source)."""
    return NavAnswer(
        answers[0].source,
        [location for answer in answers for location in answer.locations],
        sum(answer.malformed for answer in answers),
        sum(answer.over for answer in answers),
    )


def _absolute(ctx: ToolContext, path: str) -> str:
    (target,) = ctx.workspace.targets(path, file=True)
    return os.path.join(target.root.path, *target.parts)


async def ask(ctx: ToolContext, op: str, anchors: Sequence[Anchor]) -> Asked | None:
    """Ask `op` from the best anchors; None when there is no navigator offering `op`
    (or nothing to ask from): the tool answers exactly as without one."""
    navigator = ctx.navigator
    if navigator is None or not anchors or not navigator.offers(op):
        return None
    best = sorted(anchors, key=lambda a: (a.rank, a.path.count("/"), a.path, a.line))
    jobs = [
        navigator.navigate(op, _absolute(ctx, a.path), a.line, a.column, a.line_text)
        for a in best[:MAX_ANCHORS]
    ]
    answers = await asyncio.gather(*jobs, return_exceptions=True)
    timed_out = False
    given: list[NavAnswer] = []
    for answer in answers:
        if isinstance(answer, NavigationTimeout):
            timed_out = True
        elif isinstance(answer, BaseException):
            raise answer
        elif answer is not None and (answer.locations or answer.malformed or answer.over):
            given.append(answer)
    if given:
        source = escape_line(redact(given[0].source).text)
        return Asked(_merged(given), f"[language server: {source}]", source)
    if timed_out:
        seconds = f"{navigator.timeout_s:g}"
        why = f"the language server did not answer in {seconds} s"
    else:
        why = "no language server answered"
    return Asked(None, f"[syntax only: {why}]")
