"""The fake OpenAI server (tests/fakes/openai_server.py) against the real `openai` client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `tests` is importable from the repository root only
    sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import (  # noqa: E402
    NO_TURN_LEFT_MESSAGE,
    FakeOpenAI,
    Turn,
)
from tests.hang import HANG_S  # noqa: E402

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "where is main defined?"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, timeout: float = HANG_S, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=fake.base_url, api_key="x", max_retries=max_retries, timeout=timeout
    )


def test_binds_loopback_only(fake: FakeOpenAI) -> None:
    assert fake.base_url == f"http://127.0.0.1:{fake.port}/v1"
    assert fake.port > 0


def test_streaming_text_assembles(fake: FakeOpenAI) -> None:
    text = "The function main is defined in server/lantern/cli/commands.py."
    fake.add_turns([Turn(content=text)])
    stream = client(fake).chat.completions.create(model="m", messages=USER, stream=True)
    pieces: list[str] = []
    finish: list[str | None] = []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        assert chunk.usage is None
        assert len(chunk.choices) == 1
        pieces.append(chunk.choices[0].delta.content or "")
        finish.append(chunk.choices[0].finish_reason)
    assert "".join(pieces) == text
    assert len([p for p in pieces if p]) >= 3
    assert finish[-1] == "stop"
    assert fake.turns_left == 0


def test_streamed_parallel_tool_calls_assemble_by_index(fake: FakeOpenAI) -> None:
    fake.add_turns(
        [
            {
                "content": "",
                "interleave_tool_calls": True,
                "tool_calls": [
                    {"id": "call_1", "name": "read_file", "arguments": {"path": "a.py"}},
                    {"id": "call_2", "name": "grep", "arguments": '{"pattern": "main'},
                ],
            }
        ]
    )
    stream = client(fake).chat.completions.create(model="m", messages=USER, stream=True)
    calls: dict[int, dict[str, Any]] = {}
    arg_deltas: dict[int, int] = {}
    finish = None
    for chunk in stream:
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for tc in choice.delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            if tc.id:
                slot["id"] = tc.id
            if tc.function and tc.function.name:
                slot["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                slot["arguments"] += tc.function.arguments
                arg_deltas[tc.index] = arg_deltas.get(tc.index, 0) + 1
    assert finish == "tool_calls"
    assert calls == {
        0: {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
        1: {"id": "call_2", "name": "grep", "arguments": '{"pattern": "main'},
    }
    assert arg_deltas[0] >= 2 and arg_deltas[1] >= 2


def test_non_streaming_completion_with_tool_calls_and_usage(fake: FakeOpenAI) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[{"id": "c1", "name": "list_dir", "arguments": {"path": "."}}]),
            Turn(content="cut short", finish_reason="length", usage={"prompt_tokens": 7}),
        ]
    )
    c = client(fake)
    first = c.chat.completions.create(model="gpt-x", messages=USER)
    assert first.model == "gpt-x"
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert (call.id, call.function.name) == ("c1", "list_dir")
    assert json.loads(call.function.arguments) == {"path": "."}
    assert first.usage is not None
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    second = c.chat.completions.create(model="gpt-x", messages=USER)
    assert second.choices[0].message.content == "cut short"
    assert second.choices[0].finish_reason == "length"
    assert second.usage is not None and second.usage.prompt_tokens == 7


def test_usage_chunk_only_with_stream_options(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="one two three"), Turn(content="four five six")])
    c = client(fake)
    plain = list(c.chat.completions.create(model="m", messages=USER, stream=True))
    assert all(chunk.usage is None and chunk.choices for chunk in plain)
    with_usage = list(
        c.chat.completions.create(
            model="m", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    last = with_usage[-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.completion_tokens == 3
    assert last.usage.total_tokens == last.usage.prompt_tokens + 3
    assert all(chunk.usage is None for chunk in with_usage[:-1])


def test_rate_limit_then_next_turn(fake: FakeOpenAI) -> None:
    fake.add_turns(
        [
            Turn(fault="status", status=429, headers={"Retry-After": "1"}),
            Turn(content="after the limit"),
        ]
    )
    c = client(fake)
    with pytest.raises(openai.RateLimitError) as info:
        c.chat.completions.create(model="m", messages=USER)
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.code == "rate_limit_exceeded"
    reply = c.chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "after the limit"


def test_client_retry_gets_the_next_turn(fake: FakeOpenAI) -> None:
    fake.add_turns(
        [{"status": 429, "headers": {"Retry-After": "0.05"}}, {"content": "retried fine"}]
    )
    reply = client(fake, max_retries=1).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "retried fine"
    assert len(fake.chat_requests()) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (500, openai.InternalServerError),
    ],
)
def test_status_faults_map_to_client_errors(
    fake: FakeOpenAI, status: int, error: type[openai.APIStatusError]
) -> None:
    fake.add_turns([Turn(fault="status", status=status, error_message=f"scripted {status}")])
    with pytest.raises(error) as info:
        client(fake).chat.completions.create(model="m", messages=USER)
    assert info.value.status_code == status
    assert info.value.message.endswith(f"scripted {status}")


def test_context_length_exceeded(fake: FakeOpenAI) -> None:
    fake.add_turns(
        [
            {
                "fault": "status",
                "status": 400,
                "error_message": "This model's maximum context length is 8192 tokens.",
            }
        ]
    )
    with pytest.raises(openai.BadRequestError) as info:
        client(fake).chat.completions.create(model="m", messages=USER)
    assert info.value.code == "context_length_exceeded"


def test_cut_stream_raises_instead_of_hanging(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="a b c d e f g h", fault="cut")])
    stream = client(fake).chat.completions.create(model="m", messages=USER, stream=True)
    received: list[str] = []
    with pytest.raises(openai.APIError) as info:
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    # The closed connection ended the stream, not the client giving up on a silent one.
    assert not isinstance(info.value, openai.APITimeoutError)
    assert "".join(received)  # some chunks arrived before the cut
    assert "".join(received) != "a b c d e f g h"


def test_cut_non_streaming_raises(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="whole answer", fault="cut"), Turn(content="next")])
    c = client(fake)
    with pytest.raises(openai.APIConnectionError) as info:
        c.chat.completions.create(model="m", messages=USER)
    assert not isinstance(info.value, openai.APITimeoutError)
    assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "next"


def test_hang_times_out(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(fault="hang"), Turn(content="still alive")])
    c = client(fake, timeout=0.5)
    with pytest.raises(openai.APITimeoutError):  # the fake never answers: only a timeout ends it
        c.chat.completions.create(model="m", messages=USER)
    assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == (
        "still alive"
    )


def test_stall_times_out_mid_stream(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="one two three four five six", fault="stall")])
    stream = client(fake, timeout=0.5).chat.completions.create(
        model="m", messages=USER, stream=True
    )
    received: list[str] = []
    with pytest.raises(openai.APITimeoutError):
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received).startswith("one")


def test_stop_unblocks_a_hung_request() -> None:
    server = FakeOpenAI([Turn(fault="hang")]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client(server, timeout=10 * HANG_S).chat.completions.create(model="m", messages=USER)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + HANG_S
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.requests
    server.stop()
    # The hung reply would keep the client waiting for its whole timeout (10 * HANG_S);
    # stop() closing the connection is what lets the thread end well before it.
    thread.join(HANG_S)
    assert not thread.is_alive()
    assert errors and isinstance(errors[0], openai.APIError)


def test_delays(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="a b c", delay=0.1, chunk_delay=0.05)])
    start = time.monotonic()
    text = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in client(fake).chat.completions.create(model="m", messages=USER, stream=True)
    )
    assert text == "a b c"
    assert time.monotonic() - start >= 0.2


def test_reject_stream_options_does_not_consume_a_turn() -> None:
    with FakeOpenAI([Turn(content="ok")], reject_stream_options=True) as server:
        c = client(server)
        with pytest.raises(openai.BadRequestError) as info:
            c.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        assert "stream_options" in info.value.message
        assert server.turns_left == 1
        chunks = list(c.chat.completions.create(model="m", messages=USER, stream=True))
        assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == "ok"


def test_script_exhausted(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        client(fake).chat.completions.create(model="m", messages=USER)
    assert info.value.body == {"message": NO_TURN_LEFT_MESSAGE, "type": "server_error"}


def test_requests_are_recorded(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="x"), Turn(content="y")])
    c = client(fake)
    c.chat.completions.create(model="m1", messages=USER)
    c.chat.completions.create(model="m2", messages=USER, stream=True).close()
    c.models.list()
    assert [(r.method, r.path) for r in fake.requests] == [
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ]
    first = fake.requests[0]
    assert first.headers["authorization"] == "Bearer x"
    assert json.loads(first.raw) == first.body
    bodies = fake.chat_requests()
    assert [b["model"] for b in bodies] == ["m1", "m2"]
    assert bodies[0]["messages"] == USER
    assert bodies[1]["stream"] is True
    assert fake.requests[2].body is None


def test_models_listed() -> None:
    with FakeOpenAI(models=["alpha", "beta"]) as server:
        models = client(server).models.list()
        assert [m.id for m in models] == ["alpha", "beta"]
        assert all(m.owned_by == "fake" for m in models)


def test_unknown_path_is_json_404(fake: FakeOpenAI) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(fake.base_url + "/nope", timeout=HANG_S)
    assert info.value.code == 404
    assert "error" in json.loads(info.value.read())
    info.value.close()


def test_bad_turn_keys_are_rejected() -> None:
    with pytest.raises(ValueError):
        FakeOpenAI([{"contnet": "typo"}])
    with pytest.raises(ValueError):
        Turn(fault="explode")


async def test_async_streaming() -> None:
    with FakeOpenAI([Turn(content="async text arrives in pieces")]) as server:
        aclient = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        try:
            stream = await aclient.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
            text = ""
            usage = None
            async for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                usage = chunk.usage or usage
            assert text == "async text arrives in pieces"
            assert usage is not None and usage.completion_tokens == 5
        finally:
            await aclient.close()


def _spawn_cli(*args: str) -> subprocess.Popen[str]:
    """`python -m tests.fakes.openai_server ARGS` from the repository root, output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_cli_mode(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps({"turns": [{"content": "from the cli"}]}), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    proc = _spawn_cli("--script", str(script), "--port", "0", "--record", str(record))
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["base_url"] == f"http://127.0.0.1:{info['port']}/v1"
        c = openai.OpenAI(base_url=info["base_url"], api_key="x", max_retries=0, timeout=HANG_S)
        chunks = list(c.chat.completions.create(model="m", messages=USER, stream=True))
        assert "".join(ch.choices[0].delta.content or "" for ch in chunks) == "from the cli"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == 0, err
    assert out == ""
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["body"]["messages"] == USER


# --------------------------------------------------------------------------- raw replay


def _post_raw(fake: FakeOpenAI, body: dict[str, Any]) -> tuple[bytes, bytes]:
    """POST with a bare socket; return (header block, everything after it) as received."""
    data = json.dumps(body).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
    )
    with socket.create_connection(("127.0.0.1", fake.port), timeout=HANG_S) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    return head, rest


def _http_chunks(body: bytes) -> list[bytes]:
    """Split a chunked transfer-encoded body into its chunks; check it is terminated."""
    chunks: list[bytes] = []
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert body == b"\r\n", "the chunked body must end with the zero chunk"
            return chunks
        chunks.append(body[:size])
        assert body[size : size + 2] == b"\r\n"
        body = body[size + 2 :]


SPLIT_SSE = [
    'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m",'
    '"choices":[{"index":0,"delta":{"role":"assistant","content":"<thi',
    'nk>"},"finish_reason":null}]}\n\n: keep-alive\n\n',
    'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m",'
    '"choices":[{"index":0,"delta":{"content":"Hi ✓"},"finish_reason":"stop"}]}\n\n',
    "data: [DONE]\n\n",
]


def test_raw_stream_parts_are_separate_http_chunks_written_verbatim(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(raw=SPLIT_SSE)])
    head, body = _post_raw(fake, {"model": "m", "messages": USER, "stream": True})
    assert head.startswith(b"HTTP/1.1 200")
    assert b"Content-Type: text/event-stream; charset=utf-8" in head
    assert b"Transfer-Encoding: chunked" in head
    assert _http_chunks(body) == [part.encode() for part in SPLIT_SSE]


def test_raw_stream_split_mid_json_reaches_the_openai_client(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(raw=SPLIT_SSE, chunk_delay=0.05)])
    stream = client(fake).chat.completions.create(model="m", messages=USER, stream=True)
    pieces = [chunk.choices[0].delta.content for chunk in stream]
    assert pieces == ["<think>", "Hi ✓"]


def test_raw_json_error_body_with_content_length(fake: FakeOpenAI) -> None:
    gemini = '[{"error": {"code": 400, "message": "bad thing", "status": "INVALID_ARGUMENT"}}]'
    fake.add_turns([Turn(raw=gemini, raw_status=400, raw_headers={"X-Extra": "1"})])
    head, body = _post_raw(fake, {"model": "m", "messages": USER})
    assert head.startswith(b"HTTP/1.1 400")
    assert b"Content-Type: application/json" in head
    assert b"Content-Length: %d" % len(gemini) in head
    assert b"X-Extra: 1" in head
    assert body == gemini.encode()
    fake.add_turns([Turn(raw=gemini, raw_status=400)])
    with pytest.raises(openai.BadRequestError) as info:
        client(fake).chat.completions.create(model="m", messages=USER)
    assert info.value.response.text == gemini


def test_raw_list_with_content_length_and_empty_body(fake: FakeOpenAI) -> None:
    parts = ['{"error": {"mess', 'age": "split"}}']
    fake.add_turns(
        [Turn(raw=parts, raw_status=503, raw_chunked=False), Turn(raw="", raw_status=422)]
    )
    head, body = _post_raw(fake, {"model": "m", "messages": USER})
    assert head.startswith(b"HTTP/1.1 503") and b"Content-Length: 31" in head
    assert body == "".join(parts).encode()
    head, body = _post_raw(fake, {"model": "m", "messages": USER})
    assert head.startswith(b"HTTP/1.1 422") and b"Content-Length: 0" in head
    assert body == b""


def test_raw_turns_record_each_request(fake: FakeOpenAI) -> None:
    done = 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    fake.add_turns([Turn(raw=[done, "data: [DONE]\n\n"]), {"raw": done + "data: [DONE]\n\n"}])
    c = client(fake)
    second = [*USER, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    for messages in (USER, second):
        text = "".join(
            ch.choices[0].delta.content or ""
            for ch in c.chat.completions.create(model="m", messages=messages, stream=True)
        )
        assert text == "ok"
    assert [body["messages"] for body in fake.chat_requests()] == [USER, second]
    assert fake.turns_left == 0


def test_raw_cut_ends_without_terminator(fake: FakeOpenAI) -> None:
    first = 'data: {"choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}\n\n'
    fake.add_turns([Turn(raw=[first], fault="cut")])
    with pytest.raises(openai.APIConnectionError):
        list(client(fake).chat.completions.create(model="m", messages=USER, stream=True))


def test_raw_turn_validation() -> None:
    with pytest.raises(TypeError):
        Turn(raw=[1])  # type: ignore[list-item]
    assert Turn(raw=[b"\xff\xfe", "\u2713"]).raw_parts() == [b"\xff\xfe", "\u2713".encode()]
    with pytest.raises(ValueError):
        Turn(raw="{}", status=500)
    with pytest.raises(ValueError):
        Turn(raw="{}", fault="hang")
    turn = Turn.from_dict({"raw": ["a", "", "b"], "raw_status": 418, "raw_headers": None})
    assert turn.raw_parts() == [b"a", b"b"] and turn.raw_status == 418


def test_rejections_as_raw_turns_answer_every_matching_request() -> None:
    no_tools = '{"error":{"message":"gemma does not support tools","type":"invalid_request_error"}}'
    mistral = '{"object":"error","message":{"detail":[{"loc":["body","stream_options"]}]}}'
    ok = 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    with FakeOpenAI(
        [Turn(raw=ok + "data: [DONE]\n\n")],
        reject_tools={"raw": no_tools, "raw_status": 400},
        reject_stream_options=Turn(raw=mistral, raw_status=422),
    ) as server:
        c = client(server)
        tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        for _ in range(2):  # the same answer each time; the script is untouched
            with pytest.raises(openai.BadRequestError) as info:
                c.chat.completions.create(model="m", messages=USER, tools=[tool])  # type: ignore[list-item]
            assert info.value.response.text == no_tools
        with pytest.raises(openai.UnprocessableEntityError) as unprocessable:
            c.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        assert unprocessable.value.response.text == mistral
        assert server.turns_left == 1
        chunks = list(c.chat.completions.create(model="m", messages=USER, stream=True))
        assert chunks[0].choices[0].delta.content == "ok"
        assert len(server.chat_requests()) == 4
    with pytest.raises(ValueError):
        FakeOpenAI(reject_tools=Turn(content="not raw"))


def test_cli_mode_script_with_raw_turns_and_rejections(tmp_path: Path) -> None:
    no_tools = '{"error":{"message":"m does not support tools","type":"invalid_request_error"}}'
    ok = 'data: {"choices":[{"index":0,"delta":{"content":"raw"},"finish_reason":"stop"}]}\n\n'
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            {
                "turns": [{"raw": [ok, "data: [DONE]\n\n"]}],
                "reject_tools": {"raw": no_tools, "raw_status": 400},
                "reject_stream_options": {"raw": "", "raw_status": 422},
            }
        ),
        encoding="utf-8",
    )
    proc = _spawn_cli("--script", str(script))
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        c = openai.OpenAI(base_url=info["base_url"], api_key="x", max_retries=0, timeout=HANG_S)
        tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        with pytest.raises(openai.BadRequestError) as info_tools:
            c.chat.completions.create(model="m", messages=USER, tools=[tool])  # type: ignore[list-item]
        assert info_tools.value.response.text == no_tools
        with pytest.raises(openai.UnprocessableEntityError):
            c.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        chunks = list(c.chat.completions.create(model="m", messages=USER, stream=True))
        assert chunks[0].choices[0].delta.content == "raw"
    finally:
        proc.terminate()
        proc.communicate(timeout=HANG_S)
    assert proc.returncode == 0


def test_reject_if_answers_matching_requests_only(fake: FakeOpenAI) -> None:
    groq = (
        '{"error":{"message":"property \'reasoning\' is unsupported",'
        '"type":"invalid_request_error"}}'
    )
    fake.reject_if(
        lambda body: any("reasoning" in m for m in body["messages"]),
        Turn(raw=groq, raw_status=400),
    )
    fake.add_turns([Turn(content="fine")])
    c = client(fake)
    with_reasoning: list[Any] = [*USER, {"role": "assistant", "content": "x", "reasoning": "r"}]
    with pytest.raises(openai.BadRequestError) as info:
        c.chat.completions.create(model="m", messages=with_reasoning)
    assert info.value.response.text == groq
    assert fake.turns_left == 1
    assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "fine"
    with pytest.raises(ValueError):
        fake.reject_if(lambda body: True, Turn(content="not raw"))
