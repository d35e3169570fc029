"""The tools' `Navigator` over LSP: `lantern/navigate` to a client that offers the op.

Sent only when the client's `initialize` declared the op in
`capabilities.experimental.lantern.navigation` (a list of op names). The position goes
out in the negotiated position encoding. The client's answer is untrusted: it is checked
here field by field (anything that does not fit is no answer, or a dropped entry), at
most `MAX_LOCATIONS` entries are looked at, and a `file:` URI becomes a file-system path
(any other scheme: no path). What those paths may show is decided by the tools
(`tools/navigation/located.py`). No answer within `TIMEOUT_S` is a timeout; an error
answer is no answer.
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
from lantern.tools.navigator import NavAnswer, NavigationTimeout, NavLocation

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
MAX_LOCATIONS = 2000  # entries of one answer looked at; the rest are counted, not read
MAX_URI_CHARS = 4096
# Of `source`, kept as sent: the tool redacts it and only then cuts it to what is shown.
MAX_SOURCE_CHARS = 4096


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


def checked_answer(result: Any) -> NavAnswer | None:
    """The client's result as a `NavAnswer`, or None when it is none (or not an object)."""
    if not isinstance(result, dict):
        return None
    source = result.get("source")
    name = source[:MAX_SOURCE_CHARS] if isinstance(source, str) and source.strip() else "client"
    entries = result.get("locations")
    if entries is None:
        return NavAnswer(name)
    if not isinstance(entries, list):
        return None
    locations: list[NavLocation] = []
    malformed = 0
    for entry in entries[:MAX_LOCATIONS]:
        found = _location(entry)
        if found is None:
            malformed += 1
        else:
            locations.append(found)
    return NavAnswer(name, locations, malformed, max(len(entries) - MAX_LOCATIONS, 0))


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
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.server.protocol.send_request_async(NAVIGATE, params)
        except TimeoutError:
            raise NavigationTimeout from None
        except Exception as exc:  # an error answer, or the client went away
            log.info("lantern/navigate %s: no answer (%s)", op, exc)
            return None
        return checked_answer(result)
