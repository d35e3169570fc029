"""Definitions the code engine did not find, as the editor's language servers name them.

When tree-sitter finds no definition of a name under the path (it is imported or
re-exported, or defined in a language the engine does not parse), `find_symbol` asks
the client, all at once with one bounded wait: `definition` from the first use of the
name in each of the first files that use it (`served.use_anchor`, at most four), and
`workspaceSymbols` for the name's last segment, keeping the symbols of exactly that
name (for `Class.member`, only those whose container ends with `Class`). Every location
passes the read path first (`located.locate`); each is shown once, as
`path:LINE KIND NAME  TEXT`: TEXT the file's line redacted, cut and escaped like a
search hit; KIND the symbol's kind, or `definition`; NAME the symbol's container and
name, or the name asked for. The client's strings are redacted, escaped, then cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field

from lantern.escaping import cap, escape_line
from lantern.tools.base import SeenSpan, ToolContext
from lantern.tools.navigation.located import locate
from lantern.tools.navigation.served import MAX_ANCHORS, Anchor, asking, settled, told
from lantern.tools.navigation.shown import MAX_NAME_CHARS, show_lines
from lantern.tools.navigation.symbols import last_segment
from lantern.tools.navigator import NavAnswer, NavSymbol
from lantern.tools.ripgrep.result_filter import display
from lantern.workspace.redact.redactor import redact

MAX_KIND_CHARS = 40  # a symbol's kind as shown
MAX_SHOWN = 50  # definitions listed, as find_symbol's own

Label = tuple[str, str]  # (KIND, NAME) as shown
Key = tuple[str | None, int]  # a location as the client named it: path, 0-based line


@dataclass
class Served:
    """What the language servers' definitions show: the lines (at most `MAX_SHOWN`), how
    many more there were, what they count as seen, the secrets redacted in them, the
    notes on what was dropped, the header, and who answered (None: nobody)."""

    header: str
    source: str | None = None
    lines: list[str] = field(default_factory=list)
    more: int = 0
    seen: list[SeenSpan] = field(default_factory=list)
    redactions: int = 0
    notes: list[str] = field(default_factory=list)


def _untrusted(text: str, most: int) -> str:
    return cap(escape_line(redact(text).text), most)


def _matches(symbol: NavSymbol, name: str) -> bool:
    """A symbol of exactly the name's last segment; for `Class.member`, one whose
    container ends with `Class` as a whole word (`Class`, `shapes.Class`)."""
    owner, _, member = name.rpartition(".")
    if symbol.name != member:
        return False
    if not owner:
        return True
    container = symbol.container or ""
    before = container[: -len(owner)][-1:]
    return container.endswith(owner) and not (before.isalnum() or before in ("_", "$"))


def _kept(answer: NavAnswer, name: str, labels: dict[Key, Label]) -> NavAnswer:
    """The answer's locations, and its symbols of `name` as locations (each labelled)."""
    for location in answer.locations:
        labels.setdefault((location.path, location.line), ("definition", name))
    locations = list(answer.locations)
    for symbol in answer.symbols:
        if _matches(symbol, name):
            where = symbol.location
            owner = f"{symbol.container}." if symbol.container else ""
            kind = _untrusted(symbol.kind or "symbol", MAX_KIND_CHARS)
            label = _untrusted(owner + symbol.name, MAX_NAME_CHARS)
            labels[(where.path, where.line)] = (kind, label)
            locations.append(where)
    return NavAnswer(answer.source, locations, answer.malformed, answer.over)


async def served_definitions(
    ctx: ToolContext, name: str, path: str, where: str, uses: Sequence[Anchor]
) -> Served | None:
    """The definitions the client names for `name` under `path` (shown as `where`); None
    when no navigator offers `definition` (with a use to ask from) or `workspaceSymbols`:
    the tool answers exactly as without one."""
    navigator = ctx.navigator
    if navigator is None:
        return None
    jobs: list[Awaitable[NavAnswer | None]] = []
    if uses and navigator.offers("definition"):
        jobs += asking(ctx, navigator, "definition", uses[:MAX_ANCHORS])
    if navigator.offers("workspaceSymbols"):
        jobs.append(navigator.workspace_symbols(last_segment(name)))
    if not jobs:
        return None
    answers, timed_out = await settled(jobs)
    labels: dict[Key, Label] = {}
    kept = [_kept(answer, name, labels) for answer in answers if answer is not None]
    asked = told(navigator, [a for a in kept if a.locations or a.malformed or a.over], timed_out)
    served = Served(asked.header, asked.source)
    if asked.answer is None:
        return served
    located = await locate(ctx, ctx.workspace.targets(path, file=False), asked.answer)
    served.notes = located.notes(where)
    files = sorted(located.files, key=lambda f: (f.path.count("/"), f.path))
    for file in files:
        for number, text in show_lines(file.data, file.lines).items():
            if len(served.lines) >= MAX_SHOWN:
                served.more += 1
                continue
            kind, label = labels[(file.named, number - 1)]
            served.lines.append(f"{display(file.path)}:{number} {kind} {label}  {text}")
            served.seen.append(SeenSpan(file.path, number, number))
            served.redactions += (kind + label + text).count("[REDACTED:")
    return served
