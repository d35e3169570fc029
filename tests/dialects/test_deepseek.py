"""DeepSeek's API (`https://api.deepseek.com`), thinking mode with tool calls.

Source: DeepSeek API docs ("Reasoning Model (deepseek-reasoner)", "Thinking Mode" and
its tool-calls section, "Create Chat Completion" streaming): deltas carry
`reasoning_content` before `content`; the server keeps the connection alive with
SSE comments (`: keep-alive`); tool calls stream by `index` with ids `call_00_…`;
usage (with `prompt_cache_hit_tokens`) rides on the finish chunk. In thinking
mode, an assistant message that made tool calls must be sent back *with* its
`reasoning_content` for the rest of that question, or the API answers 400.
"""

from __future__ import annotations

from typing import Any

from tests.dialects import replay

ID_A, ID_B = "call_00_Vh2wK0cP7nS3dQ9rL4mX1yZa", "call_01_Bq8eT5uJ2kW9xN0cR7vL3pYd"
REASONING = ["REASON-1 The user asks where main is.", " I should read", " app.py and util.py."]
KEEP_ALIVE = ": keep-alive\n\n"

_chunk = replay.Chunks(
    {
        "id": "5d2f0c9e-1a7b-4c3d-9e8f-0a1b2c3d4e5f",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": "deepseek-reasoner",
        "system_fingerprint": "fp_7e0991cad4_prod0820_fp8_kvcache",
        "choices": ("index", "delta", "logprobs", "finish_reason"),
    }
)


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return replay.usage(
        prompt,
        completion,
        prompt_tokens_details={"cached_tokens": 0},
        completion_tokens_details={"reasoning_tokens": completion // 2},
        prompt_cache_hit_tokens=0,
        prompt_cache_miss_tokens=prompt,
    )


def _call(index: int, call_id: str, arguments: str) -> list[str]:
    return [
        _chunk({"tool_calls": [replay.call(call_id, "", index=index)]}),
        _chunk(replay.args(index, arguments)),
    ]


def test_deepseek_reasoning_content_goes_back_with_the_calls(two_steps: replay.AskTwoSteps) -> None:
    # Source: DeepSeek API docs, thinking mode + tool calls (reasoning_content round trip),
    # keep-alive comments while the model thinks.
    tool_step = [
        KEEP_ALIVE,
        _chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        *(_chunk({"content": None, "reasoning_content": r}) for r in REASONING),
        KEEP_ALIVE,
        *_call(0, ID_A, '{"path": "src/app.py"}'),
        *_call(1, ID_B, '{"path": "src/util.py"}'),
        _chunk({"content": "", "reasoning_content": None}, "tool_calls", usage=_usage(500, 80)),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        _chunk({"content": None, "reasoning_content": "REASON-2 line 6 has main."}),
        KEEP_ALIVE,
        _chunk({"content": replay.ANSWER[:33], "reasoning_content": None}),
        _chunk({"content": replay.ANSWER[33:], "reasoning_content": None}),
        _chunk({"content": "", "reasoning_content": None}, "stop", usage=_usage(950, 40)),
        replay.DONE,
    ]
    asked = two_steps(
        tool_step, answer_step, model="deepseek-reasoner", private=("REASON-1", "REASON-2")
    )
    asked.assert_ids(ID_A, ID_B)
    asked.assert_usage(1450, 120)
    assert asked.assistant["reasoning_content"] == "".join(REASONING)
    assert "REASON-1" not in (asked.assistant.get("content") or "")
