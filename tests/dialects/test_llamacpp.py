"""llama.cpp `llama-server` (started with `--jinja`), OpenAI-compatible chat endpoint.

Source: llama.cpp `tools/server/server.cpp` and `utils.hpp` (`to_json_oaicompat_chat_stream`,
`format_error_response`, the `exceed_context_size_error` type) and `common/chat.cpp`
(`common_chat_msg_diff_to_json_oaicompat`): chunks are nlohmann JSON with keys in
the order `choices, created, id, model, system_fingerprint, object`; thinking models
stream `delta.reasoning_content`; a tool call's first delta carries `index`, a
server-made `id` (32 random letters and digits), `type` and the name, the arguments
follow in pieces; the finish chunk carries `usage` and `timings`. An error after
the 200 header (the prompt outgrew the context) is a `data:` event whose object
has only `error`. Releases before the server made ids sent `"id": ""` for
templates without ids (Qwen/Hermes).
"""

from __future__ import annotations

import json

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

ID_A = "Xk2mQ9vLr4TzW8nB0cYh7PdJ3sFa6GuE"
ID_B = "bN5tR1wKe8YqZ3mV0xLc6HjU9oPi2SdA"

# nlohmann::ordered_json keeps the keys in the order the server sets them.
_chunk = replay.Chunks(
    {
        "choices": ("finish_reason", "index", "delta"),
        "created": 1732000000,
        "id": "chatcmpl-8mZkQxN2aVt5Lp0sRf7YcWbE1uHj3DgK",
        "model": "qwen3-8b-q4_k_m.gguf",
        "system_fingerprint": "b5500-9c2e4f1a",
        "object": "chat.completion.chunk",
    }
)


def _finish(reason: str, prompt: int, completion: int) -> str:
    counts = {"completion_tokens": completion, "prompt_tokens": prompt}
    return _chunk(
        {},
        reason,
        usage={**counts, "total_tokens": prompt + completion},
        timings={"prompt_n": prompt, "prompt_ms": 210.4, "predicted_n": completion},
    )


def _call(index: int, call_id: str, first: str) -> str:
    return _chunk({"tool_calls": [replay.call(call_id, first, index=index)]})


def _answer_step(text: str) -> list[str]:
    return [
        _chunk({"role": "assistant", "content": None}),
        _chunk({"reasoning_content": "PRIVATE-THOUGHT line 6 it is"}),
        *(_chunk({"content": piece}) for piece in (text[:15], text[15:40], text[40:])),
        _finish("stop", 900, 40),
        replay.DONE,
    ]


def test_llamacpp_jinja_ids_and_reasoning_content(two_steps: replay.AskTwoSteps) -> None:
    # Source: llama.cpp common/chat.cpp common_chat_msg_diff_to_json_oaicompat, server.cpp.
    tool_step = [
        _chunk({"role": "assistant", "content": None}),
        _chunk({"reasoning_content": "SECRET-REASON I should read"}),
        _chunk({"reasoning_content": " both files."}),
        _call(0, ID_A, '{"path":'),
        _chunk(replay.args(0, ' "src/app.py"}')),
        _call(1, ID_B, '{"path": "src/util.py"}'),
        _finish("tool_calls", 410, 60),
        replay.DONE,
    ]
    asked = two_steps(
        tool_step, _answer_step(replay.ANSWER), private=("SECRET-REASON", "PRIVATE-THOUGHT")
    )
    asked.assert_ids(ID_A, ID_B)
    asked.assert_usage(1310, 100)
    assert "SECRET-REASON" not in (asked.assistant.get("content") or "")


def test_llamacpp_empty_ids_get_ids_every_provider_accepts(two_steps: replay.AskTwoSteps) -> None:
    # Source: llama.cpp server before it generated tool-call ids: `"id":""` for Hermes/Qwen
    # templates, whose calls carry none.
    tool_step = [
        _chunk({"role": "assistant", "content": None}),
        _call(0, "", '{"path": "src/app.py"}'),
        _call(1, "", '{"path": "src/util.py"}'),
        _finish("tool_calls", 400, 50),
        replay.DONE,
    ]
    asked = two_steps(tool_step, _answer_step(replay.ANSWER), id_pattern=replay.MADE_ID)
    ids = [c["id"] for c in asked.sent]
    assert len(set(ids)) == 2
    assert [c["id"] for c in asked.out["toolCalls"]] == ids
    replay.assert_results_sent(asked.second, *ids)


CONTEXT_ERROR = (
    '{"error":{"code":400,"message":"the request exceeds the available context size, '
    'try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4133,'
    '"n_ctx":4096}}'
)


def test_llamacpp_context_overflow_inside_200_stream_is_not_retried(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: llama.cpp server.cpp: an error after the 200 header is written as
    # `data: {"error": {...}}` (format_error_response, exceed_context_size_error).
    tool_step = [
        _chunk({"role": "assistant", "content": None}),
        _call(0, ID_A, '{"path": "src/app.py"}'),
        _finish("tool_calls", 400, 20),
        replay.DONE,
    ]
    overflow = ["data: " + CONTEXT_ERROR + "\n\n"]
    # A retry would get the same error again: a resend can never fit either.
    fake.add_turns([Turn(raw=tool_step), Turn(raw=overflow), Turn(raw=overflow)])
    run = lantern.ask(replay.QUESTION)
    replay.assert_error_once(run, "exceeds the available context size")
    for vague in ("could not be read", "APIError", "retrying"):
        assert vague not in run.stderr, run.stderr
    assert len(fake.chat_requests()) == 2, "the doomed request was sent again"


def test_llamacpp_error_field_line_inside_200_stream(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: llama.cpp server.cpp builds that wrote a failure after the 200 header as an SSE
    # `error:` field (server_sent_event(sink, "error", ...)), which SSE readers skip.
    overflow = ["error: " + CONTEXT_ERROR + "\n\n"]
    fake.add_turns([Turn(raw=overflow), Turn(raw=overflow)])
    run = lantern.ask(replay.QUESTION)
    replay.assert_error_once(run, "exceeds the available context size")
    assert len(fake.chat_requests()) == 1


def _content_step(text: str, size: int = 5) -> list[str]:
    """A reply written as content only, a few characters per chunk as tokens arrive."""
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        _chunk({"role": "assistant", "content": None}),
        *(_chunk({"content": piece}) for piece in pieces),
        _finish("stop", 500, 60),
        replay.DONE,
    ]


def test_gpt_oss_harmony_passed_through_as_content(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: OpenAI harmony format (gpt-oss) as builds without its parser pass it on in
    # `content` (llama.cpp common/chat.cpp before the gpt-oss handler, older LM Studio):
    # reasoning in the analysis channel up to <|end|>, each call in the commentary channel
    # as `to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`, the answer after
    # `<|start|>assistant<|channel|>final<|message|>`.
    calls = "".join(
        "<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json"
        f"<|message|>{args}<|call|>"
        for args in (replay.READ_APP, replay.READ_UTIL)
    )
    tool_step = "<|channel|>analysis<|message|>HARMONY-SECRET need both files.<|end|>" + calls
    answer_step = (
        "<|channel|>analysis<|message|>HARMONY-SECRET-2 lines 6 and 1.<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{replay.ANSWER}<|return|>"
    )
    fake.add_turns([Turn(raw=_content_step(tool_step)), Turn(raw=_content_step(answer_step))])
    run = lantern.ask(replay.QUESTION, model="gpt-oss-20b-mxfp4.gguf")
    out = replay.assert_clean_answer(run, replay.ANSWER, "HARMONY-SECRET", "<|")
    replay.assert_read_both(out)
    replay.assert_references(out, *replay.BOTH_REFS)
    assert "HARMONY-SECRET" not in run.stderr
    second = fake.chat_requests()[1]
    assert not second.get("tools"), "the calls written as text switch to the text protocol"
    assert "HARMONY-SECRET" not in json.dumps(second["messages"])
    results = second["messages"][-1]
    assert results["role"] == "user"
    assert "def main" in results["content"] and "def greet" in results["content"]


def test_llamacpp_without_jinja_is_asked_once_before_the_text_protocol(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: llama.cpp tools/server utils.hpp oaicompat_chat_params_parse: without --jinja a
    # request with `tools` is answered HTTP 500 "tools param requires --jinja flag". A 500
    # is normally retried by the SDK; this one would fail identically, so it is not.
    fake.reject_tools = Turn(
        raw='{"error":{"code":500,"message":"tools param requires --jinja flag",'
        '"type":"server_error"}}',
        raw_status=500,
    )
    answer = _content_step(replay.ONE_ANSWER, size=12)
    call = '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>'
    fake.add_turns([Turn(raw=_content_step(call)), Turn(raw=answer)])
    run = lantern.ask(replay.QUESTION, model="qwen2.5-7b-instruct-q4_k_m.gguf")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    replay.assert_references(out, *replay.APP_REF)
    with_tools = [r for r in fake.chat_requests() if r.get("tools")]
    assert len(with_tools) == 1, "the --jinja refusal was sent again"
