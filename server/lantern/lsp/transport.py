"""The stdio transport of `lantern serve`: pygls's own read loop, with two pieces of ours.

`pygls.io_.run_async` reads the frames and hands each body to the protocol
(`protocol.LanternProtocol`), as pygls's `start_io` does, but:

- **under it**, `reader.BoundedReader` instead of pygls's `StdinAsyncReader`,
  which trusts `Content-Length` (the upstream limit is named in `reader.py`);
- **over it**, `wire.SafeWriter`, pygls's `StdoutWriter` that also replaces lone
  surrogates, which pygls writes as `\\udXXX` escapes strict clients refuse.

A body that is not JSON (or nests too deeply to parse) reaches the loop's error
handler, which answers -32700 where pygls would only log it.

**stdout is JSON-RPC only.** `sys.stdout` is pointed at stderr before anything
else runs, logs go to stderr (warnings also to the client as `window/logMessage`).

**Exit.** At `exit` the process ends at once: exit code 0 after `shutdown`, else 1
(LSP), or the same at end of input. Logs are flushed, and the audit log needs
nothing (each record is written with its own `os.write`), so `os._exit` skips
only the interpreter's teardown of every loaded module, which took seconds (an
editor such as Emacs's eglot kills a server that is not gone 0.1 s after `exit`),
and the wait for threads still reading stdin or a file. A question still being
answered ends with the process, as when the editor kills it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.server import LanguageServer

from lantern import exit_codes
from lantern.lsp.protocol import LanternProtocol
from lantern.lsp.reader import PARSE_ERROR, BoundedReader
from lantern.lsp.wire import SafeWriter

log = logging.getLogger(__name__)


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


def _end(code: int) -> NoReturn:
    """Flush the logs and end the process now (see the module docstring)."""
    log.info("language server stopped (exit %d)", code)
    logging.shutdown()
    for stream in (sys.stderr, sys.__stdout__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def serve_stdio(make_server: Callable[[], LanguageServer]) -> NoReturn:
    """Run the server `make_server` builds on stdin/stdout until `exit` or end of input.

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
    protocol = server.protocol
    assert isinstance(protocol, LanternProtocol)
    protocol.set_writer(SafeWriter(stdout))
    logging.getLogger("lantern").addHandler(_ClientLog(server))
    # pygls keeps "shutdown was requested" private; this handler records the same fact.
    shutdown = threading.Event()

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: Any) -> None:
        shutdown.set()

    @server.feature(types.EXIT)  # pygls calls this before its own exit handler
    def on_exit(params: Any) -> None:
        _end(exit_codes.OK if shutdown.is_set() else exit_codes.NO_SHUTDOWN)

    def on_error(exc: Exception, _source: Any) -> None:
        if isinstance(exc, RecursionError):
            protocol.reply_error(None, PARSE_ERROR, "Parse error: the body nests too deeply")
        elif isinstance(exc, ValueError) and not isinstance(exc, JsonRpcException):
            protocol.reply_error(None, PARSE_ERROR, "Parse error: the body is not valid JSON")
        else:
            log.error("could not handle a message", exc_info=exc)

    # The loop's own logger only repeats what `on_error` says, with a traceback.
    quiet = logging.getLogger("lantern.lsp.read_loop")
    quiet.setLevel(logging.CRITICAL)
    reader = BoundedReader(sys.stdin.fileno(), protocol.reply_error)
    try:
        asyncio.run(run_async(threading.Event(), reader, protocol, quiet, on_error))
    except (KeyboardInterrupt, BrokenPipeError):
        _end(exit_codes.NO_SHUTDOWN)
    _end(exit_codes.OK if shutdown.is_set() else exit_codes.NO_SHUTDOWN)
