"""Errors as real servers send them: every body shape read into words a user can act on.

Bodies and streams are replayed byte for byte by the fake server; each names the
server source or documentation it was written from.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from lantern.agent.provider.client import ModelClient, ModelError, Reply
from lantern.agent.provider.error_body import describe
from lantern.agent.reply import ChatTurn

from tests.fakes.openai_server import FakeOpenAI, Turn

MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
]

Make = Callable[..., ModelClient]


@pytest.fixture
async def make(fake: FakeOpenAI) -> AsyncIterator[Make]:
    made: list[ModelClient] = []

    def build() -> ModelClient:
        client = ModelClient(
            model="m1", base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=0
        )
        made.append(client)
        return client

    yield build
    for client in made:
        await client.close()


def sse(*payloads: dict[str, Any]) -> list[str]:
    return [f"data: {json.dumps(p)}\n\n" for p in payloads] + ["data: [DONE]\n\n"]


def text_chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m1",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }


ANSWER = sse(text_chunk("Fine."), text_chunk("", "stop"))


async def ask(client: ModelClient, tools: Any = TOOLS, retries: list[str] | None = None) -> Reply:
    on_retry = None if retries is None else retries.append
    return await client.complete(ChatTurn(MESSAGES, tools, on_retry=on_retry))


async def fails(client: ModelClient, tools: Any = TOOLS) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await ask(client, tools)
    assert "Error code" not in caught.value.message
    return caught.value


# --- stream_options ----------------------------------------------------------------------------


async def test_mistral_422_naming_stream_options_falls_back(fake: FakeOpenAI, make: Make) -> None:
    # Mistral API (FastAPI/pydantic validation, extra fields forbidden): 422 with the
    # validation list nested under "message".
    body = {
        "object": "error",
        "message": {
            "detail": [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "stream_options"],
                    "msg": "Extra inputs are not permitted",
                    "input": {"include_usage": True},
                }
            ]
        },
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    fake.add_turns([Turn(raw=json.dumps(body), raw_status=422), Turn(raw=ANSWER)])
    reply = await ask(make())
    assert reply.content == "Fine."
    assert ["stream_options" in r for r in fake.chat_requests()] == [True, False]


async def test_bare_422_falls_back(fake: FakeOpenAI, make: Make) -> None:
    # A strict proxy answering 422 with an empty body to any unknown request key.
    fake.add_turns([Turn(raw="", raw_status=422), Turn(raw=ANSWER)])
    reply = await ask(make())
    assert reply.content == "Fine."
    assert len(fake.chat_requests()) == 2


async def test_422_about_something_else_is_reported(fake: FakeOpenAI, make: Make) -> None:
    # vLLM / FastAPI request validation: {"detail": [{"loc": ..., "msg": ...}]}.
    body = {
        "detail": [
            {
                "loc": ["body", "messages", 0, "role"],
                "msg": "Input should be 'user'",
                "type": "literal_error",
            }
        ]
    }
    fake.add_turns([Turn(raw=json.dumps(body), raw_status=422)])
    error = await fails(make())
    assert error.kind == "bad_request"
    assert (
        "422" in error.message and "body.messages.0.role: Input should be 'user'" in error.message
    )
    assert len(fake.chat_requests()) == 1


# --- body shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "raw", "kind", "words"),
    [
        # Gemini OpenAI compatibility: the error body is a JSON array of error objects.
        (
            400,
            '[{"error": {"code": 400, "message": "Function call is missing a thought_signature '
            'in functionCall parts.", "status": "INVALID_ARGUMENT"}}]',
            "bad_request",
            ["400", "missing a thought_signature"],
        ),
        # Mistral message-order validation (mistral-common): code is a string.
        (
            400,
            '{"object": "error", "message": "Unexpected role \'system\' after role \'tool\'", '
            '"type": "invalid_request_message_order", "param": null, "code": "3230"}',
            "bad_request",
            ["400", "Unexpected role 'system' after role 'tool'"],
        ),
        # Ollama native-style error: {"error": "text"}.
        (
            404,
            '{"error": "model \\"qwen9\\" not found, try pulling it first"}',
            "not_found",
            ["404", "try pulling it first", "`model`"],
        ),
        # A reverse proxy in front of the server: plain text.
        (
            502,
            "upstream connect error or disconnect/reset before headers",
            "server",
            ["502", "upstream connect error"],
        ),
        # A non-string message.
        (
            400,
            '{"error": {"message": ["messages: too short", "tools: bad"], "code": 400}}',
            "bad_request",
            ["messages: too short", "tools: bad"],
        ),
        # A body with nothing in it still names the status and what to check.
        (400, "", "bad_request", ["400", "no explanation", "base URL"]),
        # llama.cpp context overflow as an HTTP error.
        (
            400,
            '{"error": {"code": 400, "message": "request (5000 tokens) exceeds the available '
            'context size (4096 tokens), try increasing it", "type": "exceed_context_size_error",'
            ' "n_prompt_tokens": 5000, "n_ctx": 4096}}',
            "context_length",
            ["context window", "5000 tokens"],
        ),
    ],
)
async def test_error_bodies_are_read(
    fake: FakeOpenAI, make: Make, status: int, raw: str, kind: str, words: list[str]
) -> None:
    fake.add_turns([Turn(raw=raw, raw_status=status)])
    error = await fails(make())
    assert error.kind == kind
    for word in words:
        assert word in error.message
    assert len(fake.chat_requests()) == 1


@pytest.mark.parametrize(
    ("status", "raw", "hint"),
    [
        # Ollama openai/openai.go middleware wraps the error in the OpenAI shape.
        (
            400,
            '{"error": {"message": "registry.ollama.ai/library/gemma2:2b does not support '
            'tools", "type": "api_error", "param": null, "code": null}}',
            "model with tool support",
        ),
        # Ollama's native shape.
        (
            400,
            '{"error": "registry.ollama.ai/library/gemma2:2b does not support tools"}',
            "model with tool support",
        ),
        # vLLM serving_chat.py ErrorResponse without --enable-auto-tool-choice.
        (
            400,
            '{"object": "error", "message": "\\"auto\\" tool choice requires '
            '--enable-auto-tool-choice and --tool-call-parser to be set", '
            '"type": "BadRequestError", "param": null, "code": 400}',
            "--enable-auto-tool-choice",
        ),
        # llama.cpp server without --jinja.
        (
            500,
            '{"error": {"code": 500, "message": "tools param requires --jinja flag", '
            '"type": "server_error"}}',
            "--jinja",
        ),
    ],
)
async def test_tools_unsupported_is_its_own_kind(
    fake: FakeOpenAI, make: Make, status: int, raw: str, hint: str
) -> None:
    fake.add_turns([Turn(raw=raw, raw_status=status)])
    error = await fails(make())
    assert error.kind == "tools_unsupported"
    assert str(status) in error.message and hint in error.message
    assert "toolProtocol" in error.message
    assert len(fake.chat_requests()) == 1


async def test_tools_words_without_tools_sent_are_a_plain_error(
    fake: FakeOpenAI, make: Make
) -> None:
    raw = '{"error": "registry.ollama.ai/library/gemma2:2b does not support tools"}'
    fake.add_turns([Turn(raw=raw, raw_status=400)])
    error = await fails(make(), tools=None)
    assert error.kind == "bad_request" and "does not support tools" in error.message


def test_describe_every_shape() -> None:
    assert describe({"error": {"message": "a"}}) == "a"
    assert describe([{"error": {"message": "a"}}, {"error": {"message": "b"}}]) == "a; b"
    assert describe("plain") == "plain"
    assert describe('{"message": "inside a string"}') == "inside a string"
    assert describe({"detail": "Not Found"}) == "Not Found"
    assert describe({"code": 7}) == '{"code": 7}'
    assert describe(None) == ""
    assert len(describe("x" * 1000)) == 300


# --- errors inside a 200 stream ----------------------------------------------------------------


async def test_llama_cpp_context_error_in_stream_is_not_retried(
    fake: FakeOpenAI, make: Make
) -> None:
    # llama.cpp server: a failure after the 200 header is sent as data: {"error": {...}}.
    error_event = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 8192,
        }
    }
    fake.add_turns([Turn(raw=[f"data: {json.dumps(error_event)}\n\n"]), Turn(raw=ANSWER)])
    retries: list[str] = []
    with pytest.raises(ModelError) as caught:
        await ask(make(), retries=retries)
    assert caught.value.kind == "context_length"
    assert "exceeds the available context size" in caught.value.message
    assert retries == [] and len(fake.chat_requests()) == 1


async def test_llama_cpp_error_field_line_is_read(fake: FakeOpenAI, make: Make) -> None:
    # llama.cpp server builds whose server_sent_event(sink, "error", ...) writes the failure
    # as an `error:` SSE field (not `data:`), followed by data: [DONE].
    line = (
        'error: {"code": 400, "message": "the request exceeds the available context size, '
        'try increasing it", "type": "exceed_context_size_error"}\n\n'
    )
    fake.add_turns([Turn(raw=[line, "data: [DONE]\n\n"]), Turn(raw=ANSWER)])
    retries: list[str] = []
    with pytest.raises(ModelError) as caught:
        await ask(make(), retries=retries)
    assert caught.value.kind == "context_length"
    assert "exceeds the available context size" in caught.value.message
    assert retries == [] and len(fake.chat_requests()) == 1


async def test_vllm_bare_error_response_in_stream_is_read_and_not_resent(
    fake: FakeOpenAI, make: Make
) -> None:
    # vLLM <= 0.3 serving_chat.py: a failure after the 200 header is the ErrorResponse
    # model itself, `data: {"object":"error","message":…}`, with no "error" key.
    bare = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you "
        "requested 5120 tokens (4096 in the messages, 1024 in the completion).",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    fake.add_turns([Turn(raw=sse(text_chunk("Par"), bare)), Turn(raw=ANSWER)])
    retries: list[str] = []
    with pytest.raises(ModelError) as caught:
        await ask(make(), retries=retries)
    assert caught.value.kind == "context_length"
    assert "maximum context length is 4096 tokens" in caught.value.message
    assert retries == [] and len(fake.chat_requests()) == 1


async def test_named_error_event_in_stream_is_read(fake: FakeOpenAI, make: Make) -> None:
    # Servers that name the event (`event: error`) and put the bare error in `data:`; a
    # 4xx-coded one is final, so it is neither lost nor resent.
    raw = [
        *sse(text_chunk("Par"))[:-1],
        'event: error\ndata: {"message": "Invalid tool schema for read_file", "code": 400}\n\n',
        "data: [DONE]\n\n",
    ]
    fake.add_turns([Turn(raw=raw), Turn(raw=ANSWER)])
    retries: list[str] = []
    with pytest.raises(ModelError) as caught:
        await ask(make(), retries=retries)
    assert "Invalid tool schema for read_file" in caught.value.message
    assert retries == [] and len(fake.chat_requests()) == 1


async def test_sse_variants_crlf_no_space_event_lines_no_done(fake: FakeOpenAI, make: Make) -> None:
    # CRLF line ends (ASP.NET/IIS proxies), `data:` without the space, `event: message`
    # lines, and no `data: [DONE]` (a stream ended by closing the body): all one reply.
    raw = [
        "event: message\r\n" + part.replace("data: ", "data:").replace("\n", "\r\n")
        for part in sse(text_chunk("Fi"), text_chunk("ne."), text_chunk("", "stop"))[:-1]
    ]
    fake.add_turns([Turn(raw=raw)])
    reply = await ask(make())
    assert reply.content == "Fine." and len(fake.chat_requests()) == 1


async def test_done_without_finish_reason_ends_the_reply(fake: FakeOpenAI, make: Make) -> None:
    # Servers that never set finish_reason (null on every chunk) but end with [DONE]: the
    # reply is complete, not a cut stream to resend.
    fake.add_turns([Turn(raw=sse(text_chunk("Fi"), text_chunk("ne."))), Turn(raw=ANSWER)])
    retries: list[str] = []
    reply = await ask(make(), retries=retries)
    assert reply.content == "Fine." and reply.finish_reason == "stop"
    assert retries == [] and len(fake.chat_requests()) == 1


async def test_no_done_and_no_finish_reason_is_still_a_cut_stream(
    fake: FakeOpenAI, make: Make
) -> None:
    cut = sse(text_chunk("Fi"))[:-1]
    fake.add_turns([Turn(raw=cut), Turn(raw=ANSWER)])
    retries: list[str] = []
    reply = await ask(make(), retries=retries)
    assert reply.content == "Fine." and len(retries) == 1


async def test_llama_cpp_no_jinja_500_is_not_retried_by_the_sdk(
    fake: FakeOpenAI, make: Make
) -> None:
    # llama.cpp tools/server without --jinja: HTTP 500 "tools param requires --jinja flag".
    # The same request fails the same way: asked once, not three times with back-off.
    refusal = {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}
    body = json.dumps({"error": refusal})
    fake.add_turns([Turn(raw=body, raw_status=500)] * 3)
    client = ModelClient(
        model="m", base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=2
    )
    try:
        error = await fails(client)
    finally:
        await client.close()
    assert error.kind == "tools_unsupported"
    assert "requires --jinja" in error.message
    assert len(fake.chat_requests()) == 1


def groq_tool_use_failed(written: str) -> Turn:
    # Groq: a call it cannot parse is a 400 "tool_use_failed" with the model's text.
    error = {
        "message": "Failed to call a function. Please adjust your prompt. See "
        "'failed_generation' for more details.",
        "type": "invalid_request_error",
        "code": "tool_use_failed",
        "failed_generation": written,
    }
    return Turn(raw=json.dumps({"error": error}), raw_status=400)


async def test_groq_failed_generation_is_the_reply(fake: FakeOpenAI, make: Make) -> None:
    fake.add_turns([groq_tool_use_failed('<function=read_file{"path": "a.py"}</function>')])
    shown: list[str] = []
    reply = await make().complete(ChatTurn(MESSAGES, TOOLS, shown.append))
    assert reply.content == '<function=read_file{"path": "a.py"}</function>'
    assert shown == [], "call markup is never streamed as the answer"
    assert reply.usage is not None and reply.usage.estimated


async def test_groq_empty_failed_generation_stays_an_error(fake: FakeOpenAI, make: Make) -> None:
    fake.add_turns([groq_tool_use_failed("")])
    error = await fails(make())
    assert "Failed to call a function" in error.message


def openrouter_error(code: Any, message: str) -> dict[str, Any]:
    # OpenRouter streaming docs ("errors during streaming"): a chunk with a top-level error
    # object and a choice finishing with "error".
    return {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m1",
        "provider": "SomeProvider",
        "error": {"code": code, "message": message},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }


async def test_openrouter_transient_error_is_retried_once(fake: FakeOpenAI, make: Make) -> None:
    raw = [
        ": OPENROUTER PROCESSING\n\n",
        *sse(
            text_chunk("Par"),
            openrouter_error("server_error", "Provider disconnected unexpectedly"),
        ),
    ]
    fake.add_turns([Turn(raw=raw), Turn(raw=ANSWER)])
    retries: list[str] = []
    reply = await ask(make(), retries=retries)
    assert reply.content == "Fine."
    assert len(retries) == 1 and "Provider disconnected unexpectedly" in retries[0]
    assert len(fake.chat_requests()) == 2


async def test_openrouter_transient_error_twice_says_so(fake: FakeOpenAI, make: Make) -> None:
    raw = sse(openrouter_error(502, "Upstream overloaded"))
    fake.add_turns([Turn(raw=raw), Turn(raw=raw), Turn(raw=ANSWER)])
    error = await fails(make())
    assert error.kind == "server" and "Upstream overloaded" in error.message
    assert len(fake.chat_requests()) == 2


async def test_openrouter_invalid_request_in_stream_is_not_retried(
    fake: FakeOpenAI, make: Make
) -> None:
    raw = sse(openrouter_error(400, "Invalid tool schema for read_file"))
    fake.add_turns([Turn(raw=raw), Turn(raw=ANSWER)])
    error = await fails(make())
    assert error.kind == "bad_request" and "Invalid tool schema for read_file" in error.message
    assert len(fake.chat_requests()) == 1


async def test_choice_level_error_without_top_level_error(fake: FakeOpenAI, make: Make) -> None:
    # A provider behind a router that only marks the choice: finish_reason "error" with the
    # error object inside the choice.
    bad = text_chunk("", "error")
    bad["choices"][0]["error"] = {"code": 429, "message": "Rate limit exceeded upstream"}
    fake.add_turns([Turn(raw=sse(text_chunk("x"), bad)), Turn(raw=ANSWER)])
    retries: list[str] = []
    reply = await ask(make(), retries=retries)
    assert reply.content == "Fine."
    assert len(retries) == 1 and "Rate limit exceeded upstream" in retries[0]


# --- a JSON body where a stream was asked for ----------------------------------------------------


async def test_json_error_body_with_status_200(fake: FakeOpenAI, make: Make) -> None:
    # Servers that check the prompt only after sending 200 and answer with a plain JSON
    # error body (llama.cpp-based gateways, some proxies).
    body = {"error": {"code": 400, "message": "prompt is too long: 9000 tokens > 8192 maximum"}}
    fake.add_turns([Turn(raw=json.dumps(body)), Turn(raw=ANSWER)])
    error = await fails(make())
    assert error.kind == "context_length" and "9000 tokens > 8192" in error.message
    assert len(fake.chat_requests()) == 1


async def test_server_ignoring_stream_true_is_read(fake: FakeOpenAI, make: Make) -> None:
    # Servers and proxies that ignore "stream": true and send one chat.completion object.
    body = {
        "id": "x", "object": "chat.completion", "created": 1, "model": "m1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "reasoning_content": "Look it up.",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path":"a"}'}}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }  # fmt: skip
    fake.add_turns([Turn(raw=json.dumps(body))])
    reply = await ask(make())
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_1", "read_file", '{"path":"a"}')
    ]
    assert reply.extra == {"reasoning_content": "Look it up."}
    assert reply.usage is not None and reply.usage.prompt_tokens == 20


# --- provider fields another provider refuses ----------------------------------------------------

HISTORY = [
    {"role": "user", "content": "where is greet?"},
    {
        "role": "assistant",
        "content": None,
        "reasoning": "Search for it.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": "{}"},
                "extra_content": {"google": {"thought_signature": "c2ln"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "def greet(): ..."},
]


async def test_groq_refusing_reasoning_gets_it_left_off(fake: FakeOpenAI, make: Make) -> None:
    # Groq API: assistant messages are validated strictly; a reasoning field sent back is
    # refused with 400 "'messages.1' : for 'role:assistant' the following must be
    # satisfied[('messages.1' : property 'reasoning' is unsupported)]".
    refusal = {
        "error": {
            "message": "'messages.1' : for 'role:assistant' the following must be satisfied"
            "[('messages.1' : property 'reasoning' is unsupported)]",
            "type": "invalid_request_error",
        }
    }
    fake.add_turns(
        [Turn(raw=json.dumps(refusal), raw_status=400), Turn(raw=ANSWER), Turn(raw=ANSWER)]
    )
    client = make()
    for _ in range(2):
        reply = await client.complete(ChatTurn(HISTORY, TOOLS))
        assert reply.content == "Fine."
    first, second, third = (r["messages"][1] for r in fake.chat_requests())
    assert first["reasoning"] == "Search for it."
    for later in (second, third):  # left off on the retry and from then on
        assert "reasoning" not in later
        assert later["tool_calls"] == HISTORY[1]["tool_calls"]  # the rest goes as it was


async def test_missing_field_error_is_not_a_refusal(fake: FakeOpenAI, make: Make) -> None:
    # DeepSeek thinking mode: reasoning_content is required back; its absence is an error to
    # report, not a field to leave off.
    body = {"error": {"message": "Missing `reasoning_content` field in the assistant message "
                      "at message index 1.", "type": "invalid_request_error"}}  # fmt: skip
    fake.add_turns([Turn(raw=json.dumps(body), raw_status=400)])
    with pytest.raises(ModelError) as caught:
        await make().complete(ChatTurn(HISTORY, TOOLS))
    assert (
        caught.value.kind == "bad_request" and "Missing `reasoning_content`" in caught.value.message
    )
    assert len(fake.chat_requests()) == 1
