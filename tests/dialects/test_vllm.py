"""vLLM's OpenAI-compatible server (`vllm serve … --enable-auto-tool-choice`).

Source: vLLM `entrypoints/openai/serving_chat.py` (`chat_completion_stream_generator`)
and `entrypoints/openai/tool_parsers/hermes_tool_parser.py`: pydantic
`model_dump_json` (compact JSON, `"logprobs":null`), ids `chatcmpl-tool-` and 32
hex digits; the Hermes parser sends the name first (a delta with `id`, `type` and
`function.name`, no arguments) and then the argument text in small pieces as the
model writes it; usage comes in a last chunk with empty `choices` when asked for.
Without `--reasoning-parser`, a Qwen3 model's `<think>…</think>` stays in the content.
"""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

ID_A = "chatcmpl-tool-5f0c2a9e8b7d4c1fa3e6d2b0c9a8f7e1"
ID_B = "chatcmpl-tool-a1b2c3d4e5f60718293a4b5c6d7e8f90"
MODEL = "Qwen/Qwen3-8B"
_CHUNK: dict[str, Any] = {
    "id": "chatcmpl-3b9f1e2d7c6a4b5e8f0a1c2d3e4f5a6b",
    "object": "chat.completion.chunk",
    "created": 1732000000,
    "model": MODEL,
    "choices": ("index", "delta", "logprobs", "finish_reason"),
}
_running = replay.Chunks(_CHUNK)
# pydantic sets `stop_reason` only on the chunk that finishes the choice.
_finishing = replay.Chunks({**_CHUNK, "choices": (*_CHUNK["choices"], "stop_reason")})


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return (_finishing if finish else _running)(delta, finish)


def _usage(prompt: int, completion: int) -> str:
    counts = {"prompt_tokens": prompt, "total_tokens": prompt + completion}
    return _running.usage(
        {**counts, "completion_tokens": completion, "prompt_tokens_details": None}
    )


def _name(index: int, call_id: str) -> str:
    first = {"id": call_id, "type": "function", "index": index, "function": {"name": "read_file"}}
    return _chunk({"tool_calls": [first]})


def _pieces(index: int, *pieces: str) -> list[str]:
    return [_chunk(replay.args(index, piece)) for piece in pieces]


def test_vllm_hermes_argument_pieces(two_steps: replay.AskTwoSteps) -> None:
    # Source: vLLM hermes_tool_parser.py extract_tool_calls_streaming, serving_chat.py.
    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        _name(0, ID_A),
        *_pieces(0, '{"path": "', "src/", "app", '.py"', "}"),
        _name(1, ID_B),
        *_pieces(1, '{"path": "', "src/util.py", '"}'),
        _chunk({"content": ""}, "tool_calls"),
        _usage(420, 48),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": w + " "}) for w in replay.ANSWER.split(" ")[:-1]),
        _chunk({"content": replay.ANSWER.split(" ")[-1]}),
        _chunk({"content": ""}, "stop"),
        _usage(880, 22),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step)
    asked.assert_ids(ID_A, ID_B)
    asked.assert_usage(1300, 70)
    assert [c["function"]["arguments"] for c in asked.sent] == [
        '{"path": "src/app.py"}',
        '{"path": "src/util.py"}',
    ]


def test_vllm_without_reasoning_parser_think_split_across_chunks(
    two_steps: replay.AskTwoSteps,
) -> None:
    # Source: vLLM serving_chat.py with no --reasoning-parser: Qwen3's <think> block is plain
    # content, streamed token by token, so the tags arrive cut in pieces.
    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "<th"}),
        _chunk({"content": "ink>\nSECRET-A the user asks"}),
        _chunk({"content": " about main.\n</thi"}),
        _chunk({"content": "nk>\n\n"}),
        _name(0, ID_A),
        *_pieces(0, '{"path": "src/app.py"}'),
        _name(1, ID_B),
        *_pieces(1, '{"path": "src/util.py"}'),
        _chunk({"content": ""}, "tool_calls"),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": piece}) for piece in ("<", "think", ">SECRET-B line 6.</", "think>")),
        _chunk({"content": "\n\n" + replay.ANSWER[:30]}),
        _chunk({"content": replay.ANSWER[30:]}),
        _chunk({"content": ""}, "stop"),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step, private=("SECRET-A", "SECRET-B"))
    assert "SECRET" not in asked.run.stderr
    for message in asked.second["messages"]:
        assert "SECRET-A" not in (message.get("content") or ""), message


def test_r1_reply_opening_inside_a_think_block(two_steps: replay.AskTwoSteps) -> None:
    # Source: DeepSeek-R1 (and its distills) chat template ends the prompt with "<think>\n",
    # so without a reasoning parser vLLM streams bare reasoning closed by a lone </think>.
    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": piece}) for piece in ("R1-SECRET Okay, the user", " wants main.\n</")),
        _chunk({"content": "think>\n\n"}),
        _name(0, ID_A),
        *_pieces(0, '{"path": "src/app.py"}'),
        _chunk({"content": ""}, "tool_calls"),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": piece}) for piece in ("R1-SECRET-2 it is line 6", ".\n</think>\n\n")),
        _chunk({"content": replay.ONE_ANSWER}),
        _chunk({"content": ""}, "stop"),
        replay.DONE,
    ]
    asked = two_steps(
        tool_step,
        answer_step,
        answer=replay.ONE_ANSWER,
        model="deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
        private=("R1-SECRET",),
    )
    assert "R1-SECRET" not in str(asked.second["messages"])


def test_vllm_03_bare_error_response_inside_the_stream(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: vLLM <= 0.3 serving_chat.py chat_completion_stream_generator: on a ValueError
    # after the 200 header it yields `data: {ErrorResponse}` — the bare model, fields
    # object, message, type, param, code — then `data: [DONE]`. There is no "error" key,
    # so a reader looking for one sees an empty chunk, loses the message and resends.
    error = {
        "object": "error",
        "message": "This model's maximum context length is 8192 tokens. However, you "
        "requested 9415 tokens (8391 in the messages, 1024 in the completion). Please "
        "reduce the length of the messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    stream = [_chunk({"role": "assistant", "content": ""}), replay.data(error), replay.DONE]
    fake.add_turns([Turn(raw=stream), Turn(raw=stream)])
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_error_once(run, "maximum context length is 8192 tokens")
    assert "context" in out["error"]
    assert len(fake.chat_requests()) == 1, "the doomed request was sent again"


def test_fastchat_legacy_function_call_delta(two_steps: replay.AskTwoSteps) -> None:
    # Source: the pre-tools OpenAI streaming shape that FastChat's openai_api_server and
    # vLLM builds before tool support pass through from function-calling fine-tunes:
    # `delta.function_call` {name, then argument pieces}, finish_reason "function_call".
    tool_step = [
        _chunk({"role": "assistant", "content": None,
                "function_call": {"name": "read_file", "arguments": ""}}),
        *(_chunk({"function_call": {"arguments": p}}) for p in ('{"path": ', '"src/app.py"}')),
        _chunk({}, "function_call"),
        replay.DONE,
    ]  # fmt: skip
    answer_step = [
        _chunk({"role": "assistant", "content": replay.ONE_ANSWER}),
        _chunk({"content": ""}, "stop"),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step, answer=replay.ONE_ANSWER)
    [sent] = asked.sent
    assert replay.MADE_ID.fullmatch(sent["id"]), sent
    assert sent["function"] == {"name": "read_file", "arguments": '{"path": "src/app.py"}'}
    replay.assert_results_sent(asked.second, sent["id"])
