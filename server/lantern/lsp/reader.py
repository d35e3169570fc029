"""Stdin for pygls's read loop, without trusting `Content-Length`.

Upstream limit (pygls 2.1.1, `pygls.io_.run_async` with `StdinAsyncReader`): the
loop recognises only an exact `Content-Length: N\\r\\n` line and then reads N
bytes, unbounded and without a deadline. A huge length makes it allocate without
limit, a length larger than the body makes it wait forever (and swallow the next
message), a bare-LF header or garbage before the header makes it lose framing
for good. `BoundedReader` is a pygls `AsyncReader` (`readline`, `readexactly`)
that sits under that loop and hands it only well-formed frames:

- it reads header blocks itself (CRLF or bare LF, any case, garbage before
  `Content-Length` on the same line) and gives pygls one canonical
  `Content-Length` line and the blank line;
- it caps a message at 64 MiB and a header block at 8 KiB, so memory stays bounded;
- it gives up on a body that stops arriving (no byte for `BODY_IDLE_SECONDS`),
  and gives back a next header that a too-large length swallowed, so the
  following message is still answered.

A frame it drops is answered with -32700 (id null) through `reply`, and pygls gets
`SKIPPED` in its place, a notification `LanternProtocol` ignores. Everything about
a body that did arrive whole (JSON, JSON-RPC, params) is pygls's and
`protocol.py`'s business. What a client sees is in docs/protocol.md#framing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any

from lantern.lsp.protocol import SKIPPED

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
BODY_IDLE_SECONDS = 2.0
READ_CHUNK = 1 << 16
PARSE_ERROR = -32700

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,20})", re.IGNORECASE)
_LENGTH_START = re.compile(rb"content-length", re.IGNORECASE)

Reply = Callable[[Any, int, str], None]


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


class BoundedReader:
    """pygls's `AsyncReader` over a file descriptor, read by a daemon thread.

    A queue (rather than a cancellable executor read) means a timed-out wait never
    loses bytes that were already read, and no executor thread blocks the exit.
    """

    def __init__(self, fd: int, reply: Reply) -> None:
        self._fd = fd
        self._reply = reply
        self._queue: asyncio.Queue[bytes] | None = None
        self._buf = bytearray()
        self._eof = False
        self._lines: list[bytes] = []
        self._skip = False

    # -- bytes in -------------------------------------------------------------------

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes]) -> None:
        while True:
            try:
                chunk = os.read(self._fd, READ_CHUNK)
            except OSError:
                chunk = b""
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            if not chunk:
                return

    async def _fill(self, timeout: float | None) -> bool:
        """Append the next chunk to the buffer; False if `timeout` passed first."""
        if self._queue is None:
            self._queue = asyncio.Queue()
            args = (asyncio.get_running_loop(), self._queue)
            pump = threading.Thread(target=self._pump, args=args, name="lantern-stdin", daemon=True)
            pump.start()
        try:
            chunk = await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return False
        self._eof = not chunk
        self._buf += chunk
        return True

    def _resync(self, start: int) -> None:
        """Drop bytes up to the next `Content-Length` at or after `start`."""
        match = _LENGTH_START.search(self._buf, start)
        if match is not None:
            del self._buf[: match.start()]
        else:
            del self._buf[: max(0, len(self._buf) - 16)]  # keep a possibly split header name

    def _drop(self, why: str) -> bytes:
        log.warning("dropping a message: %s", why)
        self._reply(None, PARSE_ERROR, f"Parse error: {why}")
        return SKIPPED

    # -- pygls's AsyncReader ----------------------------------------------------------

    async def readline(self) -> bytes:
        if not self._lines:
            length = await self._header()
            if length is None:
                return b""  # end of input: pygls's loop ends
            if length > MAX_MESSAGE_BYTES:
                self._drop(f"message over {MAX_MESSAGE_BYTES} bytes")
                self._resync(0)
                self._skip = True
                length = len(SKIPPED)
            self._lines = [b"Content-Length: %d\r\n" % length, b"\r\n"]
        return self._lines.pop(0)

    async def readexactly(self, n: int) -> bytes:
        if self._skip:
            self._skip = False
            return SKIPPED
        while len(self._buf) < n and not self._eof:
            if not await self._fill(BODY_IDLE_SECONDS):
                break  # the body stopped arriving: the length lied
        if len(self._buf) < n:
            got = len(self._buf)
            self._resync(0)
            return self._drop(f"body shorter than Content-Length ({got} < {n})")
        body = bytes(self._buf[:n])
        del self._buf[:n]
        again = _LENGTH_START.search(body, 1)
        if again is not None and not _is_json(body):
            # A length that over-counted swallowed the next header: give it back.
            self._buf[0:0] = body[again.start() :]
            return self._drop("Content-Length counts past the end of the body")
        return body

    async def _header(self) -> int | None:
        """The length of the next header block that names one; None at end of input."""
        while True:
            match = _HEADER_END.search(self._buf)
            if match is None:
                if len(self._buf) > MAX_HEADER_BYTES:
                    log.warning("dropping %d bytes that are not a message header", len(self._buf))
                    self._resync(1)
                elif self._eof:
                    return None
                else:
                    await self._fill(None)
                continue
            header = bytes(self._buf[: match.start()])
            del self._buf[: match.end()]
            lengths = _LENGTH.findall(header)
            if lengths:
                return int(lengths[-1])
            log.warning("skipping a header block without Content-Length")
