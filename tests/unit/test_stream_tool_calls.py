"""Tool calls, reasoning fields and usage as real servers stream them, replayed byte for byte.

Each stream below is written from the named server's source or documentation and
served raw by the fake server, then read by the real `openai` client inside
`ModelClient`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from lantern.agent.provider.client import ModelClient, Reply
from lantern.agent.reply import ChatTurn

from tests.fakes.openai_server import FakeOpenAI, Turn

MESSAGES = [{"role": "user", "content": "where is greet defined?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for name in ("read_file", "search", "list_files")
]
ID_FORM = re.compile(r"^[A-Za-z0-9]{9}$")


def event(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    choice_index: bool = True,
    **top: Any,
) -> dict[str, Any]:
    choice: dict[str, Any] = {"delta": delta or {}, "finish_reason": finish}
    if choice_index:
        choice["index"] = 0
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [choice],
        **top,
    }


def sse(*chunks: dict[str, Any], done: bool = True) -> list[str]:
    """One socket write per event, as servers flush them."""
    return [event(c) for c in chunks] + (["data: [DONE]\n\n"] if done else [])


Make = Callable[..., ModelClient]


@pytest.fixture
async def make(fake: FakeOpenAI) -> AsyncIterator[Make]:
    made: list[ModelClient] = []

    def build(model: str = "fake-model") -> ModelClient:
        client = ModelClient(
            model=model, base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=0
        )
        made.append(client)
        return client

    yield build
    for client in made:
        await client.close()


async def ask(client: ModelClient) -> tuple[Reply, list[str], list[str]]:
    texts: list[str] = []
    thoughts: list[str] = []
    reply = await client.complete(
        ChatTurn(MESSAGES, TOOLS, texts.append, on_reasoning=thoughts.append)
    )
    return reply, texts, thoughts


def calls(reply: Reply) -> list[tuple[str, str]]:
    return [(c.name, c.arguments) for c in reply.tool_calls]


def call_delta(*pieces: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A delta carrying tool-call pieces (keys in the order given), beside other `fields`."""
    return {**fields, "tool_calls": list(pieces)}


def fn(name: str | None = None, arguments: str | None = None) -> dict[str, str]:
    """The `function` of a tool-call piece, with only the keys given."""
    given = {"name": name, "arguments": arguments}
    return {key: value for key, value in given.items() if value is not None}


async def replay(fake: FakeOpenAI, make: Make, *chunks: dict[str, Any]) -> Reply:
    """Serve one reply of `chunks` and read it with a fresh client."""
    fake.add_turns([Turn(raw=sse(*chunks))])
    reply, _, _ = await ask(make())
    return reply


# --- tool-call shapes ------------------------------------------------------------------------


async def test_ollama_two_calls_both_index_zero(fake: FakeOpenAI, make: Make) -> None:
    # Ollama openai/openai.go toChunk: each call of a reply in its own chunk, each listed
    # from index 0 with its own id; finish_reason "stop" even with calls (older releases).
    def whole(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        piece = {"id": call_id, "index": 0, "type": "function", "function": fn(name, arguments)}
        return chunk(call_delta(piece, role="assistant", content=""))

    fake.add_turns(
        [
            Turn(
                raw=sse(
                    whole("call_k3n1xq7e", "read_file", '{"path":"src/a.py"}'),
                    whole("call_p0f2mz9d", "search", '{"pattern":"greet"}'),
                    chunk({"role": "assistant", "content": ""}, "stop"),
                )
            )
        ]
    )
    reply, texts, _ = await ask(make())
    assert calls(reply) == [
        ("read_file", '{"path":"src/a.py"}'),
        ("search", '{"pattern":"greet"}'),
    ]
    assert [c.id for c in reply.tool_calls] == ["call_k3n1xq7e", "call_p0f2mz9d"]
    assert reply.content == "" and texts == []


async def test_ollama_two_calls_index_zero_in_one_chunk(fake: FakeOpenAI, make: Make) -> None:
    # Ollama openai/openai.go when the model's whole reply is parsed at once: both calls in
    # the same delta, both with index 0, and finish_reason "tool_calls".
    both = [
        {"id": "call_a1", "index": 0, "type": "function",
         "function": {"name": "read_file", "arguments": '{"path":"a.py"}'}},
        {"id": "call_b2", "index": 0, "type": "function",
         "function": {"name": "search", "arguments": '{"pattern":"x"}'}},
    ]  # fmt: skip
    reply = await replay(
        fake, make, chunk(call_delta(*both, role="assistant")), chunk({}, "tool_calls")
    )
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_a1", "read_file", '{"path":"a.py"}'),
        ("call_b2", "search", '{"pattern":"x"}'),
    ]


async def test_no_index_new_id_starts_a_new_call(fake: FakeOpenAI, make: Make) -> None:
    # Older Ollama (before index was added to openai.go ToolCall): no "index" key at all.
    first = {"id": "call_1", "type": "function", "function": fn("list_files", "{}")}
    second = {"id": "call_2", "type": "function", "function": fn("list_files", '{"glob":"*.py"}')}
    reply = await replay(
        fake,
        make,
        chunk(call_delta(first, role="assistant")),
        chunk(call_delta(second, role="assistant")),
        chunk({}, "tool_calls"),
    )
    assert calls(reply) == [("list_files", "{}"), ("list_files", '{"glob":"*.py"}')]
    assert [c.id for c in reply.tool_calls] == ["call_1", "call_2"]


async def test_gemini_calls_without_index_or_id_keep_thought_signature(
    fake: FakeOpenAI, make: Make
) -> None:
    # Gemini OpenAI compatibility (ai.google.dev/gemini-api/docs/openai, thought signatures):
    # each call whole in one delta, no index, an empty id; the first call of a step carries
    # extra_content.google.thought_signature, which must go back unchanged. The same tool
    # twice in a row is still two calls.
    signature = "CiQBcsjafE1+o9Q/3xQ0zZmX2Vh8pQ=="
    signed = {"extra_content": {"google": {"thought_signature": signature}}}

    def whole(path: str, **extra: Any) -> dict[str, Any]:
        function = {"arguments": f'{{"path":"{path}"}}', "name": "read_file"}
        piece = {**extra, "function": function, "id": "", "type": "function"}
        return chunk(call_delta(piece, role="assistant"))

    reply = await replay(fake, make, whole("a.py", **signed), whole("b.py"), chunk({}, "stop"))
    assert calls(reply) == [("read_file", '{"path":"a.py"}'), ("read_file", '{"path":"b.py"}')]
    first, second = reply.tool_calls
    assert first.extra == {"extra_content": {"google": {"thought_signature": signature}}}
    assert second.extra == {}
    # Made ids: 9 letters and digits, distinct.
    assert ID_FORM.match(first.id) and ID_FORM.match(second.id) and first.id != second.id


async def test_mistral_null_ids_continue_and_never_overwrite(fake: FakeOpenAI, make: Make) -> None:
    # Devstral served by vLLM's mistral tool parser: the first delta carries the 9-character
    # id and the name, later argument deltas carry "id": "null" (a string) and an empty name;
    # some servers send null or "" instead.
    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": ""}),
        chunk(call_delta({"index": 0, "id": "D7pTB4tmF", "type": "function",
                          "function": fn("search", "")})),
        chunk(call_delta({"index": 0, "id": "null", "type": "function",
                          "function": fn("", '{"pat')})),
        chunk(call_delta({"index": 0, "id": None, "function": fn(arguments='tern": "gre')})),
        chunk(call_delta({"index": 0, "id": "", "function": fn("", 'et"}')})),
        chunk({}, "tool_calls"),
    )  # fmt: skip
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("D7pTB4tmF", "search", '{"pattern": "greet"}')
    ]


async def test_vllm_hermes_pieces_two_calls_by_index(fake: FakeOpenAI, make: Make) -> None:
    # vLLM serving_chat.py with the hermes parser: id, type and name in the first delta of
    # each index, then the arguments in pieces; llama.cpp (--jinja) streams the same way.
    def named(index: int, call_id: str, name: str) -> dict[str, Any]:
        return chunk(
            call_delta({"id": call_id, "type": "function", "index": index, "function": fn(name)})
        )

    def more(index: int, arguments: str) -> dict[str, Any]:
        return chunk(call_delta({"index": index, "function": fn(arguments=arguments)}))

    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": ""}),
        named(0, "chatcmpl-tool-8d1", "read_file"),
        more(0, '{"path": '),
        more(0, '"a.py"}'),
        named(1, "chatcmpl-tool-8d2", "search"),
        more(1, '{"pattern"'),
        more(1, ': "x"}'),
        chunk({}, "tool_calls"),
    )
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("chatcmpl-tool-8d1", "read_file", '{"path": "a.py"}'),
        ("chatcmpl-tool-8d2", "search", '{"pattern": "x"}'),
    ]


async def test_fresh_id_on_each_argument_piece_continues(fake: FakeOpenAI, make: Make) -> None:
    # Poolside's streaming API (poolsideai/pool issue 9): the first delta has one id and the
    # name, every later argument piece a different id and no name.
    reply = await replay(
        fake,
        make,
        chunk(call_delta({"index": 0, "id": "tc_a", "type": "function",
                          "function": fn("search", "")})),
        chunk(call_delta({"index": 0, "id": "tc_b", "function": fn(arguments='{"pattern": ')})),
        chunk(call_delta({"index": 0, "id": "tc_c", "function": fn(arguments='"x"}')})),
        chunk({}, "tool_calls"),
    )  # fmt: skip
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("tc_a", "search", '{"pattern": "x"}')
    ]


async def test_repeated_name_is_not_concatenated(fake: FakeOpenAI, make: Make) -> None:
    # Servers that repeat id and name on every delta of one call (seen from proxies in
    # front of other APIs); finish_reason "eos" as some llama.cpp builds report it.
    piece = {"index": 0, "id": "call_9", "type": "function"}
    reply = await replay(
        fake,
        make,
        chunk(call_delta({**piece, "function": fn("read_file", '{"path"')})),
        chunk(call_delta({**piece, "function": fn("read_file", ': "a"}')})),
        chunk({}, "eos"),
    )
    assert calls(reply) == [("read_file", '{"path": "a"}')]
    assert reply.tool_calls[0].id == "call_9"


async def test_missing_ids_are_made_unique(fake: FakeOpenAI, make: Make) -> None:
    # LM Studio / llama.cpp without ids: index present, no id key at all.
    reply = await replay(
        fake,
        make,
        chunk(call_delta({"index": 0, "function": fn("list_files", "{}")})),
        chunk(call_delta({"index": 1, "function": fn("search", "{}")})),
        chunk({}, "tool_calls"),
    )
    ids = [c.id for c in reply.tool_calls]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(ID_FORM.match(i) for i in ids)


async def test_reused_id_without_index_is_a_second_call(fake: FakeOpenAI, make: Make) -> None:
    # Proxies that number every call "call_0" (seen behind Gemini and some local servers),
    # whole calls without an index: two calls, never one with both argument objects joined.
    piece = {"id": "call_0", "type": "function"}
    reply = await replay(
        fake,
        make,
        chunk(call_delta({**piece, "function": fn("read_file", '{"path": "a"}')})),
        chunk(call_delta({**piece, "function": fn("read_file", '{"path": "b"}')})),
        chunk({}, "tool_calls"),
    )
    assert calls(reply) == [("read_file", '{"path": "a"}'), ("read_file", '{"path": "b"}')]
    ids = [c.id for c in reply.tool_calls]
    assert ids[0] == "call_0" and ID_FORM.match(ids[1])


async def test_repeated_id_and_name_without_index_mid_arguments_continue(
    fake: FakeOpenAI, make: Make
) -> None:
    # The same proxies repeating id and name on every piece of one call: still one call.
    piece = {"id": "call_0", "type": "function"}
    reply = await replay(
        fake,
        make,
        chunk(call_delta({**piece, "function": fn("read_file", '{"path": ')})),
        chunk(call_delta({**piece, "function": fn("read_file", '"a"}')})),
        chunk({}, "tool_calls"),
    )
    assert calls(reply) == [("read_file", '{"path": "a"}')]


async def test_tool_calls_sent_as_one_object_not_a_list(fake: FakeOpenAI, make: Make) -> None:
    # Servers that serialise a delta's call as an object (Hugging Face TGI's messages API
    # in 2.x releases): `"tool_calls": {...}`, the name and an empty id on every piece.
    def piece(arguments: str) -> dict[str, Any]:
        function = {"description": None, "name": "read_file", "arguments": arguments}
        return {"index": 0, "id": "", "type": "function", "function": function}

    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": None, "tool_calls": piece('{"path": ')}),
        chunk({"role": "assistant", "content": None, "tool_calls": piece('"a.py"}')}),
        chunk({"role": "assistant"}, "eos"),
    )
    assert calls(reply) == [("read_file", '{"path": "a.py"}')]
    assert ID_FORM.match(reply.tool_calls[0].id)


async def test_legacy_function_call_delta(fake: FakeOpenAI, make: Make) -> None:
    # The pre-tools streaming shape (`delta.function_call`, finish_reason "function_call"),
    # still sent by FastChat-era servers and some proxies: one call, no id.
    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": None, "function_call": fn("read_file", "")}),
        chunk({"function_call": {"arguments": '{"path": '}}),
        chunk({"function_call": {"arguments": '"a.py"}'}}),
        chunk({}, "function_call"),
    )
    assert calls(reply) == [("read_file", '{"path": "a.py"}')]
    assert ID_FORM.match(reply.tool_calls[0].id)


async def test_one_character_argument_pieces_and_null_fields(fake: FakeOpenAI, make: Make) -> None:
    # Very long arguments streamed a character at a time (vLLM's partial-JSON diffing), with
    # `content: null` and `tool_calls: null` deltas around them as pydantic servers write.
    arguments = json.dumps({"path": "src/" + "deep/" * 200 + "app.py"})
    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": None, "tool_calls": None}),
        chunk(call_delta({"index": 0, "id": "call_long", "type": "function",
                          "function": fn("read_file", "")}, content=None)),
        *(chunk(call_delta({"index": 0, "function": fn(arguments=c)})) for c in arguments),
        chunk({"content": None, "tool_calls": None}, "tool_calls"),
    )  # fmt: skip
    assert calls(reply) == [("read_file", arguments)]
    assert reply.content == ""


# --- reasoning fields ------------------------------------------------------------------------


async def test_deepseek_reasoning_content_kept_for_the_next_request(
    fake: FakeOpenAI, make: Make
) -> None:
    # DeepSeek API docs (thinking mode): delta.reasoning_content streams first, then the
    # tool call; reasoning_content must be sent back on that assistant message.
    fake.add_turns(
        [
            Turn(
                raw=sse(
                    chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
                    chunk({"content": None, "reasoning_content": "The user wants "}),
                    chunk({"content": None, "reasoning_content": "greet."}),
                    chunk(
                        {
                            "content": None,
                            "reasoning_content": None,
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_00_abc",
                                    "type": "function",
                                    "function": {
                                        "name": "search",
                                        "arguments": '{"pattern":"greet"}',
                                    },
                                }
                            ],
                        }
                    ),
                    chunk(
                        {"content": None, "reasoning_content": None},
                        "tool_calls",
                        usage={"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
                    ),
                )
            )
        ]
    )
    reply, texts, thoughts = await ask(make())
    assert reply.extra == {"reasoning_content": "The user wants greet."}
    assert reply.reasoning == "The user wants greet."
    assert "".join(thoughts) == "The user wants greet."
    assert texts == [] and reply.content == ""
    assert calls(reply) == [("search", '{"pattern":"greet"}')]
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (40, 9)
    assert not reply.usage.estimated


async def test_openrouter_reasoning_and_details_merged(fake: FakeOpenAI, make: Make) -> None:
    # OpenRouter reasoning-tokens docs: delta.reasoning text plus reasoning_details pieces of
    # one detail (same index and type), the signature arriving last; ": OPENROUTER
    # PROCESSING" comment lines are sent while waiting.
    detail = {"type": "reasoning.text", "index": 0, "format": "anthropic-claude-v1"}
    raw = [
        ": OPENROUTER PROCESSING\n\n",
        *sse(
            chunk(
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning": "Look ",
                    "reasoning_details": [{**detail, "text": "Look "}],
                }
            ),
            chunk(
                {
                    "content": "",
                    "reasoning": "first.",
                    "reasoning_details": [{**detail, "text": "first."}],
                }
            ),
            chunk(
                {
                    "content": "",
                    "reasoning": None,
                    "reasoning_details": [{**detail, "text": "", "signature": "sig=="}],
                }
            ),
            chunk({"content": "It is in util.py."}),
            chunk({"content": ""}, "stop"),
        ),
    ]
    fake.add_turns([Turn(raw=raw)])
    reply, texts, thoughts = await ask(make())
    assert reply.content == "It is in util.py." and "".join(texts) == reply.content
    assert reply.extra == {
        "reasoning": "Look first.",
        "reasoning_details": [{**detail, "text": "Look first.", "signature": "sig=="}],
    }
    assert "".join(thoughts) == "Look first."


async def test_both_reasoning_fields_shown_once(fake: FakeOpenAI, make: Make) -> None:
    # vLLM releases that fill both delta.reasoning and delta.reasoning_content with the
    # same text (serving_chat.py during the field's rename).
    fake.add_turns(
        [
            Turn(
                raw=sse(
                    chunk({"role": "assistant", "reasoning": "Hmm.", "reasoning_content": "Hmm."}),
                    chunk({"content": "Done."}, "stop"),
                )
            )
        ]
    )
    reply, _, thoughts = await ask(make())
    assert thoughts == ["Hmm."] and reply.reasoning == "Hmm."
    assert reply.extra == {"reasoning": "Hmm.", "reasoning_content": "Hmm."}
    assert reply.content == "Done."


# --- usage -------------------------------------------------------------------------------------


async def test_groq_usage_under_x_groq(fake: FakeOpenAI, make: Make) -> None:
    # Groq API reference: the last chunk carries x_groq.usage (no top-level usage when
    # stream_options is not honoured).
    fake.add_turns(
        [
            Turn(
                raw=sse(
                    chunk({"role": "assistant", "content": "Hi"}, x_groq={"id": "req_01"}),
                    chunk(
                        {},
                        "stop",
                        x_groq={
                            "id": "req_01",
                            "usage": {
                                "queue_time": 0.01,
                                "prompt_tokens": 321,
                                "completion_tokens": 4,
                                "total_tokens": 325,
                            },
                        },
                    ),
                )
            )
        ]
    )
    reply, _, _ = await ask(make())
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (321, 4)
    assert not reply.usage.estimated


async def test_running_usage_on_every_chunk_is_counted_once(fake: FakeOpenAI, make: Make) -> None:
    # Servers that put the running totals on every chunk (Fireworks, DeepInfra, some vLLM
    # forks with continuous usage stats): the counts are cumulative, so the last one holds.
    def counted(done: int) -> dict[str, int]:
        return {"prompt_tokens": 50, "completion_tokens": done, "total_tokens": 50 + done}

    reply = await replay(
        fake,
        make,
        chunk({"role": "assistant", "content": "A"}, usage=counted(1)),
        chunk({"content": "B"}, usage=counted(2)),
        chunk({}, "stop", usage=counted(3)),
        {**chunk({}), "choices": [], "usage": counted(3)},
    )
    assert reply.usage is not None and not reply.usage.estimated
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (50, 3)


async def test_no_usage_sent_is_estimated(fake: FakeOpenAI, make: Make) -> None:
    # Older Ollama and LM Studio ignore stream_options: no usage anywhere in the stream.
    answer = "The function greet is defined in src/util.py."
    fake.add_turns([Turn(raw=sse(chunk({"content": answer}), chunk({}, "stop")))])
    reply, _, _ = await ask(make())
    assert reply.usage is not None and reply.usage.estimated
    assert reply.usage.completion_tokens == (len(answer) + 3) // 4
    assert reply.usage.prompt_tokens > len(json.dumps(MESSAGES)) // 4


async def test_tool_choice_is_sent_with_tools_only(fake: FakeOpenAI, make: Make) -> None:
    fake.add_turns([Turn(content="a"), Turn(content="b")])
    client = make()
    await client.complete(ChatTurn(MESSAGES, TOOLS, tool_choice="none"))
    await client.complete(ChatTurn(MESSAGES, None, tool_choice="none"))
    first, second = fake.chat_requests()
    assert first["tool_choice"] == "none" and first["tools"] == TOOLS
    assert "tool_choice" not in second and "tools" not in second
