"""The stdio transport of `lantern serve`: bytes in, pygls's protocol, bytes out.

pygls's own `start_io` is not used, for these reasons (pygls 2.1.1):

- **It trusts `Content-Length`.** It reads whatever length a header claims,
  unbounded, and only recognises exactly `Content-Length: N\\r\\n`; a lying,
  missing or huge length makes it lose framing, stop answering or run out of
  memory. `framing.py` splits the stream itself, with caps and an idle
  timeout, and finds the next header after garbage.
- **Malformed frames get an answer.** pygls logs a body it cannot parse and
  says nothing; here the client gets the JSON-RPC error (-32700 parse error,
  -32600 invalid request, or pygls's own error for params it cannot
  structure, with the request's id), and the server keeps serving.
- **Each body is parsed once.** pygls parses the bytes with its
  `structure_message` as json's `object_hook`. `framing.py` has already
  parsed them to judge the message, so `structure` applies that same public
  hook to the parsed value, innermost object first, as the parser would.
- **Late replies are harmless.** A client's answer to a prompt the server
  already gave up on (timed out, or its question cancelled) makes pygls
  raise `InvalidStateError`; it is dropped with one info line.
- **stdout is JSON-RPC only.** `sys.stdout` is pointed at stderr before
  anything else runs, logs go to stderr (warnings also to the client as
  `window/logMessage`), and every frame passes `wire.SafeWriter`.

The loop ends at `exit` (pygls's exit handler ends the process: code 0 after
`shutdown`, else 1) or at end of input (the same codes). The client's view of
all this is in docs/protocol.md#framing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from lantern import exit_codes
from lantern.lsp.framing import StdinChunks, read_messages
from lantern.lsp.wire import SafeWriter

log = logging.getLogger(__name__)

Server = TypeVar("Server", bound=LanguageServer)


def structure(value: Any, hook: Callable[[dict[str, Any]], Any]) -> Any:
    """`value` with `hook` applied to every JSON object, innermost first and in document
    order, exactly as json's `object_hook` would have been while parsing. Works in place
    on a freshly parsed value, without recursion, so any depth the parser took is fine."""
    root: list[Any] = [value]
    # (container, its (key, child) pairs still to visit, its parent, its key in the parent)
    stack: list[tuple[Any, Iterator[tuple[Any, Any]], Any, Any]] = [
        (root, enumerate(root), None, None)
    ]
    while stack:
        node, children, parent, slot = stack[-1]
        for key, child in children:
            if isinstance(child, dict):
                stack.append((child, iter(child.items()), node, key))
                break
            if isinstance(child, list):
                stack.append((child, enumerate(child), node, key))
                break
        else:
            stack.pop()
            if isinstance(node, dict):
                parent[slot] = hook(node)  # replaces a value, never a key: iteration is safe
    return root[0]


class PyglsConnection:
    """The one adapter between `framing.py` and pygls's protocol object.

    It uses only public pygls 2.1.1 API: `protocol.set_writer`,
    `protocol.structure_message`, `protocol.handle_message` and a `shutdown`
    feature handler. pygls keeps "shutdown was requested" in the private
    `JsonRPCProtocol._shutdown`; instead of reading it, the handler below
    records the same fact. pygls's `JsonRPCServer._stop_event` (what its own
    loops poll) is not needed: this loop ends at `exit` or end of input.
    """

    def __init__(self, server: LanguageServer, writer: SafeWriter) -> None:
        self.protocol = server.protocol
        self.writer = writer
        self.shutdown_requested = False
        self.protocol.set_writer(writer)

        @server.feature(types.SHUTDOWN)
        def on_shutdown(params: Any) -> None:
            self.shutdown_requested = True

    def reply_error(self, code: int, message: str, msg_id: Any) -> None:
        """A JSON-RPC error written straight to the client (pygls never saw the message)."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        ).encode("utf-8")
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def deliver(self, raw: dict[str, Any]) -> None:
        """Hand one parsed, well-formed JSON-RPC message to pygls."""
        is_request = "method" in raw and "id" in raw
        msg_id = raw.get("id")
        try:
            message = structure(raw, self.protocol.structure_message)
        except JsonRpcException as exc:
            if is_request:
                self.reply_error(exc.code, exc.message or "Invalid params", msg_id)
            return
        try:
            self.protocol.handle_message(message)
        except (concurrent.futures.InvalidStateError, asyncio.InvalidStateError):
            # The client answered a request the server already gave up on (a prompt that
            # timed out, or whose question was cancelled); nothing waits for the answer.
            log.info("ignoring a late reply to a request that was given up")


class _ClientLog(logging.Handler):
    """Warnings and errors also go to the client as `window/logMessage`."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy or self.server.protocol.writer is None:
            return
        self._busy = True
        try:
            level = (
                types.MessageType.Error
                if record.levelno >= logging.ERROR
                else types.MessageType.Warning
            )
            self.server.window_log_message(
                types.LogMessageParams(type=level, message=self.format(record))
            )
        except Exception:
            pass
        finally:
            self._busy = False


def serve_stdio(make_server: Callable[[], Server]) -> int:
    """Run the server `make_server` builds on stdin/stdout; returns the exit code.

    The server is built only after stdout is reserved for JSON-RPC and logging goes to
    stderr, so nothing it does while starting can corrupt the stream.
    """
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the JSON-RPC stream
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="lantern %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = make_server()
    connection = PyglsConnection(server, SafeWriter(stdout))
    logging.getLogger("lantern").addHandler(_ClientLog(server))

    async def run() -> None:
        chunks = StdinChunks(sys.stdin.fileno(), asyncio.get_running_loop())
        await read_messages(chunks, connection.deliver, connection.reply_error)

    code = exit_codes.OK
    try:
        asyncio.run(run())
        code = exit_codes.OK if connection.shutdown_requested else exit_codes.NO_SHUTDOWN
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else exit_codes.OK
    except (KeyboardInterrupt, BrokenPipeError):
        code = exit_codes.NO_SHUTDOWN
    log.info("language server stopped (exit %d)", code)
    return code
