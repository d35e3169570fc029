"""OpenAI itself: the baseline every other dialect is measured against.

Source: the OpenAI Chat Completions streaming reference and the `openai` Python
SDK's `ChatCompletionChunk` types: a role chunk, then tool-call deltas by
`index` (id, type and name in the first delta of each call, `arguments` in
pieces), a finish chunk with `finish_reason: "tool_calls"`, and — because
`stream_options.include_usage` was asked — a last chunk with empty `choices`
and the usage, then `data: [DONE]`.
"""

from __future__ import annotations

from tests.dialects import replay

ID_A, ID_B = "call_Lq3nXo0bK9dWcR2tYv5ZsA1e", "call_8HkPz2mQwE4rTy6UiO0pAs3D"

_chunk = replay.Chunks(
    {
        "id": "chatcmpl-B9xKq2",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_0ba0d124f1",
        "choices": ("index", "delta", "logprobs", "finish_reason"),
        "usage": None,
    }
)


def _usage(prompt: int, completion: int) -> str:
    details = {
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    return _chunk.usage(replay.usage(prompt, completion, **details))


def _call_start(index: int, call_id: str) -> str:
    return _chunk({"tool_calls": [replay.call(call_id, "", index=index)]})


TOOL_STEP = [
    _chunk({"role": "assistant", "content": None, "refusal": None}),
    _call_start(0, ID_A),
    _chunk(replay.args(0, '{"pa')),
    _chunk(replay.args(0, 'th": "src/')),
    _chunk(replay.args(0, 'app.py"}')),
    _call_start(1, ID_B),
    _chunk(replay.args(1, '{"path": "src/util.py"}')),
    _chunk({}, "tool_calls"),
    _usage(410, 52),
    replay.DONE,
]

ANSWER_STEP = [
    _chunk({"role": "assistant", "content": "", "refusal": None}),
    _chunk({"content": replay.ANSWER[:20]}),
    _chunk({"content": replay.ANSWER[20:]}),
    _chunk({}, "stop"),
    _usage(900, 30),
    replay.DONE,
]


def test_openai_parallel_calls_then_cited_answer(two_steps: replay.AskTwoSteps) -> None:
    # Source: OpenAI Chat Completions streaming (parallel function calling), openai-python.
    asked = two_steps(TOOL_STEP, ANSWER_STEP)
    asked.assert_ids(ID_A, ID_B)
    asked.assert_usage(1310, 82)
    assert len(asked.requests) == 2
    first = asked.requests[0]
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "search"}
    assert [c["function"]["name"] for c in asked.sent] == ["read_file", "read_file"]
