"""A model's reply is bounded: past 1 MiB (text, reasoning and tool-call arguments) it
is cut off, and a stream that only sends empty chunks stalls like a silent one.

The fake server replays the hostile streams byte for byte; waits are bounded by
HANG_S only (never timed).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from lantern.agent.provider.client import ModelClient, ModelError
from lantern.agent.provider.stream import MAX_REPLY_BYTES, ReplyTooLarge
from lantern.agent.reply import ChatTurn

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

MESSAGES = [{"role": "user", "content": "hi"}]
PIECE = "all work and no play " * 780  # ~16 KiB


def sse(delta: dict[str, object], finish: str | None = None) -> str:
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(chunk)}\n\n"


def endless(delta_of: object, pieces: int = 1000) -> Turn:
    """A reply that goes on well past the cap (16 MiB), then hangs without an end."""
    parts = [sse(delta_of(i)) for i in range(pieces)]  # type: ignore[operator]
    return Turn(raw=parts, fault="stall")


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[ModelClient]:
    made = ModelClient(
        model="fake-model",
        base_url=fake.base_url,
        api_key="x",
        request_timeout=600.0,
        stall_timeout=1.0,
        max_retries=0,
    )
    yield made
    await made.close()


async def ask(client: ModelClient, shown: list[str] | None = None) -> object:
    turn = ChatTurn(MESSAGES, None, (shown if shown is not None else []).append)
    return await asyncio.wait_for(client.complete(turn), HANG_S)


async def test_an_endless_answer_is_cut_at_the_cap(fake: FakeOpenAI, client: ModelClient) -> None:
    fake.add_turns([endless(lambda i: {"content": PIECE})])
    shown: list[str] = []
    with pytest.raises(ReplyTooLarge) as caught:
        await ask(client, shown)
    reply = caught.value.reply
    assert reply.finish_reason == "length"
    assert MAX_REPLY_BYTES < len(reply.content) < MAX_REPLY_BYTES + 2 * len(PIECE)
    assert "".join(shown) == reply.content
    assert caught.value.kind == "truncated" and "1 MiB" in caught.value.message
    assert len(fake.chat_requests()) == 1  # not sent again


async def test_endless_reasoning_is_cut_too(fake: FakeOpenAI, client: ModelClient) -> None:
    fake.add_turns([endless(lambda i: {"reasoning_content": PIECE})])
    with pytest.raises(ReplyTooLarge) as caught:
        await ask(client)
    assert len(caught.value.reply.reasoning) > MAX_REPLY_BYTES


async def test_endless_tool_call_arguments_are_cut_too(
    fake: FakeOpenAI, client: ModelClient
) -> None:
    def delta(i: int) -> object:
        call: dict[str, object] = {"index": 0, "function": {"arguments": PIECE}}
        if i == 0:
            call = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"p'}}
        return {"tool_calls": [call]}

    fake.add_turns([endless(delta)])
    with pytest.raises(ReplyTooLarge) as caught:
        await ask(client)
    (call,) = caught.value.reply.tool_calls
    assert call.name == "read_file" and len(call.arguments) > MAX_REPLY_BYTES


async def test_a_stream_of_empty_chunks_stalls(fake: FakeOpenAI, client: ModelClient) -> None:
    """Keep-alives that never add a byte do not keep a reply alive: after the stall time
    (1 s here) without progress the stream is a stalled one, retried once, then an error."""
    first = sse({"role": "assistant", "content": "thinking about it"})
    keep_alive = [sse({}), sse({"content": ""}), ": keep-alive\n\n"] * 3000
    turn = Turn(raw=[first, *keep_alive], chunk_delay=0.05)  # ~450 s of keep-alives
    fake.add_turns([turn, turn])
    with pytest.raises(ModelError) as caught:
        await ask(client)
    assert caught.value.kind == "stream" and "stalled" in caught.value.message
    assert len(fake.chat_requests()) == 2
