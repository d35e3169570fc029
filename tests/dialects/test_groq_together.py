"""Groq (`https://api.groq.com/openai/v1`) and Together (`https://api.together.xyz/v1`).

Sources: Groq's API reference (streaming chunks carry an `x_groq` object; its
`usage` — with queue and timing fields — is where the token counts are when the
standard `usage` field is not sent); Together's chat-completions streaming
reference (chunks with `token_id`, `text` and `seed` beside the OpenAI fields,
`"tool_calls": null` on text deltas, `finish_reason` `"eos"` at the end of
generation, usage on the last chunk).
"""

from __future__ import annotations

import json
from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

_groq = replay.Chunks(
    {
        "id": "chatcmpl-5a8c2e1f-9b7d-4c3e-8f0a-1b2c3d4e5f6a",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": "llama-3.3-70b-versatile",
        "system_fingerprint": "fp_3f3b593e33",
        "choices": ("index", "delta", "logprobs", "finish_reason"),
        "x_groq": {"id": "req_01jd8z0q7ffw9s0m5k2n3p4r6t"},
    }
)


def _groq_end(finish: str, prompt: int, completion: int) -> str:
    """Groq's last chunk: the usage, with its queue and timing fields, under `x_groq`."""
    timed = {
        "queue_time": 0.021,
        "prompt_tokens": prompt,
        "prompt_time": 0.012,
        "completion_tokens": completion,
        "completion_time": 0.05,
        "total_tokens": prompt + completion,
        "total_time": 0.062,
    }
    return _groq({}, finish, x_groq={"id": "req_01jd8z0q7ffw9s0m5k2n3p4r6t", "usage": timed})


def _groq_calls(*calls: tuple[str, str]) -> dict[str, Any]:
    # Groq writes `index` after the function.
    return {
        "tool_calls": [
            {**replay.call(cid, args), "index": i} for i, (cid, args) in enumerate(calls)
        ]
    }


def test_groq_usage_under_x_groq(two_steps: replay.AskTwoSteps) -> None:
    # Source: Groq API reference, chat completions streaming (x_groq.usage on the last chunk).
    tool_step = [
        _groq({"role": "assistant", "content": None}),
        _groq(_groq_calls(("call_4g7k", replay.READ_APP), ("call_9w2p", replay.READ_UTIL))),
        _groq_end("tool_calls", 512, 44),
        replay.DONE,
    ]
    answer_step = [
        _groq({"role": "assistant", "content": ""}),
        _groq({"content": replay.ANSWER}),
        _groq_end("stop", 980, 31),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step, model="llama-3.3-70b-versatile")
    asked.assert_ids("call_4g7k", "call_9w2p")
    asked.assert_usage(1492, 75)


def _together(
    delta: dict[str, Any], finish: str | None = None, counts: tuple[int, int] | None = None
) -> str:
    choice = {
        "index": 0,
        "text": delta.get("content") or "",
        "logprobs": None,
        "finish_reason": finish,
        "seed": 4242 if finish else None,
        "delta": {"token_id": 1234, "role": "assistant", "tool_calls": None, **delta},
    }
    return replay.data(
        {
            "id": "8f2a4c6e1b3d5f70-SJC",
            "object": "chat.completion.chunk",
            "created": 1732000000,
            "model": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
            "choices": [choice],
            "usage": None if counts is None else replay.usage(*counts),
        }
    )


def test_together_eos_and_whole_calls(two_steps: replay.AskTwoSteps) -> None:
    # Source: Together chat completions streaming reference (token_id/text/seed): generation
    # ends with "eos" — here also on the reply that made the calls, which must still run.
    calls = [
        replay.call("call_t0qk3yv8m2", replay.READ_APP, index=0),
        replay.call("call_p5n1x7c4z9", replay.READ_UTIL, index=1),
    ]
    tool_step = [
        _together({"content": ""}),
        _together({"content": "", "tool_calls": calls}),
        _together({"content": ""}, "eos", (450, 40)),
        replay.DONE,
    ]
    words = replay.ANSWER.split(" ")
    answer_step = [
        *(_together({"content": w + " "}) for w in words[:-1]),
        _together({"content": words[-1]}),
        _together({"content": ""}, "eos", (900, 28)),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step, model="meta-llama/Llama-3.3-70B-Instruct-Turbo")
    asked.assert_ids("call_t0qk3yv8m2", "call_p5n1x7c4z9")
    asked.assert_usage(1350, 68)


GROQ_UNKNOWN_PROPERTY = Turn(
    raw=(
        '{"error":{"message":"\'messages.2\' : for \'role:assistant\' the following must be '
        "satisfied[('messages.2' : property 'reasoning' is unsupported, did you mean "
        '\'role\'?)]","type":"invalid_request_error"}}'
    ),
    raw_status=400,
)


def _carries_reasoning(body: dict[str, Any]) -> bool:
    return any(
        key in message
        for message in body.get("messages", ())
        if message.get("role") == "assistant"
        for key in ("reasoning", "reasoning_content", "reasoning_details")
    )


def test_groq_reasoning_model_is_not_sent_its_reasoning_back(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: Groq reasoning docs (gpt-oss / qwen3 stream `delta.reasoning`) and Groq's
    # request validation, quoted in client bug threads: an assistant message carrying
    # `reasoning` (or `reasoning_content`) is answered 400 "property 'reasoning' is
    # unsupported". Lantern may try it once, but must end up answering.
    fake.reject_if(_carries_reasoning, GROQ_UNKNOWN_PROPERTY)
    tool_step = [
        _groq({"role": "assistant", "content": None}),
        _groq({"reasoning": "GROQ-THINK need app.py"}),
        _groq(_groq_calls(("call_g7x2", replay.READ_APP))),
        _groq_end("tool_calls", 300, 20),
        replay.DONE,
    ]
    answer_step = [_groq({"content": replay.ONE_ANSWER}), _groq_end("stop", 600, 10), replay.DONE]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=answer_step)])
    run = lantern.ask(replay.QUESTION, model="openai/gpt-oss-120b")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER, "GROQ-THINK")
    assert [(c["id"], c["status"]) for c in out["toolCalls"]] == [("call_g7x2", "done")]
    requests = fake.chat_requests()
    assert 2 <= len(requests) <= 3, "at most one request refused for its reasoning field"
    assert not _carries_reasoning(requests[-1])
    replay.assert_history_well_formed(requests[-1])
    assert "unsupported" not in run.stderr


def test_groq_tool_use_failed_runs_what_the_model_wrote(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Groq's tool-use docs and client bug threads (groq-typescript #28, vercel/ai
    # #6916): a call the model wrote in a shape Groq cannot parse — Llama 3.3's
    # `<function=name{…}</function>`, its `>` missing — is answered 400 with code
    # "tool_use_failed", the model's text in `failed_generation`, and a message telling
    # the user to see that field. The text is the reply: its call runs (text protocol).
    failed = {
        "error": {
            "message": "Failed to call a function. Please adjust your prompt. See "
            "'failed_generation' for more details.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": '<function=read_file{"path": "src/app.py"}</function>',
        }
    }
    answer = [
        _groq({"role": "assistant", "content": ""}),
        _groq({"content": replay.ONE_ANSWER}),
        _groq_end("stop", 900, 20),
        replay.DONE,
    ]
    fake.add_turns(
        [Turn(raw=json.dumps(failed, separators=(",", ":")), raw_status=400), Turn(raw=answer)]
    )
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER, "<function=", "failed_generation")
    replay.assert_references(out, *replay.APP_REF)
    assert [(c["name"], c["arguments"]) for c in out["toolCalls"]] == [
        ("read_file", {"path": "src/app.py"})
    ]
    first, second = fake.chat_requests()
    assert first.get("tools") and not second.get("tools")
    assert "def main" in second["messages"][-1]["content"]
