"""Framing: malformed bytes on stdin never stop `lantern serve` from answering.

pytest-lsp cannot send raw bytes, so these tests talk to the server through a small
stdio client of their own: `RawServer` writes bytes to the server's stdin and a reader
thread splits stdout into Content-Length framed JSON messages, strictly: any byte on
stdout that is not part of a well-formed frame is recorded as garbage and fails the test
(the server's logs go to stderr, never stdout). Every wait has a timeout, and each
server process is killed through its own Popen handle at the end.

The malformed-input tests share one server per module (each ends with the server still
answering, which is what they check); after the last of them it must still shut down
with exit code 0. Tests that end a server or change its settings start their own.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.hang import HANG_S
from tests.lsp.conftest import SERVER_COMMAND, server_env

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
TIMEOUT = HANG_S


def frame(body: bytes | str) -> bytes:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def message(msg_id: Any, method: str, params: Any = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if msg_id is not None:
        body["id"] = msg_id
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode("utf-8")


def reset(msg_id: Any) -> bytes:
    """A cheap valid request: resetting an unknown conversation answers {"reset": false}."""
    return message(msg_id, "lantern/resetConversation", {"conversationId": "none"})


class RawServer:
    """`lantern serve` over raw pipes; replies are read by a thread and queued."""

    def __init__(self, env: dict[str, str], stderr_path: Path) -> None:
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        #: Every well-framed message from the server, in the order it arrived.
        self.arrived: list[dict[str, Any]] = []
        self.garbage: list[bytes] = []
        self.stdout_closed = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- stdout: strict Content-Length framing ---------------------------------------

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                header, rest = buf[:end], buf[end + 4 :]
                length = None
                for line in header.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length" and value.strip().isdigit():
                        length = int(value.strip())
                    elif name.strip().lower() != b"content-type":
                        self.garbage.append(line)
                if length is None:
                    self.garbage.append(header)
                    buf = rest
                    continue
                if len(rest) < length:
                    break
                body, buf = rest[:length], rest[length:]
                try:
                    parsed = json.loads(body)
                except ValueError:
                    self.garbage.append(body)
                    continue
                if not isinstance(parsed, dict) or parsed.get("jsonrpc") != "2.0":
                    self.garbage.append(body)
                    continue
                self.arrived.append(parsed)
                self.replies.put(parsed)
        if buf:
            self.garbage.append(buf)
        self.stdout_closed.set()

    # -- stdin -----------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: Any, method: str, params: Any = None) -> None:
        self.send(frame(message(msg_id, method, params)))

    def notify(self, method: str, params: Any = None) -> None:
        self.send(frame(message(None, method, params)))

    def expect(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """The first message (seen before or still to come) that matches; fails on timeout."""
        for msg in self.seen:
            if predicate(msg):
                self.seen.remove(msg)
                return msg
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no matching message within {timeout} s; got {self.seen}; "
                    f"server exit code {self.proc.poll()}; stderr:\n{self.stderr_tail()}"
                )
            try:
                msg = self.replies.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if predicate(msg):
                return msg
            self.seen.append(msg)

    def response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.expect(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def error(self, code: int, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.expect(
            lambda m: "method" not in m and (m.get("error") or {}).get("code") == code, timeout
        )

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.stderr_path.read_text("utf-8", "replace")[-3000:]
        return ""

    # -- lifecycle -------------------------------------------------------------------

    def initialize(self, root: Path) -> None:
        self.request(
            1,
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {},
            },
        )
        reply = self.response(1)
        assert "result" in reply, reply
        self.notify("initialized", {})

    def assert_serving(self, msg_id: Any = "still-there", timeout: float = TIMEOUT) -> None:
        """A valid request after the bad bytes is still answered."""
        self.send(frame(reset(msg_id)))
        reply = self.response(msg_id, timeout)
        assert reply.get("result") == {"reset": False}, reply

    def shutdown(self) -> int:
        """`shutdown` then `exit`; returns the exit code."""
        self.request("bye", "shutdown")
        assert self.response("bye").get("result", "missing") is None
        self.notify("exit")
        return self.proc.wait(timeout=TIMEOUT)

    def rss_bytes(self) -> int | None:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()


def _started(folder: Path, base_url: str) -> RawServer:
    root = folder / "ws"
    root.mkdir()
    (root / "main.py").write_text("print('hello')\n", "utf-8")
    server = RawServer(server_env(folder / "home", base_url), folder / "stderr.log")
    try:
        server.initialize(root)
    except BaseException:
        server.close()
        raise
    return server


def _ends_cleanly(server: RawServer) -> None:
    assert server.shutdown() == 0
    assert server.stdout_closed.wait(TIMEOUT)


@pytest.fixture
def fresh_server(tmp_path: Path, fake: FakeOpenAI) -> Iterator[RawServer]:
    """A server of the test's own, for tests that end it or change its settings."""
    server = _started(tmp_path, fake.base_url)
    try:
        yield server
    finally:
        server.close()
    assert not server.garbage, f"bytes on stdout that are not JSON-RPC: {server.garbage!r}"


@pytest.fixture(scope="module")
def shared_raw_server(
    tmp_path_factory: pytest.TempPathFactory, module_fake: FakeOpenAI
) -> Iterator[RawServer]:
    """One server for the module's malformed-input tests; after all of them it must still
    shut down cleanly and have written nothing but JSON-RPC frames."""
    server = _started(tmp_path_factory.mktemp("framing"), module_fake.base_url)
    try:
        yield server
        _ends_cleanly(server)
    finally:
        server.close()
    assert not server.garbage, f"bytes on stdout that are not JSON-RPC: {server.garbage!r}"


@pytest.fixture
def raw_server(shared_raw_server: RawServer, request: pytest.FixtureRequest) -> RawServer:
    """The shared server, caught up and cleared: a request answered now comes after every
    reply to what earlier tests sent, so nothing of theirs is left to be read."""
    server = shared_raw_server
    server.assert_serving(f"sync-{request.node.name}")
    server.seen.clear()
    server.arrived.clear()
    assert not server.garbage, f"bytes on stdout that are not JSON-RPC: {server.garbage!r}"
    return server


# ------------------------------------------------------------------------------ tests


def test_a_body_that_is_not_json_is_a_parse_error(raw_server: RawServer) -> None:
    raw_server.send(frame(b'{"jsonrpc": "2.0", "id": 5, "method": '))
    reply = raw_server.error(PARSE_ERROR)
    assert reply["id"] is None
    raw_server.assert_serving()


def test_a_content_length_smaller_than_the_body(raw_server: RawServer) -> None:
    body = reset(5)
    # The server reads a cut body (not JSON); the rest of the body is garbage before the
    # next header, which must still be found.
    raw_server.send(b"Content-Length: %d\r\n\r\n" % (len(body) - 12) + body)
    raw_server.error(PARSE_ERROR)
    raw_server.assert_serving()


def test_a_content_length_a_little_larger_than_the_body(raw_server: RawServer) -> None:
    # The lying length swallows the start of the next message; the server must give the
    # swallowed header back and answer the next request.
    body = reset(5)
    raw_server.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 20) + body)
    raw_server.assert_serving()
    cut = raw_server.error(PARSE_ERROR)
    # The cut body is answered first, then the request whose header it swallowed.
    ids = [m.get("id") for m in raw_server.arrived if m is cut or m.get("id") == "still-there"]
    assert ids == [None, "still-there"]


def test_a_content_length_far_larger_than_what_arrives(raw_server: RawServer) -> None:
    # Nothing more arrives for the promised body: the reader gives up after 2 s idle,
    # re-scans what it has and answers the request that came after the lying header
    # (waiting for the body instead would never answer it).
    body = reset(5)
    raw_server.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 100_000) + body)
    raw_server.send(frame(reset("after")))
    reply = raw_server.response("after")
    assert reply.get("result") == {"reset": False}
    raw_server.error(PARSE_ERROR)
    raw_server.assert_serving()


def test_a_header_with_bare_lf(raw_server: RawServer) -> None:
    body = reset(5)
    raw_server.send(b"Content-Length: %d\n\n" % len(body) + body)
    # Bare LF is accepted (and if it were not, the next request must still be answered).
    assert raw_server.response(5).get("result") == {"reset": False}
    raw_server.assert_serving()


def test_a_header_without_content_length(raw_server: RawServer) -> None:
    body = reset(5)
    raw_server.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
    raw_server.assert_serving()


def test_a_huge_content_length_with_no_body(raw_server: RawServer) -> None:
    before = raw_server.rss_bytes()
    raw_server.send(b"Content-Length: %d\r\n\r\n" % 10**12)
    reply = raw_server.error(PARSE_ERROR)
    assert reply["id"] is None
    raw_server.assert_serving()
    after = raw_server.rss_bytes()
    if before is not None and after is not None:
        assert after - before < 64 * 1024 * 1024, (before, after)


def test_a_json_array_is_an_invalid_request(raw_server: RawServer) -> None:
    raw_server.send(frame(b"[" + reset(5) + b"]"))
    reply = raw_server.error(INVALID_REQUEST)
    assert reply["id"] is None
    raw_server.assert_serving()


def test_an_object_without_jsonrpc_is_an_invalid_request(raw_server: RawServer) -> None:
    body = {"id": 9, "method": "lantern/resetConversation", "params": {"conversationId": "x"}}
    raw_server.send(frame(json.dumps(body)))
    reply = raw_server.error(INVALID_REQUEST)
    assert reply["id"] == 9
    raw_server.assert_serving()


def test_stdout_carries_only_json_rpc_during_a_full_question(
    fresh_server: RawServer, fake: FakeOpenAI
) -> None:
    """Logs, warnings and stray prints go to stderr; stdout stays strictly framed."""
    fake.add_turns(
        [
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "main.py"}}]},
            {"content": "It prints hello (main.py:1)."},
        ]
    )
    fresh_server.notify(
        "workspace/didChangeConfiguration",
        {"settings": {"lantern": {"approval": {"mode": "workspace"}}}},
    )
    fresh_server.request(2, "lantern/ask", {"question": "What does main.py print?"})
    reply = fresh_server.response(2)
    assert reply["result"]["stopReason"] == "done", reply
    assert reply["result"]["toolCalls"][0]["status"] == "done"
    _ends_cleanly(fresh_server)


def test_a_body_nested_too_deeply_to_parse_is_a_parse_error(raw_server: RawServer) -> None:
    # 10 KB of brackets used to raise RecursionError out of the read loop and end the server.
    nested = b"[" * 5000 + b"]" * 5000
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": [' + nested + b"]}"
    raw_server.send(frame(body))
    reply = raw_server.error(PARSE_ERROR)
    assert reply["id"] is None and "deeply" in reply["error"]["message"]
    raw_server.assert_serving()


def test_params_that_do_not_fit_the_method_are_invalid_params(raw_server: RawServer) -> None:
    # Well-formed JSON-RPC, but pygls cannot build `HoverParams` from it: the error names
    # the request's id, and the server keeps serving.
    raw_server.request("hover", "textDocument/hover", {"position": "nowhere"})
    reply = raw_server.response("hover")
    assert reply["error"]["code"] == INVALID_PARAMS, reply
    raw_server.assert_serving()


@pytest.mark.parametrize(("shut_down", "code"), [(True, 0), (False, 1)])
def test_end_of_input_exits_0_only_after_shutdown(
    fresh_server: RawServer, shut_down: bool, code: int
) -> None:
    """LSP: exit code 0 if `shutdown` came first, else 1; end of input counts as `exit`."""
    if shut_down:
        fresh_server.request("bye", "shutdown")
        assert fresh_server.response("bye").get("result", "missing") is None
    assert fresh_server.proc.stdin is not None
    fresh_server.proc.stdin.close()
    assert fresh_server.proc.wait(timeout=TIMEOUT) == code


_WHOLE_LINE = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("lantern/ask", {"question": "  "}, "question must be a non-empty string"),
        ("lantern/ask", {"conversationId": "c"}, "question is required"),
        ("lantern/ask", {"question": "q", "conversationId": 5}, "conversationId must be a string"),
        ("lantern/ask", {"question": "q", "history": "turns"}, "history must be a list"),
        (
            "lantern/ask",
            {"question": "q", "history": [{"question": "q", "answer": 3}]},
            "history[0].answer must be a string",
        ),
        ("lantern/ask", {"question": "q", "workDoneToken": True}, "workDoneToken must be"),
        ("lantern/ask", {"question": "q", "context": {"range": None}}, "context.uri is required"),
        (
            "lantern/ask",
            {"question": "q", "context": {"uri": "untitled:Untitled-1"}},
            "context.uri must be a file URI",
        ),
        (
            "lantern/ask",
            {"question": "q", "context": {"uri": "file:///a.py", "visibleRange": "1-40"}},
            "context.visibleRange",
        ),
        (
            "lantern/ask",
            {"question": "q", "context": {"uri": "file:///a.py", "diagnostics": {"n": 1}}},
            "context.diagnostics must be a list",
        ),
        (
            "lantern/ask",
            {
                "question": "q",
                "context": {
                    "uri": "file:///a.py",
                    "diagnostics": [{"range": _WHOLE_LINE, "message": "m", "severity": 0}],
                },
            },
            "context.diagnostics[0].severity must be 1, 2, 3 or 4",
        ),
        (
            "lantern/ask",
            {"question": "q", "context": {"uri": "file:///a", "diagnostics": [{"message": "m"}]}},
            "context.diagnostics[0].range is required",
        ),
        ("lantern/resetConversation", {"conversationId": ["x"]}, "conversationId must be"),
        ("lantern/revokeGrant", {"id": 5}, "id must be a string"),
        ("lantern/revokeGrant", {}, "id is required"),
    ],
)
def test_params_of_the_wrong_shape_are_invalid_params_that_say_why(
    raw_server: RawServer, fake: FakeOpenAI, method: str, params: dict[str, Any], message: str
) -> None:
    raw_server.request("bad", method, params)
    reply = raw_server.response("bad")
    assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert message in reply["error"]["message"]
    assert fake.chat_requests() == []  # nothing was asked
    raw_server.assert_serving()


def test_fields_a_client_adds_are_ignored(fresh_server: RawServer, fake: FakeOpenAI) -> None:
    fresh_server.request("r", "lantern/resetConversation", {"conversationId": "x", "tabId": 3})
    assert fresh_server.response("r").get("result") == {"reset": False}
    fake.add_turns([{"content": "Hello."}])
    params = {"question": "Hi?", "clientTurn": {"n": 1}, "context": None, "history": None}
    fresh_server.request("a", "lantern/ask", params)
    reply = fresh_server.response("a")
    assert reply["result"]["answer"] == "Hello.", reply
    _ends_cleanly(fresh_server)


def _audit_lines(home: Path) -> list[dict[str, Any]]:
    [log] = home.rglob("audit.jsonl")
    return [json.loads(line) for line in log.read_text("utf-8").splitlines()]


def test_exit_ends_the_process_with_the_audit_log_written(
    fresh_server: RawServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    """`exit` ends the process at once (the speed is measured in benchmarks/server_bench.py;
    here only a hang fails), with every audit record of the question on disk."""
    fake.add_turns(
        [
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "main.py"}}]},
            {"content": "It prints hello."},
        ]
    )
    fresh_server.notify(
        "workspace/didChangeConfiguration",
        {"settings": {"lantern": {"approval": {"mode": "workspace"}}}},
    )
    fresh_server.request(2, "lantern/ask", {"question": "What does main.py print?"})
    assert fresh_server.response(2)["result"]["stopReason"] == "done"
    _ends_cleanly(fresh_server)
    kinds = [(r["kind"], r.get("tool")) for r in _audit_lines(tmp_path / "home")]
    assert kinds.count(("tool", "read_file")) == 1 and kinds.count(("model", None)) == 2


def test_exit_without_shutdown_exits_1(fresh_server: RawServer) -> None:
    fresh_server.notify("exit")
    assert fresh_server.proc.wait(timeout=TIMEOUT) == 1
    assert fresh_server.stdout_closed.wait(TIMEOUT)
