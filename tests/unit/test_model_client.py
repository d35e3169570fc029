"""`ModelClient` against the scripted fake server: streaming, tool calls, usage, faults."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from lantern.agent.provider.client import ModelClient, ModelError, Reply, Usage
from lantern.agent.reply import ChatTurn
from lantern.agent.tokens import estimate_tokens, message_tokens

from tests.fakes.openai_server import FakeOpenAI, Turn

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]

MakeClient = Callable[..., ModelClient]


@pytest.fixture
async def make(fake: FakeOpenAI) -> AsyncIterator[MakeClient]:
    made: list[ModelClient] = []

    def build(**options: Any) -> ModelClient:
        settings: dict[str, Any] = {
            "model": "fake-model",
            "base_url": fake.base_url,
            "api_key": "x",
            "request_timeout": 10.0,
            "max_retries": 0,
        }
        settings.update(options)
        client = ModelClient(**settings)
        made.append(client)
        return client

    yield build
    for client in made:
        await client.close()


async def complete(
    client: ModelClient, tools: Any = TOOLS, retries: list[str] | None = None
) -> tuple[Reply, list[str]]:
    texts: list[str] = []
    reply = await client.complete(
        ChatTurn(MESSAGES, tools, texts.append, None if retries is None else retries.append)
    )
    return reply, texts


# --- streaming -----------------------------------------------------------------------------


async def test_streams_text_and_collects_usage(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns(
        [
            Turn(
                content="Hello there, how are you?",
                usage={"prompt_tokens": 12, "completion_tokens": 6},
            )
        ]
    )
    reply, texts = await complete(make())
    assert reply.content == "Hello there, how are you?"
    assert len(texts) > 1 and "".join(texts) == reply.content
    assert reply.finish_reason == "stop"
    assert reply.tool_calls == []
    assert reply.usage == Usage(12, 6)
    (request,) = fake.chat_requests()
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert request["model"] == "fake-model"
    assert request["messages"] == MESSAGES
    assert request["tools"] == TOOLS


async def test_no_tools_sends_no_tools_key(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(content="ok")])
    await complete(make(), tools=None)
    assert "tools" not in fake.chat_requests()[0]


async def test_endpoint_rejecting_tool_choice_is_asked_without_tools(
    fake: FakeOpenAI, make: MakeClient
) -> None:
    # The last step sends the tools with tool_choice "none"; a server whose schema has no
    # tool_choice (422 naming it, as pydantic-validated servers answer) gets the request
    # again without tools instead of failing the answer.
    fake.reject_if(
        lambda body: "tool_choice" in body,
        Turn(
            raw='{"detail": [{"loc": ["body", "tool_choice"], "msg": "extra fields not '
            'permitted", "type": "value_error.extra"}]}',
            raw_status=422,
            raw_content_type="application/json",
        ),
    )
    fake.add_turns([Turn(content="the answer")])
    reply = await make().complete(ChatTurn(MESSAGES, TOOLS, tool_choice="none"))
    assert reply.content == "the answer"
    first, again = fake.chat_requests()
    assert first["tool_choice"] == "none" and first["tools"] == TOOLS
    assert "tools" not in again and "tool_choice" not in again


async def test_endpoint_rejecting_stream_options(make: MakeClient) -> None:
    with FakeOpenAI(
        [Turn(content="first"), Turn(content="second")], reject_stream_options=True
    ) as strict:
        client = make(base_url=strict.base_url)
        reply, _ = await complete(client)
        assert reply.content == "first"
        # No usage without the option: estimated from characters (4 a token), marked so,
        # with the same estimate the conversation's budget uses.
        assert reply.usage is not None and reply.usage.estimated
        assert reply.usage.completion_tokens == 2  # "first"
        tools = estimate_tokens(json.dumps(TOOLS, ensure_ascii=False))
        assert reply.usage.prompt_tokens == message_tokens(MESSAGES) + tools
        again, _ = await complete(client)
        assert again.content == "second"
        chats = strict.chat_requests()
    # Asked with the option once, then without it from then on.
    assert ["stream_options" in c for c in chats] == [True, False, False]


async def test_tool_calls_assembled_by_index(fake: FakeOpenAI, make: MakeClient) -> None:
    calls = [
        {"id": "call_a", "name": "read_file", "arguments": {"path": "src/a.py", "limit": 20}},
        {"id": "call_b", "name": "search", "arguments": {"pattern": "def \\w+\\(", "glob": "*.py"}},
        {"id": "call_c", "name": "list_files", "arguments": {}},
    ]
    fake.add_turns([Turn(content="Looking.", tool_calls=calls, interleave_tool_calls=True)])
    reply, _ = await complete(make())
    assert reply.finish_reason == "tool_calls"
    assert reply.content == "Looking."
    assert [(c.id, c.name) for c in reply.tool_calls] == [
        ("call_a", "read_file"),
        ("call_b", "search"),
        ("call_c", "list_files"),
    ]
    assert reply.tool_calls[0].arguments == '{"path": "src/a.py", "limit": 20}'
    assert reply.tool_calls[1].arguments == '{"pattern": "def \\\\w+\\\\(", "glob": "*.py"}'
    assert reply.tool_calls[2].arguments == "{}"


async def test_malformed_arguments_are_kept_raw(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(tool_calls=[{"id": "x", "name": "read_file", "arguments": '{"pa'}])])
    reply, _ = await complete(make())
    assert reply.tool_calls[0].arguments == '{"pa'


async def test_finish_reason_length_is_reported(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns(
        [
            Turn(
                tool_calls=[{"id": "x", "name": "read_file", "arguments": '{"path": "a'}],
                finish_reason="length",
            )
        ]
    )
    reply, _ = await complete(make())
    assert reply.finish_reason == "length"


# --- faults: the stream --------------------------------------------------------------------


async def test_cut_stream_is_retried_once(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(content="one two three four five", fault="cut"), Turn(content="whole")])
    retries: list[str] = []
    reply, _ = await complete(make(), retries=retries)
    assert reply.content == "whole"
    assert len(retries) == 1 and "broke off" in retries[0]
    assert len(fake.chat_requests()) == 2


async def test_cut_twice_is_a_stream_error(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(content="one two three four five", fault="cut")] * 3)
    with pytest.raises(ModelError) as caught:
        await complete(make())
    assert caught.value.kind == "stream"
    assert len(fake.chat_requests()) == 2


async def test_stalled_stream_is_retried_once(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(content="one two three four five", fault="stall"), Turn(content="ok")])
    retries: list[str] = []
    # The stream stalls forever: the stall timer, not the request timeout, ends it.
    reply, _ = await complete(make(request_timeout=10, stall_timeout=0.3), retries=retries)
    assert reply.content == "ok"
    assert len(retries) == 1 and "stalled" in retries[0]


async def test_stalled_twice_is_a_stream_error(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(content="one two three four five", fault="stall")] * 3)
    with pytest.raises(ModelError) as caught:
        await complete(make(request_timeout=10, stall_timeout=0.3))
    assert caught.value.kind == "stream" and "stalled" in caught.value.message
    assert len(fake.chat_requests()) == 2


async def test_hang_before_first_byte_times_out(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(fault="hang")] * 3)
    with pytest.raises(ModelError) as caught:  # the fake never answers: only a timeout ends it
        await complete(make(request_timeout=0.5))
    assert caught.value.kind == "timeout"
    assert "requestTimeoutSeconds" in caught.value.message


# --- faults: HTTP status -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "kind", "words"),
    [
        (Turn(status=401), "auth", ["API key", "401", "`apiKey`"]),
        (Turn(status=403), "auth", ["API key", "403"]),
        (Turn(status=404), "not_found", ["'fake-model'", "404", "`model`"]),
        (
            Turn(status=429, headers={"Retry-After": "7"}),
            "rate_limited",
            ["429", "retry after 7 s"],
        ),
        (Turn(status=429), "rate_limited", ["429", "wait"]),
        (
            Turn(status=400, error_message="This model's maximum context length is 4096 tokens."),
            "context_length",
            ["context window"],
        ),
        (Turn(status=400, error_message="bad tools schema"), "bad_request", ["400", "bad tools"]),
        (Turn(status=500), "server", ["500"]),
        (Turn(status=503), "server", ["503"]),
    ],
)
async def test_status_errors_are_actionable(
    fake: FakeOpenAI, make: MakeClient, turn: Turn, kind: str, words: list[str]
) -> None:
    fake.add_turns([turn])
    with pytest.raises(ModelError) as caught:
        await complete(make())
    assert caught.value.kind == kind
    for word in words:
        assert word in caught.value.message
    assert "--" not in caught.value.message  # an editor shows it: settings, never flags
    assert len(fake.chat_requests()) == 1


async def test_rate_limit_is_retried_by_the_sdk(fake: FakeOpenAI, make: MakeClient) -> None:
    fake.add_turns([Turn(status=429, headers={"Retry-After": "0.1"}), Turn(content="ok")])
    reply, _ = await complete(make(max_retries=2))
    assert reply.content == "ok"
    assert len(fake.chat_requests()) == 2


async def test_unreachable_endpoint(make: MakeClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError) as caught:
        await complete(make(base_url=f"http://127.0.0.1:{port}/v1"))
    assert caught.value.kind == "unreachable"
    assert "cannot reach" in caught.value.message and f"127.0.0.1:{port}" in caught.value.message
