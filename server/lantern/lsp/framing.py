"""Splitting stdin into JSON-RPC messages, without trusting `Content-Length`.

Why this exists (pygls's own reader does not do it) is in `transport.py`. This
module knows nothing of pygls: it keeps its own byte buffer and

- accepts CRLF or bare LF header lines, and finds `Content-Length` even when
  garbage precedes it on the same line (the tail of a short-counted body);
- caps a message at 64 MiB and a header block at 8 KiB, so memory stays bounded;
- answers a body that is not JSON (or nests too deeply to parse) with a
  JSON-RPC parse error (-32700) and a JSON value that is not a request,
  notification or response with "invalid request" (-32600), as JSON-RPC 2.0 says;
- gives up on a body that stops arriving (no byte for `BODY_IDLE_SECONDS`)
  instead of waiting forever, and re-scans what it did get for the next
  header, so a following valid message is still answered;
- parses each body once and hands on the parsed message, not the bytes.

What a client sees is in docs/protocol.md#framing.
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

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
BODY_IDLE_SECONDS = 2.0
READ_CHUNK = 1 << 16

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,20})", re.IGNORECASE)
_LENGTH_START = re.compile(rb"content-length", re.IGNORECASE)


class StdinChunks:
    """Reads a file descriptor on a daemon thread and hands chunks to the loop.

    A queue (rather than a cancellable executor read) means a timed-out wait
    never loses bytes that were already read.
    """

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._fd = fd
        self._loop = loop
        threading.Thread(target=self._pump, name="lantern-stdin", daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, READ_CHUNK)
            except OSError:
                chunk = b""
            self._loop.call_soon_threadsafe(self.queue.put_nowait, chunk)
            if not chunk:
                return

    async def read(self, timeout: float | None = None) -> bytes | None:
        """The next chunk; b"" at end of input; None if `timeout` passed first."""
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None


def _resync(buf: bytearray, start: int) -> None:
    """Drop bytes up to the next `Content-Length` at or after `start`."""
    match = _LENGTH_START.search(buf, start)
    if match is not None:
        del buf[: match.start()]
    else:
        del buf[: max(0, len(buf) - 16)]  # keep a possibly split header name


def classify(message: Any) -> tuple[int, str, Any] | None:
    """An (error code, message, id) to answer for a JSON value that is no JSON-RPC message."""
    if not isinstance(message, dict):
        return INVALID_REQUEST, "Invalid Request: expected a JSON object", None
    msg_id = message.get("id")
    valid_id = msg_id is None or (isinstance(msg_id, str | int) and not isinstance(msg_id, bool))
    reply_id = msg_id if valid_id else None
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', reply_id
    if not valid_id:
        return INVALID_REQUEST, "Invalid Request: bad id", None
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, "Invalid Request: method must be a string", reply_id
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return INVALID_REQUEST, "Invalid Request: params must be an object", reply_id
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return INVALID_REQUEST, "Invalid Request: neither a request nor a response", reply_id


async def read_messages(
    chunks: StdinChunks,
    deliver: Callable[[dict[str, Any]], None],
    reply_error: Callable[[int, str, Any], None],
) -> None:
    """Split the byte stream into messages and deliver each, parsed; returns at end of input."""
    buf = bytearray()
    eof = False
    while True:
        match = _HEADER_END.search(buf)
        if match is None:
            if len(buf) > MAX_HEADER_BYTES:
                log.warning("dropping %d bytes that are not a message header", len(buf))
                _resync(buf, 1)
                continue
            if eof:
                return
            chunk = await chunks.read()
            if not chunk:
                eof = True
            buf += chunk or b""
            continue
        header = bytes(buf[: match.start()])
        body_start = match.end()
        lengths = _LENGTH.findall(header)
        if not lengths:
            log.warning("skipping a header block without Content-Length")
            del buf[:body_start]
            continue
        length = int(lengths[-1])
        if length > MAX_MESSAGE_BYTES:
            log.error("refusing a %d-byte message (limit %d)", length, MAX_MESSAGE_BYTES)
            reply_error(PARSE_ERROR, f"Parse error: message over {MAX_MESSAGE_BYTES} bytes", None)
            del buf[:body_start]
            _resync(buf, 0)
            continue
        while len(buf) - body_start < length and not eof:
            chunk = await chunks.read(BODY_IDLE_SECONDS)
            if chunk is None:
                break  # the body stopped arriving: the length lied
            if not chunk:
                eof = True
            buf += chunk
        if len(buf) - body_start < length:
            got = len(buf) - body_start
            log.warning("incomplete message: Content-Length %d, got %d bytes", length, got)
            reply_error(
                PARSE_ERROR,
                f"Parse error: body shorter than Content-Length ({got} < {length})",
                None,
            )
            del buf[:body_start]
            _resync(buf, 0)
            continue
        body = bytes(buf[body_start : body_start + length])
        del buf[: body_start + length]
        try:
            message = json.loads(body)
        except RecursionError:
            reply_error(PARSE_ERROR, "Parse error: the body nests too deeply", None)
            continue
        except (ValueError, UnicodeDecodeError):
            reply_error(PARSE_ERROR, "Parse error: the body is not valid JSON", None)
            # A length that over-counted swallowed the next header: give it back.
            again = _LENGTH_START.search(body, 1)
            if again is not None:
                buf[0:0] = body[again.start() :]
            continue
        problem = classify(message)
        if problem is not None:
            reply_error(*problem)
            continue
        deliver(message)
