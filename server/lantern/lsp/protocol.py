"""pygls's `LanguageServerProtocol`, told Lantern's methods and made to answer bad messages.

Through public pygls 2.1.1 hooks only:

- `get_message_type` / `get_result_type` map Lantern's methods to their attrs
  types (`messages.py`), as lsprotocol's `METHOD_TO_TYPES` does for LSP's own, so
  pygls structures and checks their params and results.
- `structure_message`: pygls's own turns params that do not fit into a bare
  `JsonRpcInvalidParams()` raised out of the parser, which its read loop only
  logs: the client waits forever. Here the exception carries the request's id
  and says what is wrong (`question must be a non-empty string`); the read loop's
  error handler (`transport.py`) answers it. A reply to the server's own request
  that does not fit (`lantern/approve` answered with `{"action": 5}`) counts as no
  answer: a deny.
- `handle_message`: a JSON value that is no JSON-RPC 2.0 message (an array, an
  object without `"jsonrpc": "2.0"`) is answered with -32600 instead of raising
  out of pygls; a client's late answer to a prompt the server gave up on (timed
  out or cancelled) is dropped with one info line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from typing import Any

import cattrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

from lantern.lsp import messages
from lantern.shapes import camel

log = logging.getLogger(__name__)

#: What `reader.py` hands pygls in place of a frame it dropped (and already answered).
SKIPPED_METHOD = "$/lantern/skipped"
SKIPPED = b'{"jsonrpc": "2.0", "method": "$/lantern/skipped"}'


class Answered:
    """What a message that was already answered with an error structures to: ignored."""


def error_frame(msg_id: Any, code: int, message: str) -> bytes:
    """A Content-Length framed JSON-RPC error response."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    ).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _camel_path(path: str) -> str:
    """`$.params.history[0].work_done_token` → `history[0].workDoneToken`."""
    inner = path.removeprefix("$").removeprefix(".").removeprefix("params").lstrip(".")
    return ".".join(camel(part) for part in inner.split(".")) if inner else "params"


def _describe(exc: BaseException, _: type | None) -> str:
    if isinstance(exc, messages.ParamError):
        return f"must be {exc}"
    if isinstance(exc, KeyError):
        return "is required"
    return f"is not valid ({cattrs.v.format_exception(exc, _)})"


def invalid_params(exc: BaseException | None) -> JsonRpcInvalidParams:
    """-32602 with what is wrong: `history[0].answer must be a string`."""
    if exc is None:
        return JsonRpcInvalidParams()
    problems = []
    for line in cattrs.transform_error(exc, format_exception=_describe):
        what, _, path = line.rpartition(" @ ")
        problems.append(f"{_camel_path(path)} {what}")
    return JsonRpcInvalidParams("; ".join(problems) or "Invalid params")


def invalid_request(message: Any) -> tuple[Any, str] | None:
    """(id, why) for a JSON value that is no JSON-RPC 2.0 message; None for a message."""
    if isinstance(message, dict):  # pygls leaves an object without "jsonrpc" as it is
        version, msg_id = message.get("jsonrpc"), message.get("id")
    elif hasattr(message, "jsonrpc"):
        version, msg_id = message.jsonrpc, getattr(message, "id", None)
    else:
        return None, "expected a JSON object"
    if version == "2.0":
        return None
    valid_id = isinstance(msg_id, str | int) and not isinstance(msg_id, bool)
    return (msg_id if valid_id else None), '"jsonrpc" must be "2.0"'


class LanternProtocol(LanguageServerProtocol):
    # pygls wraps these two in `lru_cache`; plain methods here (a dict lookup is as cheap).
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        own = messages.MESSAGE_TYPES.get(method)
        return own if own is not None else super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        own = messages.RESULT_TYPES.get(method)
        return own if own is not None else super().get_result_type(method)

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer a message pygls will not see (or would not answer) with an error."""
        if self.writer is not None:
            self.writer.write(error_frame(msg_id, code, message))

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data or "error" in data:
            return super().structure_message(data)
        method = data.get("method")
        if method == SKIPPED_METHOD:
            return Answered()
        own = messages.MESSAGE_TYPES.get(method) if isinstance(method, str) else None
        try:
            if own is not None:  # structured here: pygls would log a traceback first
                return self._converter.structure(data, own)
            return super().structure_message(data)
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc, JsonRpcException) else exc
            error: JsonRpcException = (
                invalid_params(cause) if cause is not None else JsonRpcInvalidParams()
            )
            if "method" not in data and "id" in data and "result" in data:  # our reply
                log.warning("ignoring a reply that does not fit its request: %s", error.message)
                return JsonRPCResponseMessage(id=data["id"], jsonrpc="2.0", result=None)
            if "method" not in data:
                error = JsonRpcInvalidRequest("Invalid Request: neither a request nor a response")
            if "id" in data or "method" not in data:
                self.reply_error(data.get("id"), error.code, error.message)
            else:
                log.warning("ignoring a %s notification: %s", method, error.message)
            return Answered()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Answered):
            return
        problem = invalid_request(message)
        if problem is not None:
            msg_id, why = problem
            self.reply_error(msg_id, JsonRpcInvalidRequest.CODE, f"Invalid Request: {why}")
            return
        try:
            super().handle_message(message)
        except (concurrent.futures.InvalidStateError, asyncio.InvalidStateError):
            # The client answered a request the server already gave up on (a prompt that
            # timed out, or whose question was cancelled); nothing waits for the answer.
            log.info("ignoring a late reply to a request that was given up")
