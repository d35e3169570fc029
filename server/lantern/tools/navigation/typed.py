"""A definition's type, from the language server's hover at its name.

`find_symbol` asks `hover` from the definitions it shows (their names' positions, the
anchors `find_references` asks from: the best four, at once, one bounded wait) and adds
one line under each definition that got an answer: `  type: TEXT`. TEXT is the hover's
first code block (where language servers put a type or a signature), else its first
line. The hover is untrusted: it is redacted first, whole (a key block is seen as one),
then the part is taken, put on one line, escaped, and cut at `MAX_TYPE_CHARS` with a
mark that says how long it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lantern.code.definitions import Definition
from lantern.escaping import cap, escape_line
from lantern.tools.base import ToolContext
from lantern.tools.navigation.served import Anchor, Asked, asking, best, settled, told
from lantern.workspace.redact.redactor import redact

MAX_TYPE_CHARS = 300
TYPE_PREFIX = "  type: "


@dataclass(frozen=True)
class TypeLine:
    text: str  # redacted, on one line, escaped, cut
    redactions: int


def _fence(line: str) -> bool:
    return line.lstrip().startswith(("```", "~~~"))


def _first_part(text: str) -> str:
    """The first code block's lines when it has any text, else the first line with text
    that is no fence."""
    lines = text.split("\n")
    opening = next((i for i, line in enumerate(lines) if _fence(line)), None)
    if opening is not None:
        block: list[str] = []
        for line in lines[opening + 1 :]:
            if _fence(line):
                break
            block.append(line)
        if any(line.strip() for line in block):
            return "\n".join(block)
    return next((line for line in lines if line.strip() and not _fence(line)), "")


def type_line(hover: str) -> TypeLine | None:
    """The line shown for a hover; None when it has no text."""
    part = " ".join(_first_part(redact(hover).text).split())
    if not part:
        return None
    text = cap(escape_line(part), MAX_TYPE_CHARS)
    return TypeLine(text, text.count("[REDACTED:"))


Types = dict[tuple[str, Definition], TypeLine]  # (path, definition) → its type line


async def types_of(ctx: ToolContext, anchors: Sequence[Anchor]) -> tuple[Types, Asked | None]:
    """The type lines of the best anchors' definitions, and the header; no header when no
    navigator offers `hover` (or there is nothing to ask from)."""
    navigator = ctx.navigator
    if navigator is None or not anchors or not navigator.offers("hover"):
        return {}, None
    chosen = best(anchors)
    answers, timed_out = await settled(asking(ctx, navigator, "hover", chosen))
    types: Types = {}
    given = []
    for anchor, answer in zip(chosen, answers, strict=True):
        line = None if answer is None or answer.hover is None else type_line(answer.hover)
        if answer is None or line is None or anchor.definition is None:
            continue
        given.append(answer)
        types[(anchor.path, anchor.definition)] = line
    return types, told(navigator, given, timed_out)
