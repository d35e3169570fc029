"""The tools' `Navigator` over LSP: `lantern/navigate` to a client that offers the op.

Sent only when the client's `initialize` declared the op in
`capabilities.experimental.lantern.navigation` (a list of op names). The position goes
out in the negotiated position encoding. The client's answer is untrusted: it is checked
here field by field (anything that does not fit is no answer, or a dropped entry), at
most `MAX_LOCATIONS` locations or symbols are looked at, and a `file:` URI becomes a
file-system path (any other scheme: no path). Strings are bounded here, before anyone
reads them: one over its bound is not taken (a text is never cut before it is
redacted), except a hover, which keeps its whole lines within `MAX_HOVER_CHARS`. What
the paths may show, and how the strings are redacted, escaped and cut for the model, is
decided by the tools (`tools/navigation/`). No answer within `TIMEOUT_S` is a timeout;
an error answer is no answer.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lantern.agent.positions import Position, Units
from lantern.lsp.messages import NAVIGATE, NavigateParams
from lantern.lsp.translate import position_encoding
from lantern.tools.navigator import NavAnswer, NavigationTimeout, NavLocation, NavSymbol

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
MAX_LOCATIONS = 2000  # entries of one answer looked at; the rest are counted, not read
MAX_URI_CHARS = 4096
MAX_SOURCE_CHARS = 1000  # longer: not taken ("client"); the tools cut it once redacted
MAX_HOVER_CHARS = 32_000  # longer: its whole lines within the bound are kept
MAX_SYMBOL_NAME_CHARS = 1000
MAX_KIND_CHARS = 60
MAX_CONTAINER_CHARS = 1000


def offered_ops(server: LanguageServer) -> frozenset[str]:
    """The ops the client declared in `capabilities.experimental.lantern.navigation`."""
    try:
        experimental = server.client_capabilities.experimental
    except Exception:  # not initialized yet
        return frozenset()
    lantern = experimental.get("lantern") if isinstance(experimental, dict) else None
    ops = lantern.get("navigation") if isinstance(lantern, dict) else None
    if not isinstance(ops, list):
        return frozenset()
    return frozenset(op for op in ops if isinstance(op, str))


def _line(value: Any) -> int | None:
    """A 0-based line number: a non-negative integer (a bool is not one)."""
    if type(value) is int and 0 <= value < 1 << 31:
        return value
    return None


def _location(entry: Any) -> NavLocation | None:
    """One `{uri, range}` checked; None when it does not fit."""
    if not isinstance(entry, dict):
        return None
    uri, where = entry.get("uri"), entry.get("range")
    if not isinstance(uri, str) or len(uri) > MAX_URI_CHARS or not isinstance(where, dict):
        return None
    start, end = where.get("start"), where.get("end")
    if not isinstance(start, dict) or not isinstance(end, dict):
        return None
    line, end_line = _line(start.get("line")), _line(end.get("line"))
    if line is None or end_line is None or end_line < line:
        return None
    if _line(start.get("character")) is None or _line(end.get("character")) is None:
        return None
    path = None
    if uri.startswith("file:"):
        try:
            path = to_fs_path(uri)
        except Exception:  # a URI no path can be made of
            path = None
    return NavLocation(path or None, line)


def _text(value: Any, most: int) -> str | None:
    """A non-blank string of at most `most` characters; None for anything else."""
    if isinstance(value, str) and value.strip() and len(value) <= most:
        return value
    return None


def _symbol(entry: Any) -> NavSymbol | None:
    """One `{name, kind?, containerName?, location}` checked; None when it does not fit."""
    if not isinstance(entry, dict):
        return None
    name = _text(entry.get("name"), MAX_SYMBOL_NAME_CHARS)
    where = _location(entry.get("location"))
    kind, container = entry.get("kind"), entry.get("containerName")
    if name is None or where is None:
        return None
    if kind is not None and _text(kind, MAX_KIND_CHARS) is None:
        return None
    if container is not None and _text(container, MAX_CONTAINER_CHARS) is None:
        return None
    return NavSymbol(name, kind, container, where)


def _hover(value: str) -> str | None:
    """A hover within the bound: over it, only the whole lines that fit (none: no hover)."""
    if len(value) > MAX_HOVER_CHARS:
        value = value[:MAX_HOVER_CHARS].rpartition("\n")[0]
    return value if value.strip() else None


def checked_answer(result: Any) -> NavAnswer | None:
    """The client's result as a `NavAnswer`, or None when it is none (or not an object,
    or a field of the wrong kind)."""
    if not isinstance(result, dict):
        return None
    name = _text(result.get("source"), MAX_SOURCE_CHARS) or "client"
    entries, symbols, hover = (result.get(k) for k in ("locations", "symbols", "hover"))
    if entries is None:
        entries = []
    if symbols is None:
        symbols = []
    if not isinstance(entries, list) or not isinstance(symbols, list):
        return None
    if hover is not None and not isinstance(hover, str):
        return None
    locations = [_location(entry) for entry in entries[:MAX_LOCATIONS]]
    named = [_symbol(entry) for entry in symbols[:MAX_LOCATIONS]]
    return NavAnswer(
        name,
        [found for found in locations if found is not None],
        locations.count(None) + named.count(None),
        len(entries) - len(locations) + len(symbols) - len(named),
        None if hover is None else _hover(hover),
        [found for found in named if found is not None],
    )


class ClientNavigator:
    """`tools.navigator.Navigator` answered by the LSP client."""

    def __init__(self, server: LanguageServer, timeout_s: float = TIMEOUT_S) -> None:
        self.server = server
        self.timeout_s = timeout_s

    def offers(self, op: str) -> bool:
        return op in offered_ops(self.server)

    async def navigate(
        self, op: str, path: str, line: int, column: int, line_text: str
    ) -> NavAnswer | None:
        if not self.offers(op):
            return None
        character = Units.of(line_text[:column]).get(position_encoding(self.server))
        params = NavigateParams(
            op=op,
            uri=Path(path).as_uri(),
            position=Position(line=line - 1, character=character),
        )
        return await self._send(params)

    async def workspace_symbols(self, query: str) -> NavAnswer | None:
        if not self.offers("workspaceSymbols"):
            return None
        return await self._send(NavigateParams(op="workspaceSymbols", query=query))

    async def _send(self, params: NavigateParams) -> NavAnswer | None:
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.server.protocol.send_request_async(NAVIGATE, params)
        except TimeoutError:
            raise NavigationTimeout from None
        except Exception as exc:  # an error answer, or the client went away
            log.info("lantern/navigate %s: no answer (%s)", params.op, exc)
            return None
        return checked_answer(result)
