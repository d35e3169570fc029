"""What the tools may ask the editor's language servers, free of any LSP types.

A `Navigator` answers one navigation op from a position in a workspace file; the LSP
layer (`lsp/navigator.py`) implements it by sending `lantern/navigate` to a client that
offers the op. Everything in an answer came from the client and is untrusted: the
tools pass each location through the read path (`navigation/located.py`), and redact,
escape and cap every string before the model sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class NavLocation:
    """One location as the client named it: `path` the file-system path of a `file:` URI
    (None for any other scheme or a URI that is no path), `line` 0-based."""

    path: str | None
    line: int


@dataclass(frozen=True)
class NavSymbol:
    """One workspace symbol as the client named it (each string within its bound, not yet
    redacted nor escaped)."""

    name: str
    kind: str | None
    container: str | None
    location: NavLocation


@dataclass(frozen=True)
class NavAnswer:
    """A client's answer: who answered (for people), its locations or symbols (at most
    the bound), how many entries were malformed or over the bound (dropped unread), and
    a hover's markdown text (whole lines only, within the bound)."""

    source: str
    locations: list[NavLocation] = field(default_factory=list)
    malformed: int = 0
    over: int = 0
    hover: str | None = None
    symbols: list[NavSymbol] = field(default_factory=list)


class NavigationTimeout(Exception):
    """The client did not answer within the bound."""


class Navigator(Protocol):
    timeout_s: float

    def offers(self, op: str) -> bool:
        """Whether the client declared it answers `op`."""
        ...

    async def navigate(
        self, op: str, path: str, line: int, column: int, line_text: str
    ) -> NavAnswer | None:
        """Ask `op` at `path` (absolute), `line` 1-based, `column` 0-based in code points of
        `line_text`; None when there is no answer; raises `NavigationTimeout`."""
        ...

    async def workspace_symbols(self, query: str) -> NavAnswer | None:
        """Ask `workspaceSymbols` for `query`; None when there is no answer; raises
        `NavigationTimeout`."""
        ...
