"""OpenRouter (`https://openrouter.ai/api/v1`), a router in front of many providers.

Source: OpenRouter's "Streaming" docs (`: OPENROUTER PROCESSING` comment lines sent
while waiting; an error after the stream started arrives as a `data:` event
whose chunk carries a top-level `error` object and `finish_reason: "error"`),
its "Reasoning tokens" docs (`delta.reasoning`, `reasoning_details` that must be
sent back unmodified with the tool calls for the model to keep its reasoning),
and its chunk shape (`provider`, `native_finish_reason`, usage with `cost` on
the last chunk). Ids come from the upstream provider (`toolu_…` for Anthropic).
"""

from __future__ import annotations

import re
from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

PROCESSING = ": OPENROUTER PROCESSING\n\n"
ID_A, ID_B = "toolu_01A09q90qw90lq917835lq9", "toolu_01B7xK2mP4rT8vW1yZ3cE5gH"
DETAILS = [
    {
        "type": "reasoning.text",
        "text": "PRIVATE-R I need both files.",
        "signature": "ErUBCkYIBRgCIkDq7v2M+0signature==",
        "format": "anthropic-claude-v1",
        "index": 0,
    }
]


_chunk = replay.Chunks(
    {
        "id": "gen-1732000000-AbCdEfGhIjKlMnOp",
        "provider": "Anthropic",
        "model": "anthropic/claude-sonnet-4",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "choices": ("index", "delta", "finish_reason", "native_finish_reason", "logprobs"),
    }
)


def _says(content: str = "", **fields: Any) -> dict[str, Any]:
    # Every delta OpenRouter relays repeats the role and the content.
    return {"role": "assistant", "content": content, **fields}


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return replay.usage(prompt, completion, cost=0.00123, is_byok=False)


def _call(index: int, call_id: str, pieces: list[str]) -> list[str]:
    def more(piece: str) -> dict[str, Any]:
        return {"index": index, "type": "function", "function": {"arguments": piece}}

    return [
        _chunk(_says(tool_calls=[replay.call(call_id, "", index=index)])),
        *(_chunk(_says(tool_calls=[more(piece)])) for piece in pieces),
    ]


def test_openrouter_comments_reasoning_details_and_calls(two_steps: replay.AskTwoSteps) -> None:
    # Source: openrouter.ai/docs streaming (comment lines) and reasoning tokens
    # (reasoning_details preserved across tool calls).
    tool_step = [
        PROCESSING,
        PROCESSING,
        _chunk(_says(reasoning="PRIVATE-R I need both files.")),
        _chunk(_says(reasoning_details=DETAILS)),
        *_call(0, ID_A, ['{"path": ', '"src/app.py"}']),
        *_call(1, ID_B, ['{"path": "src/util.py"}']),
        _chunk(_says(), "tool_calls"),
        _chunk(_says(), None, usage=_usage(600, 70)),
        replay.DONE,
    ]
    answer_step = [
        PROCESSING,
        _chunk(_says(replay.ANSWER[:10])),
        PROCESSING,
        _chunk(_says(replay.ANSWER[10:])),
        _chunk(_says(), "stop"),
        _chunk(_says(), None, usage=_usage(1000, 25)),
        replay.DONE,
    ]
    asked = two_steps(
        tool_step,
        answer_step,
        model="anthropic/claude-sonnet-4",
        private=("PRIVATE-R", "OPENROUTER"),
    )
    asked.assert_ids(ID_A, ID_B)
    asked.assert_usage(1600, 95)
    assert asked.assistant["reasoning_details"] == DETAILS


def test_openrouter_error_inside_the_stream(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: openrouter.ai/docs streaming, "Handling errors during streaming": a chunk
    # with a top-level `error` object and finish_reason "error", after a 200 header.
    failed = [
        PROCESSING,
        _chunk(_says("Looking")),
        _chunk(
            {"content": ""},
            "error",
            error={"code": "server_error", "message": "Provider disconnected unexpectedly"},
        ),
    ]
    # A resend (allowed for a server error) meets the same failure; no turn is left after.
    fake.add_turns([Turn(raw=failed), Turn(raw=failed)])
    run = lantern.ask(replay.QUESTION, model="anthropic/claude-sonnet-4")
    assert run.rc == 3, run.stderr
    out = run.json
    assert out["stopReason"] == "error"
    assert "Provider disconnected unexpectedly" in out["error"]
    assert "no scripted turn" not in run.stderr
    assert "could not be read" not in run.stderr and "APIError" not in run.stderr
    # A resend may be announced ("…; retrying"); the final message is printed once.
    final = [
        ln
        for ln in run.stderr.splitlines()
        if "Provider disconnected" in ln and not ln.endswith("retrying")
    ]
    assert len(final) == 1 and final[0].count("Provider disconnected") == 1, run.stderr
    assert not re.search(r"Error code: \d+\s*$", run.stderr, re.M)


def test_openrouter_context_error_in_stream_is_not_resent(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: as above, with the upstream's deterministic 400 (prompt too long) relayed
    # mid-stream: sending the same request again can only fail again, billed twice.
    too_long = (
        "This endpoint's maximum context length is 8192 tokens. "
        "However, you requested about 9100 tokens."
    )
    failed = [
        PROCESSING,
        _chunk({"content": ""}, "error", error={"code": 400, "message": too_long}),
    ]
    fake.add_turns([Turn(raw=failed), Turn(raw=failed)])
    run = lantern.ask(replay.QUESTION, model="anthropic/claude-sonnet-4")
    replay.assert_error_once(run, "maximum context length is 8192 tokens")
    assert len(fake.chat_requests()) == 1


def test_openrouter_claude_last_step_still_declares_the_tools(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: Anthropic Messages API, relayed by OpenRouter for anthropic/* models (and by
    # Bedrock: "The toolConfig field must be defined…"): 400 "Requests which include
    # tool_use or tool_result blocks must define tools." The last step (--max-steps 2)
    # must keep `tools` and forbid calls with tool_choice "none" instead of dropping them.
    tool_step = [
        PROCESSING,
        *_call(0, ID_A, ['{"path": "src/app.py"}']),
        _chunk(_says(), "tool_calls"),
        _chunk(_says(), None, usage=_usage(600, 70)),
        replay.DONE,
    ]
    answer_step = [
        _chunk(_says(replay.ONE_ANSWER)),
        _chunk(_says(), "stop"),
        replay.DONE,
    ]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=answer_step)])
    run = lantern.ask(replay.QUESTION, "--max-steps", "2", model="anthropic/claude-sonnet-4")
    assert run.json["answer"] == replay.ONE_ANSWER
    first, last = fake.chat_requests()
    replay.assert_history_well_formed(last)
    assert [t["function"]["name"] for t in last.get("tools") or ()] == [
        t["function"]["name"] for t in first["tools"]
    ], "tool_use/tool_result in the history need the tools declared"
    assert last.get("tool_choice") == "none"
