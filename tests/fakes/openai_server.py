"""A scripted, fake OpenAI-compatible HTTP server for tests.

The server listens on real sockets, on 127.0.0.1 only, and speaks enough of the OpenAI
REST API (``POST /v1/chat/completions``, streaming and not, and ``GET /v1/models``) that
the real ``openai`` client, ``OpenAI`` and ``AsyncOpenAI``, talks to it unmodified.

Replies come from a script of :class:`Turn` objects (or plain dicts with the same keys,
so that scripts can live in JSON files). Each ``POST /v1/chat/completions`` consumes the
next turn, including turns that inject a fault, so a client's retry gets the turn after
it. Once the script is used up, the server answers HTTP 500 with
``{"error": {"message": "fake server: no scripted turn left", "type": "server_error"}}``.

To replay a real server's dialect, a turn's ``raw`` body (SSE text, or a JSON error body
with ``raw_status``) is written verbatim; given as a list, each element is a separate
socket write, so events and tags can be split wherever a test wants::

    Turn(raw=['data: {"choices":[{"index":0,"delta":{"content":"<thi', 'nk>"}}]}\n\n',
              "data: [DONE]\n\n"])
    Turn(raw='[{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT"}}]',
         raw_status=400)

A server's other endpoints (llama.cpp's ``/props``, Ollama's ``/api/ps``, a model list
with more fields) are replayed the same way from ``routes``, by method and path; the
bytes each server sends about its context window are in ``tests/fakes/window_answers.py``.

Python use::

    with FakeOpenAI([Turn(content="Hello there")]) as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
        ...
        assert fake.chat_requests()[0]["model"] == "fake-model"

Command-line use (for tests written in other languages)::

    python -m tests.fakes.openai_server --script turns.json [--port 0] \
        [--record requests.jsonl]

prints exactly one line, ``{"base_url": "http://127.0.0.1:PORT/v1", "port": PORT}``, to
stdout and serves until SIGTERM or SIGINT. The script file is ``{"turns": [...]}``.

Only the standard library is used.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import FrameType, TracebackType
from typing import Any, Self, cast
from urllib.parse import unquote, urlsplit

from tests.fakes import tokenizer

__all__ = [
    "FAULTS",
    "HOST",
    "NO_TURN_LEFT_MESSAGE",
    "FakeOpenAI",
    "RecordedRequest",
    "Turn",
    "load_script",
    "main",
]

HOST = "127.0.0.1"
"""The only address the fake server ever binds."""

NO_TURN_LEFT_MESSAGE = "fake server: no scripted turn left"

FAULTS = frozenset({"status", "hang", "cut", "stall"})
"""Fault kinds a :class:`Turn` can inject."""

_CHAT_ROUTE = "/chat/completions"
_POLL_S = 0.05

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "requests",
}
_ERROR_CODES: dict[int, str] = {
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}
_ERROR_MESSAGES: dict[int, str] = {
    400: "fake server: bad request",
    401: "Incorrect API key provided (fake server).",
    403: "fake server: permission denied",
    404: "The model does not exist or you do not have access to it (fake server).",
    429: "Rate limit reached (fake server). Please try again later.",
    500: "The server had an error while processing your request (fake server).",
    502: "fake server: bad gateway",
    503: "fake server: service unavailable",
}


# --------------------------------------------------------------------------- script


@dataclass
class Turn:
    """One scripted reply to a ``POST /v1/chat/completions`` request.

    Plain dicts with the same keys are accepted everywhere a ``Turn`` is
    (see :meth:`from_dict`); ``"code"`` is accepted as an alias of ``"error_code"``.
    """

    content: str = ""
    """Assistant text; streamed in several small chunks."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """``{"id": "call_1", "name": "read_file", "arguments": {...} | str}`` each. A dict is
    JSON-encoded; a str is sent as it is (to script malformed arguments). The OpenAI shape
    ``{"id": ..., "function": {"name": ..., "arguments": ...}}`` is accepted too."""
    finish_reason: str | None = None
    """Defaults to ``"tool_calls"`` when there are tool calls, else ``"stop"``."""
    usage: dict[str, Any] | None = None
    """Defaults to rough word counts. Streamed (as a last chunk with empty ``choices``)
    only when the request asked for ``stream_options.include_usage``."""
    fault: str | None = None
    """``None`` or one of :data:`FAULTS`:

    - ``"status"``: answer HTTP ``status`` with ``headers`` and an OpenAI-shaped JSON
      error body (``error_message``, ``error_type``, ``error_code``);
    - ``"hang"``: read the request, send nothing until the client disconnects or the
      server stops;
    - ``"cut"``: send the 200 header and some of the reply, then close the connection
      without finishing the body (no terminating chunk, no ``[DONE]``);
    - ``"stall"``: send the 200 header and some of the reply, then send nothing more and
      keep the connection open until the client disconnects or the server stops.
    """
    status: int | None = None
    """HTTP status for ``fault="status"`` (default 500). Setting ``status`` without a
    ``fault`` implies ``fault="status"``."""
    headers: dict[str, Any] = field(default_factory=dict)
    """Extra response headers for a ``"status"`` fault, e.g. ``{"Retry-After": "1"}``."""
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    delay: float = 0.0
    """Seconds to wait before the first byte of the response."""
    chunk_delay: float = 0.0
    """Seconds to wait between stream chunks."""
    interleave_tool_calls: bool = False
    """Stream the deltas of several tool calls round-robin instead of one call after
    another."""
    expect: dict[str, Any] | None = None
    """Reserved; ignored."""
    raw: str | bytes | list[str | bytes] | None = None
    """Replay a real server byte for byte: the response body, written verbatim (``str`` as
    UTF-8, ``bytes`` as they are) instead of anything built from the fields above. A list
    is written one element per socket write and flush (``chunk_delay`` apart), so an SSE
    event, a ``<think>`` tag or a JSON object can be split across TCP writes exactly where
    a test wants it. Requests are recorded as usual. ``fault`` may be ``"cut"`` (close
    after the last element, no terminating chunk) or ``"stall"`` (then send nothing
    more)."""
    raw_status: int = 200
    """HTTP status sent with ``raw``."""
    raw_headers: dict[str, Any] = field(default_factory=dict)
    """Extra response headers sent with ``raw``."""
    raw_content_type: str | None = None
    """``Content-Type`` for ``raw``. Default: ``application/json`` for an error status or
    a body that starts with ``{`` or ``[``, else ``text/event-stream; charset=utf-8``."""
    raw_chunked: bool | None = None
    """Send ``raw`` with ``Transfer-Encoding: chunked`` (one HTTP chunk per element) or
    with ``Content-Length``. Default: chunked for an event stream, a length for JSON,
    as servers do."""

    def __post_init__(self) -> None:
        if self.fault is None and self.status is not None:
            self.fault = "status"
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; expected one of {sorted(FAULTS)}")
        if self.fault == "status" and self.status is None:
            self.status = 500
        if not isinstance(self.content, str):
            raise TypeError("Turn.content must be a str")
        if self.raw is not None:
            if not isinstance(self.raw, str | bytes) and not (
                isinstance(self.raw, list) and all(isinstance(p, str | bytes) for p in self.raw)
            ):
                raise TypeError("Turn.raw must be str or bytes, or a list of them")
            if self.fault not in (None, "cut", "stall"):
                raise ValueError("Turn.raw replays a whole reply: only 'cut' or 'stall' mix")
        for index, call in enumerate(self.tool_calls):
            _normalize_tool_call(index, call)  # validate early

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        """Build a turn from a JSON-style dict; unknown keys raise ``ValueError``."""
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = "error_code" if key == "code" else key
            if name not in known:
                raise ValueError(f"unknown Turn key {key!r}")
            kwargs[name] = value
        if kwargs.get("tool_calls") is None:
            kwargs.pop("tool_calls", None)
        for key in ("headers", "raw_headers"):
            if kwargs.get(key) is None:
                kwargs.pop(key, None)
        return cls(**kwargs)

    @classmethod
    def coerce(cls, turn: Turn | Mapping[str, Any]) -> Turn:
        return turn if isinstance(turn, Turn) else cls.from_dict(turn)

    def raw_parts(self) -> list[bytes]:
        """The ``raw`` body as the separate writes to make (empty parts dropped)."""
        parts = [self.raw] if isinstance(self.raw, str | bytes) else list(self.raw or [])
        return [p.encode("utf-8") if isinstance(p, str) else p for p in parts if p]

    def raw_content_type_or_default(self) -> str:
        if self.raw_content_type is not None:
            return self.raw_content_type
        body = b"".join(self.raw_parts()).lstrip()
        if self.raw_status != 200 or body[:1] in (b"{", b"["):
            return "application/json"
        return "text/event-stream; charset=utf-8"

    def effective_finish_reason(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    def normalized_tool_calls(self) -> list[tuple[str, str, str]]:
        """``(id, name, arguments-as-sent)`` for each tool call."""
        return [_normalize_tool_call(i, call) for i, call in enumerate(self.tool_calls)]


def _normalize_tool_call(index: int, call: Mapping[str, Any]) -> tuple[str, str, str]:
    if not isinstance(call, Mapping):
        raise TypeError(f"tool call {index} must be a dict, not {type(call).__name__}")
    function = call.get("function")
    source: Mapping[str, Any] = function if isinstance(function, Mapping) else call
    name = source.get("name")
    if not isinstance(name, str):
        raise ValueError(f"tool call {index} needs a str 'name'")
    arguments = source.get("arguments", {})
    args_text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call_id = call.get("id")
    if call_id is None:
        call_id = f"call_{index + 1}"
    return str(call_id), name, args_text


def load_script(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a script file: ``{"turns": [...]}`` (a bare list of turns is accepted too).

    Optional keys: ``"models"`` (list of model ids), ``"reject_stream_options"`` (true, or
    a raw turn) and ``"reject_tools"`` (a raw turn); see :class:`FakeOpenAI`.
    Returns a dict with ``turns`` as :class:`Turn` objects.
    """
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, list):
        data = {"turns": data}
    if not isinstance(data, dict):
        raise ValueError(f"{os.fspath(path)}: expected an object with a 'turns' list")
    turns = data.get("turns") or []
    if not isinstance(turns, list):
        raise ValueError(f"{os.fspath(path)}: 'turns' must be a list")
    result: dict[str, Any] = dict(data)
    result["turns"] = [Turn.coerce(t) for t in turns]
    return result


@dataclass
class RecordedRequest:
    """One HTTP request the fake server received."""

    method: str
    path: str
    """The request target as sent, e.g. ``/v1/chat/completions``."""
    headers: dict[str, str]
    """Header names are lower-cased."""
    body: Any
    """The body parsed as JSON, or ``None`` (empty or not JSON)."""
    raw: str
    """The body as text (UTF-8, undecodable bytes replaced)."""

    @property
    def raw_body(self) -> str:
        return self.raw

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "raw": self.raw,
        }


# --------------------------------------------------------------------------- helpers


def _error_body(
    message: str, error_type: str | None, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def _split_text(text: str, parts: int = 3) -> list[str]:
    """Split ``text`` into up to ``parts`` non-empty pieces of similar length."""
    if len(text) <= 1:
        return [text]
    parts = min(parts, len(text))
    size, extra = divmod(len(text), parts)
    pieces: list[str] = []
    start = 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _split_content(text: str) -> list[str]:
    """Pieces to stream: one per word (whitespace attached), or ~3 pieces if short."""
    if not text:
        return []
    words = re.findall(r"\s*\S+\s*|\s+", text)
    return words if len(words) >= 3 else _split_text(text, 3)


def _count_words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_count_words(v) for v in value)
    if isinstance(value, dict):
        return sum(
            _count_words(v) for k, v in value.items() if k in ("text", "content", "arguments")
        ) + sum(_count_words(v) for k, v in value.items() if k in ("tool_calls", "function"))
    return 0


def _default_usage(
    request: Mapping[str, Any], turn: Turn, window: int | None = None
) -> dict[str, Any]:
    """What a server counts: words, or, with a `window`, the prompt as Ollama counts it
    (`prompt_eval_count`: the tokens it kept after cutting the prompt to its window)."""
    if window is None:
        prompt = max(1, _count_words(request.get("messages", [])))
    else:
        sent = tokenizer.count_request(request.get("messages", []), request.get("tools"))
        prompt = min(sent, window)
    completion = len(turn.content.split()) + sum(
        max(1, len(args.split())) for _, _, args in turn.normalized_tool_calls()
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion_id() -> str:
    return f"chatcmpl-fake-{time.monotonic_ns():x}"


# --------------------------------------------------------------------------- HTTP server


class _Stop(Exception):
    """Internal: the server is stopping or the client went away."""


class _Server(HTTPServer):
    """HTTPServer on 127.0.0.1 with one tracked daemon thread per connection."""

    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, port: int, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        super().__init__((HOST, port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn); skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name = HOST
        self.server_port = int(self.server_address[1])

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name=f"fake-openai-conn-{self.server_port}",
            daemon=True,
        )
        with self._lock:
            if isinstance(request, socket.socket):
                self._connections.add(request)
            self._threads.add(thread)
        thread.start()

    def _serve_connection(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            with self._lock:
                self._threads.discard(threading.current_thread())

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._lock:
            if isinstance(request, socket.socket):
                self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """Stay silent: clients dropping connections is what these tests are about."""

    def abort_connections(self) -> None:
        """Shut down every open connection so that blocked handlers return."""
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def join_threads(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per SSE event must not wait for an ACK
    server_version = "FakeOpenAI/1.0"

    def version_string(self) -> str:
        return self.server_version

    # -- plumbing ------------------------------------------------------------------

    @property
    def _srv(self) -> _Server:
        return cast(_Server, self.server)

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing."""

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (_Stop, OSError):
            self.close_connection = True

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size_line = self.rfile.readline(65537)
                if not size_line:
                    raise _Stop
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline(65537)
        length_text = self.headers.get("Content-Length")
        length = int(length_text) if length_text else 0
        return self.rfile.read(length) if length > 0 else b""

    def _wait(self, seconds: float) -> None:
        """Sleep, but give up (raise _Stop) as soon as the server stops."""
        if seconds > 0 and self._srv.stopping.wait(seconds):
            raise _Stop

    def _wait_for_disconnect(self) -> None:
        """Block until the client closes the connection or the server stops."""
        self.close_connection = True
        sock = self.connection
        while not self._srv.stopping.is_set():
            try:
                readable, _, _ = select.select([sock], [], [], _POLL_S)
                if readable and not sock.recv(65536):
                    return
            except (OSError, ValueError):
                return

    def _abort(self) -> None:
        """Close the connection abruptly, mid-response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, Any] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(str(name), str(value))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    # -- routing -------------------------------------------------------------------

    def _dispatch(self) -> None:
        try:
            raw_bytes = self._read_body()
        except ValueError:
            self.close_connection = True
            self._send_json(
                400, _error_body("fake server: malformed body", "invalid_request_error")
            )
            return
        raw = raw_bytes.decode("utf-8", errors="replace")
        body: Any = None
        if raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        fake = self._srv.fake
        fake._record(
            RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw=raw,
            )
        )
        route = urlsplit(self.path).path.rstrip("/")
        if fake.redirect_to is not None:
            tail = route[3:] if route.startswith("/v1") else route
            self.close_connection = True
            self._send_json(307, {}, {"Location": fake.redirect_to + tail})
            return
        sent = self.headers.get("Authorization", "")
        if fake.api_key is not None and sent != f"Bearer {fake.api_key}":
            self._send_json(
                401,
                _error_body(
                    f"Incorrect API key provided: {sent}. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.",
                    "invalid_request_error",
                    "invalid_api_key",
                ),
            )
            return
        answer = fake.routes.get((self.command, route))
        if answer is not None:
            self._wait(answer.delay)  # a server that takes its time, or never answers
            self._replay(answer)
            return
        if fake.ollama_native and route.startswith("/api/"):
            self._ollama(route, body)
            return
        if fake.off_route is not None and not (route.startswith("/v1/") or route == "/v1"):
            # A server that serves only /v1/…: its own answer for any other path.
            self._replay(fake.off_route)
            return
        if route.startswith("/v1/") or route == "/v1":
            route = route[3:]
        if self.command == "GET" and route == "/models":
            self._send_json(
                200,
                {"object": "list", "data": [_model_object(m) for m in fake.models]},
            )
        elif self.command == "GET" and route.startswith("/models/"):
            model = unquote(route[len("/models/") :])
            if model in fake.models:
                self._send_json(200, _model_object(model))
            else:
                self._send_json(
                    404,
                    _error_body(
                        f"The model `{model}` does not exist (fake server).",
                        "invalid_request_error",
                        "model_not_found",
                    ),
                )
        elif self.command == "POST" and route.endswith(_CHAT_ROUTE):
            # Any prefix: Azure's /openai/deployments/NAME/chat/completions, /openai/v1/…
            self._chat(body)
        else:
            self._send_json(
                404,
                _error_body(
                    f"fake server: unknown path {self.command} {self.path}",
                    "invalid_request_error",
                    "unknown_url",
                ),
            )

    def _ollama(self, route: str, body: Any) -> None:
        """Ollama's native API, as far as Lantern asks it: the model list, one model's
        details and the loaded models (ollama `api/types.go`: ListResponse, ShowResponse,
        ProcessResponse)."""
        fake = self._srv.fake
        if self.command == "GET" and route == "/api/tags":
            models = [
                {"name": m, "model": m, "modified_at": "2025-01-01T00:00:00Z", "size": 1}
                for m in fake.models
            ]
            self._send_json(200, {"models": models})
        elif self.command == "GET" and route == "/api/ps":
            self._send_json(200, {"models": []})  # nothing loaded
        elif self.command == "POST" and route == "/api/show" and isinstance(body, dict):
            if body.get("model") in fake.models and fake.ollama_show is not None:
                self._send_json(200, fake.ollama_show)
            else:
                self._send_json(404, {"error": f"model '{body.get('model')}' not found"})
        else:
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "18")
            self.end_headers()
            self.wfile.write(b"404 page not found")
            self.wfile.flush()

    def _chat(self, body: Any) -> None:
        fake = self._srv.fake
        with fake._lock:
            fake.routes.update(fake.routes_after_chat)
        if not isinstance(body, dict):
            self._send_json(
                400,
                _error_body(
                    "fake server: request body is not a JSON object", "invalid_request_error"
                ),
            )
            return
        for param, answer in (
            ("stream_options", fake.stream_options_answer),
            ("tools", fake.tools_answer),
        ):
            if answer is not None and param in body:
                # Answered like a real server that rejects the parameter on every request;
                # no scripted turn is used up, so a client's retries all meet the same answer.
                self._replay(answer)
                return
        for check, answer in list(fake.rejections):
            if check(body):
                self._replay(answer)
                return
        if fake.reject_stream_options is True and "stream_options" in body:
            self._send_json(
                400,
                _error_body(
                    "Unrecognized request argument supplied: stream_options",
                    "invalid_request_error",
                    param="stream_options",
                ),
            )
            return
        turn = fake._next_turn()
        if turn is None:
            self._send_json(
                500, {"error": {"message": NO_TURN_LEFT_MESSAGE, "type": "server_error"}}
            )
            return
        model = body.get("model")
        if not isinstance(model, str) or not model:
            model = fake.models[0] if fake.models else "fake-model"
        self._wait(turn.delay)
        if turn.raw is not None:
            self._replay(turn)
        elif turn.fault == "hang":
            self._wait_for_disconnect()
        elif turn.fault == "status":
            self._send_status_fault(turn, model)
        elif body.get("stream") is True:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            self._stream(turn, body, model, include_usage)
        else:
            self._complete(turn, body, model)

    def _send_status_fault(self, turn: Turn, model: str) -> None:
        status = turn.status if turn.status is not None else 500
        message = turn.error_message or _ERROR_MESSAGES.get(
            status, f"fake server: scripted HTTP {status}"
        )
        error_type = turn.error_type or _ERROR_TYPES.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        code = turn.error_code or _ERROR_CODES.get(status)
        if turn.error_code is None and "maximum context length" in message.lower():
            code = "context_length_exceeded"
        self._send_json(status, _error_body(message, error_type, code), turn.headers)

    # -- replies -------------------------------------------------------------------

    def _replay(self, turn: Turn) -> None:
        """Write ``turn.raw`` verbatim, one socket write and flush per part."""
        parts = turn.raw_parts()
        content_type = turn.raw_content_type_or_default()
        chunked = turn.raw_chunked
        if chunked is None:
            chunked = content_type.startswith("text/event-stream")
        self.send_response(turn.raw_status)
        self.send_header("Content-Type", content_type)
        if content_type.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(sum(len(p) for p in parts)))
        for name, value in turn.raw_headers.items():
            self.send_header(str(name), str(value))
        self.end_headers()
        self.wfile.flush()
        for i, part in enumerate(parts):
            if i:
                self._wait(turn.chunk_delay)
            if chunked:
                self._write_chunk(part)
            else:
                self.wfile.write(part)
                self.wfile.flush()
        if turn.fault == "cut":
            self._abort()
        elif turn.fault == "stall":
            self._wait_for_disconnect()
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _complete(self, turn: Turn, request: Mapping[str, Any], model: str) -> None:
        calls = turn.normalized_tool_calls()
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.content if (turn.content or not calls) else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                for cid, name, args in calls
            ]
        payload = {
            "id": _completion_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": turn.effective_finish_reason(),
                }
            ],
            "usage": turn.usage
            if turn.usage is not None
            else _default_usage(request, turn, self._srv.fake.window),
        }
        if turn.fault in ("cut", "stall"):
            data = json.dumps(payload).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if turn.fault == "cut":
                self._abort()
            else:
                self._wait_for_disconnect()
            return
        self._send_json(200, payload)

    def _stream_events(
        self, turn: Turn, request: Mapping[str, Any], model: str, include_usage: bool
    ) -> list[dict[str, Any]]:
        cid = _completion_id()
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            event: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "delta": delta,
                        "logprobs": None,
                        "finish_reason": finish_reason,
                    }
                ],
            }
            if include_usage:
                event["usage"] = None
            return event

        calls = turn.normalized_tool_calls()
        first: dict[str, Any] = {
            "role": "assistant",
            "content": "" if (turn.content or not calls) else None,
        }
        events = [chunk(first)]
        events.extend(chunk({"content": piece}) for piece in _split_content(turn.content))
        per_call: list[list[dict[str, Any]]] = []
        for index, (call_id, name, args) in enumerate(calls):
            deltas = [
                {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
            ]
            deltas.extend(
                {"index": index, "function": {"arguments": piece}} for piece in _split_text(args, 3)
            )
            per_call.append(deltas)
        if turn.interleave_tool_calls:
            longest = max((len(d) for d in per_call), default=0)
            ordered = [d[i] for i in range(longest) for d in per_call if i < len(d)]
        else:
            ordered = [delta for deltas in per_call for delta in deltas]
        events.extend(chunk({"tool_calls": [delta]}) for delta in ordered)
        events.append(chunk({}, turn.effective_finish_reason()))
        if include_usage:
            usage = (
                turn.usage
                if turn.usage is not None
                else _default_usage(request, turn, self._srv.fake.window)
            )
            events.append(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        return events

    def _stream(
        self, turn: Turn, request: Mapping[str, Any], model: str, include_usage: bool
    ) -> None:
        events = self._stream_events(turn, request, model, include_usage)
        if turn.fault in ("cut", "stall"):
            # Some chunks (at least the role chunk and one more), never the finish chunk.
            events = events[: max(2, len(events) // 2)][: max(1, len(events) - 1)]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for i, event in enumerate(events):
            if i:
                self._wait(turn.chunk_delay)
            self._write_chunk(b"data: %s\n\n" % json.dumps(event).encode("utf-8"))
        if turn.fault == "cut":
            self._abort()
            return
        if turn.fault == "stall":
            self._wait_for_disconnect()
            return
        self._wait(turn.chunk_delay)
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _raw_answer(value: bool | Turn | Mapping[str, Any] | None) -> Turn | None:
    """A rejection given as a raw turn (``True``/``False``/``None`` are not one)."""
    if value is None or isinstance(value, bool):
        return None
    turn = Turn.coerce(value)
    if turn.raw is None or turn.fault is not None:
        raise ValueError("a rejection must be a raw turn: give 'raw' (and 'raw_status')")
    return turn


def _model_object(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "fake"}


# --------------------------------------------------------------------------- public API


class FakeOpenAI:
    """A scripted OpenAI-compatible server on ``127.0.0.1``; see the module docstring.

    ``reject_stream_options=True`` answers any request carrying ``stream_options`` with
    OpenAI's 400; given a raw :class:`Turn` instead (e.g. Mistral's 422 body), that turn is
    the answer. ``reject_tools`` (a raw turn) answers every request carrying ``tools``,
    as servers without tool support do. Neither uses up a scripted turn.
    """

    def __init__(
        self,
        turns: Iterable[Turn | Mapping[str, Any]] | None = None,
        *,
        models: Sequence[str] = ("fake-model",),
        reject_stream_options: bool | Turn | Mapping[str, Any] = False,
        reject_tools: Turn | Mapping[str, Any] | None = None,
        port: int = 0,
        record_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.models: list[str] = list(models)
        self.off_route: Turn | None = None
        """A raw turn answered to every request outside ``/v1/`` (a base URL without /v1
        reaching a server that serves only /v1), without using a scripted turn."""
        self.ollama_native = False
        """Also serve Ollama's ``GET /api/tags`` (the models) and ``POST /api/show``."""
        self.ollama_show: dict[str, Any] | None = None
        """What ``/api/show`` answers for a listed model (None: 404)."""
        self.routes: dict[tuple[str, str], Turn] = {}
        """Raw turns answered to other requests by method and path (``("GET", "/props")``,
        ``("GET", "/v1/models")``), before any other route and without using a scripted
        turn: a server's own endpoints, replayed byte for byte. A turn's ``delay`` holds
        the answer back (until the server stops, at most)."""
        self.window: int | None = None
        """Set: the server runs its model with this many tokens and, as Ollama does, cuts a
        longer prompt to fit without an error, reporting only what it kept as
        ``prompt_tokens`` (counted by ``tests/fakes/tokenizer.py``) where a turn scripts no
        usage of its own."""
        self.routes_after_chat: dict[tuple[str, str], Turn] = {}
        """Routes that replace ``routes`` once a chat request arrives: a server whose
        answers change when it loads the model (Ollama's ``/api/ps`` then lists it)."""
        self.api_key: str | None = None
        """Set: every request without ``Authorization: Bearer <api_key>`` is refused with a
        401 whose message quotes the header it got, as some providers and gateways do
        ("Incorrect API key provided: Bearer sk-…")."""
        self.redirect_to: str | None = None
        """Set: every request is answered ``307 Temporary Redirect`` to this base URL (the
        path after ``/v1`` kept), as a server that moved would answer."""
        self.reject_stream_options = reject_stream_options
        self.reject_tools = reject_tools
        self.rejections: list[tuple[Callable[[dict[str, Any]], bool], Turn]] = []
        self.record_path = record_path
        self.requests: list[RecordedRequest] = []
        self._requested_port = port
        self._lock = threading.Lock()
        self._turns: deque[Turn] = deque()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        if turns is not None:
            self.add_turns(turns)

    # -- rejections ----------------------------------------------------------------
    # A raw turn (e.g. Mistral's 422, Ollama's "does not support tools" 400) served to
    # every request that carries the parameter, without consuming the script.

    @property
    def reject_stream_options(self) -> bool | Turn:
        return self.stream_options_answer or self._reject_stream_options

    @reject_stream_options.setter
    def reject_stream_options(self, value: bool | Turn | Mapping[str, Any]) -> None:
        self.stream_options_answer = _raw_answer(value)
        self._reject_stream_options = value is True

    @property
    def reject_tools(self) -> Turn | None:
        return self.tools_answer

    @reject_tools.setter
    def reject_tools(self, value: Turn | Mapping[str, Any] | None) -> None:
        self.tools_answer = _raw_answer(value)

    def reject_if(
        self, check: Callable[[dict[str, Any]], bool], answer: Turn | Mapping[str, Any]
    ) -> None:
        """Answer every chat request whose JSON body ``check`` accepts with the raw turn
        ``answer``, without using a scripted turn: a server's request validation, e.g.
        Groq's 400 for an unknown ``reasoning`` property on an assistant message."""
        turn = _raw_answer(answer)
        if turn is None:
            raise ValueError("reject_if needs a raw turn")
        self.rejections.append((check, turn))

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> Self:
        """Bind ``127.0.0.1`` (port 0 unless given) and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = _Server(self._requested_port, self)
        self._port = int(server.server_address[1])
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": _POLL_S},
            name=f"fake-openai-{self._port}",
            daemon=True,
        )
        self._server, self._thread = server, thread
        thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection (hung replies included)."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._server = self._thread = None
        server.stopping.set()
        server.shutdown()
        server.server_close()
        server.abort_connections()
        server.join_threads(timeout=5.0)
        if thread is not None:
            thread.join(timeout=5.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeOpenAI is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    # -- script --------------------------------------------------------------------

    def add_turns(self, turns: Iterable[Turn | Mapping[str, Any]]) -> None:
        """Append turns (``Turn`` objects or dicts) to the script."""
        coerced = [Turn.coerce(t) for t in turns]
        with self._lock:
            self._turns.extend(coerced)

    def add_turn(self, turn: Turn | Mapping[str, Any]) -> None:
        self.add_turns([turn])

    def reset(self) -> None:
        """Forget the script, the recorded requests and every rejection, keeping the port:
        a server shared by several tests starts each one as if new."""
        with self._lock:
            self._turns.clear()
            self.requests.clear()
        self.rejections.clear()
        self.reject_stream_options = False
        self.reject_tools = None
        self.off_route = None
        self.ollama_native = False
        self.ollama_show = None
        self.routes = {}
        self.routes_after_chat = {}
        self.api_key = None
        self.redirect_to = None

    @property
    def turns_left(self) -> int:
        """How many scripted turns have not been consumed yet."""
        with self._lock:
            return len(self._turns)

    def _next_turn(self) -> Turn | None:
        with self._lock:
            return self._turns.popleft() if self._turns else None

    # -- recording -----------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            if self.record_path is not None:
                with open(self.record_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(request.to_json()) + "\n")

    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the ``POST /v1/chat/completions`` requests, in order."""
        with self._lock:
            recorded = list(self.requests)
        out: list[dict[str, Any]] = []
        for req in recorded:
            route = urlsplit(req.path).path.rstrip("/")
            if req.method == "POST" and route.endswith(_CHAT_ROUTE) and isinstance(req.body, dict):
                out.append(req.body)
        return out


# --------------------------------------------------------------------------- CLI


class _Signalled(Exception):
    pass


def _raise_signalled(signum: int, frame: FrameType | None) -> None:
    raise _Signalled(signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.openai_server",
        description="Serve a scripted fake OpenAI API on 127.0.0.1 until SIGTERM/SIGINT.",
    )
    parser.add_argument("--script", help='JSON file: {"turns": [...]}')
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--record", help="append each request to this file as a JSON line")
    parser.add_argument(
        "--model", action="append", dest="models", help="model id to list (repeatable)"
    )
    parser.add_argument("--reject-stream-options", action="store_true", default=None)
    args = parser.parse_args(argv)

    script: dict[str, Any] = load_script(args.script) if args.script else {"turns": []}
    models = args.models or script.get("models") or ["fake-model"]
    reject: bool | Mapping[str, Any] | None = args.reject_stream_options
    if reject is None:
        # A script may give a raw turn (e.g. Mistral's 422) as well as true/false.
        scripted = script.get("reject_stream_options", False)
        reject = scripted if isinstance(scripted, Mapping) else bool(scripted)

    signal.signal(signal.SIGTERM, _raise_signalled)
    signal.signal(signal.SIGINT, _raise_signalled)
    fake = FakeOpenAI(
        script["turns"],
        models=models,
        reject_stream_options=reject,
        reject_tools=script.get("reject_tools"),
        port=args.port,
        record_path=args.record,
    )
    try:
        fake.start()
        sys.stdout.write(json.dumps({"base_url": fake.base_url, "port": fake.port}) + "\n")
        sys.stdout.flush()
        while True:
            time.sleep(3600)
    except (_Signalled, KeyboardInterrupt):
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
