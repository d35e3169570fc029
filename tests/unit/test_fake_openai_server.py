"""The fake OpenAI server (tests/fakes/openai_server.py) against the real `openai` client."""

from __future__ import annotations

import json
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

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "where is main defined?"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, timeout: float = 5.0, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=fake.base_url, api_key="x", max_retries=max_retries, timeout=timeout
    )


def test_binds_loopback_only(fake: FakeOpenAI) -> None:
    assert fake.base_url == f"http://127.0.0.1:{fake.port}/v1"
    assert fake.port > 0


def test_streaming_text_assembles(fake: FakeOpenAI) -> None:
    text = "The function main is defined in server/lantern/cli.py."
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
    stream = client(fake, timeout=3).chat.completions.create(model="m", messages=USER, stream=True)
    received: list[str] = []
    start = time.monotonic()
    with pytest.raises(openai.APIError):
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert time.monotonic() - start < 2
    assert "".join(received)  # some chunks arrived before the cut
    assert "".join(received) != "a b c d e f g h"


def test_cut_non_streaming_raises(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(content="whole answer", fault="cut"), Turn(content="next")])
    c = client(fake, timeout=3)
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="m", messages=USER)
    assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "next"


def test_hang_times_out(fake: FakeOpenAI) -> None:
    fake.add_turns([Turn(fault="hang"), Turn(content="still alive")])
    c = client(fake, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        c.chat.completions.create(model="m", messages=USER)
    assert time.monotonic() - start < 3
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
            client(server, timeout=30).chat.completions.create(model="m", messages=USER)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 3
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.requests
    start = time.monotonic()
    server.stop()
    thread.join(5)
    assert time.monotonic() - start < 3
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
        urllib.request.urlopen(fake.base_url + "/nope", timeout=5)
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


def test_cli_mode(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps({"turns": [{"content": "from the cli"}]}), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.openai_server",
            "--script",
            str(script),
            "--port",
            "0",
            "--record",
            str(record),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["base_url"] == f"http://127.0.0.1:{info['port']}/v1"
        c = openai.OpenAI(base_url=info["base_url"], api_key="x", max_retries=0, timeout=5)
        chunks = list(c.chat.completions.create(model="m", messages=USER, stream=True))
        assert "".join(ch.choices[0].delta.content or "" for ch in chunks) == "from the cli"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0, err
    assert out == ""
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["body"]["messages"] == USER
