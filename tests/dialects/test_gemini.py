"""Gemini's OpenAI compatibility endpoint (`generativelanguage.googleapis.com/v1beta/openai/`).

Source: Google's "OpenAI compatibility" and "Thought signatures" docs, and client bug
threads quoting raw chunks: tool-call deltas have no `index`; each call comes whole
in one delta; Gemini 3 attaches `extra_content.google.thought_signature` to the
first call of a step, which must come back unchanged on that call in the next
request; the streamed finish reason is `"stop"` even when the reply made calls;
Gemini 2.x sent `"id": ""`. Errors are a JSON *array* of Google error objects.
"""

from __future__ import annotations

import json
from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

SIGNATURE = "CiQB0e2Kb3Vx9yTz+7QmA1cR4uW8pN6sL2jF0hD5gK3eB9aY=="

# Keys sorted, as Google's JSON writer emits them.
_chunk = replay.Chunks(
    {
        "choices": ("delta", "finish_reason", "index"),
        "created": 1732000000,
        "id": "x3ZLaY2mB9eP7qR1sT5uV",
        "model": "gemini-3-pro-preview",
        "object": "chat.completion.chunk",
    }
)


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "completion_tokens": completion,
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
    }


def _calls(call_id: str, args: str, signature: str | None = None) -> dict[str, Any]:
    """A delta with one whole call: no index, and the thought signature when given."""
    call: dict[str, Any] = {
        "function": {"arguments": args, "name": "read_file"},
        "id": call_id,
        "type": "function",
    }
    if signature is not None:
        call["extra_content"] = {"google": {"thought_signature": signature}}
    return {"role": "assistant", "tool_calls": [call]}


def _answer_step() -> list[str]:
    return [
        _chunk({"content": replay.ANSWER[:40], "role": "assistant"}),
        _chunk({"content": replay.ANSWER[40:], "role": "assistant"}, "stop", usage=_usage(900, 30)),
        replay.DONE,
    ]


def test_gemini3_thought_signature_round_trip(two_steps: replay.AskTwoSteps) -> None:
    # Source: ai.google.dev OpenAI compatibility + thought signatures docs; raw Gemini 3
    # chunks quoted in client bug threads (no index, extra_content on the call).
    tool_step = [
        _chunk(_calls("call_297140", replay.READ_APP, SIGNATURE)),
        _chunk(_calls("call_297141", replay.READ_UTIL)),
        _chunk({"role": "assistant"}, "stop", usage=_usage(420, 35)),
        replay.DONE,
    ]
    asked = two_steps(tool_step, _answer_step(), model="gemini-3-pro-preview", private=(SIGNATURE,))
    asked.assert_ids("call_297140", "call_297141")
    first_call, second_call = asked.sent
    assert first_call["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert "extra_content" not in second_call


def test_gemini2_empty_ids_and_no_index(two_steps: replay.AskTwoSteps) -> None:
    # Source: Gemini 2.x OpenAI compatibility: `"id": ""` on every call, no index; a new
    # name starts a new call.
    tool_step = [
        _chunk(_calls("", replay.READ_APP)),
        _chunk(_calls("", replay.READ_UTIL), "stop"),
        replay.DONE,
    ]
    asked = two_steps(
        tool_step, _answer_step(), model="gemini-2.5-flash", id_pattern=replay.MADE_ID
    )
    assert [c["function"]["arguments"] for c in asked.sent] == [replay.READ_APP, replay.READ_UTIL]
    replay.assert_results_sent(asked.second, *(c["id"] for c in asked.sent))


MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:read_file` , position 2."
)


def test_gemini_array_error_body_reaches_the_user(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Gemini OpenAI compatibility errors: a JSON array of {"error": {code, message,
    # status}} objects, here the 400 a request without the thought signature gets.
    body = json.dumps(
        [{"error": {"code": 400, "message": MISSING_SIGNATURE, "status": "INVALID_ARGUMENT"}}]
    )
    tool_step = [_chunk(_calls("call_1", replay.READ_APP, SIGNATURE), "stop"), replay.DONE]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=body, raw_status=400)])
    run = lantern.ask(replay.QUESTION, model="gemini-3-pro-preview")
    replay.assert_error_once(run, "missing a thought_signature")
    assert len(fake.chat_requests()) == 2
