"""Ollama's OpenAI-compatible endpoint (`/v1/chat/completions`), the local default.

Source: ollama `openai/openai.go` (`toChunk`, `toToolCalls`, `ChunkChoice`,
`Message.Reasoning`): Go `encoding/json`, so compact JSON; every chunk has
`"system_fingerprint":"fp_ollama"`; ids are `call_` and 8 random lowercase
letters/digits; each tool call the model finishes is sent whole (name and all
arguments) in its own chunk, and the OpenAI `index` is the call's index *within
that chunk* — so two calls arrive as two chunks that both say `"index":0`.
Releases before the `index` field existed send several calls in one chunk
with no `index` at all. Thinking models stream `delta.reasoning`. Usage comes
as a last chunk with empty `choices` when `stream_options.include_usage` is set.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

_ENVELOPE = {
    "id": "chatcmpl-412",
    "object": "chat.completion.chunk",
    "created": 1732000000,
    "model": "qwen3:8b",
    "system_fingerprint": "fp_ollama",
    "choices": ("index", "delta", "finish_reason"),
}
QWEN, LLAMA = replay.Chunks(_ENVELOPE), replay.Chunks({**_ENVELOPE, "model": "llama3.1:8b"})


def _call(call_id: str, arguments: str, index: int | None = 0) -> dict[str, Any]:
    made = replay.call(call_id, arguments)
    return made if index is None else {**made, "index": index}


def _says(content: str = "", **fields: Any) -> dict[str, Any]:
    # Every Ollama delta repeats the role.
    return {"role": "assistant", "content": content, **fields}


def _answer(text: str, chunk: replay.Chunks = QWEN) -> list[str]:
    words = text.split(" ")
    pieces = [w + " " for w in words[:-1]] + [words[-1]]
    return [
        *(chunk(_says(p)) for p in pieces),
        chunk(_says(), "stop"),
        chunk.usage(replay.usage(700, 25)),
        replay.DONE,
    ]


@pytest.mark.parametrize("one_chunk", [False, True], ids=["chunk-per-call", "one-chunk"])
def test_ollama_two_calls_both_index_0_are_two_calls(
    two_steps: replay.AskTwoSteps, one_chunk: bool
) -> None:
    # Source: ollama openai/openai.go toToolCalls: `index` comes from the parser's per-call
    # index, 0 for each call it emits on its own; a call per chunk, or both in one chunk.
    calls = [_call("call_x1k9qz3m", replay.READ_APP), _call("call_p0a7vd2n", replay.READ_UTIL)]
    deltas = [calls] if one_chunk else [[one] for one in calls]
    tool_step = [
        *(QWEN(_says(tool_calls=d)) for d in deltas),
        QWEN(_says(), "tool_calls"),
        QWEN.usage(replay.usage(380, 40)),
        replay.DONE,
    ]
    asked = two_steps(tool_step, _answer(replay.ANSWER))
    asked.assert_ids("call_x1k9qz3m", "call_p0a7vd2n")
    assert "read_filesearch" not in asked.run.stderr and "unknown tool" not in asked.run.stdout
    sent = [(c["function"]["name"], c["function"]["arguments"]) for c in asked.sent]
    assert sent == [("read_file", replay.READ_APP), ("read_file", replay.READ_UTIL)]


def test_older_ollama_calls_without_index(two_steps: replay.AskTwoSteps) -> None:
    # Source: ollama openai/openai.go before the `index` field: all calls in one chunk, no
    # index, and finish_reason "stop" even though the reply made calls.
    calls = [
        _call("call_4fzt0w8e", replay.READ_APP, index=None),
        _call("call_9bq2m1rc", replay.READ_UTIL, index=None),
    ]
    tool_step = [LLAMA(_says(tool_calls=calls)), LLAMA(_says(), "stop"), replay.DONE]
    asked = two_steps(tool_step, _answer(replay.ANSWER, LLAMA))
    asked.assert_ids("call_4fzt0w8e", "call_9bq2m1rc")
    assert [c["function"]["arguments"] for c in asked.sent] == [replay.READ_APP, replay.READ_UTIL]


def test_ollama_reasoning_deltas_are_not_the_answer(two_steps: replay.AskTwoSteps) -> None:
    # Source: ollama openai/openai.go toChunk: Message.Thinking is sent as `delta.reasoning`
    # (qwen3 / gpt-oss with think enabled), content stays empty meanwhile.
    tool_step = [
        QWEN(_says(reasoning="SECRET-PLAN the user wants main")),
        QWEN(_says(reasoning=", so read app.py.")),
        QWEN(_says(tool_calls=[_call("call_7hd2kq0s", replay.READ_APP)])),
        QWEN(_says(), "tool_calls"),
        QWEN.usage(replay.usage(300, 30)),
        replay.DONE,
    ]
    answer_step = [
        QWEN(_says(reasoning="PRIVATE-2 found it on line 6")),
        *_answer(replay.ONE_ANSWER),
    ]
    asked = two_steps(
        tool_step, answer_step, answer=replay.ONE_ANSWER, private=("SECRET-PLAN", "PRIVATE-2")
    )
    asked.assert_ids("call_7hd2kq0s")
    asked.assert_usage(1000, 55)
    assert "SECRET-PLAN" not in asked.run.stderr and "PRIVATE-2" not in asked.run.stderr
    assert "SECRET-PLAN" not in (asked.assistant.get("content") or "")


def test_older_ollama_arguments_as_a_json_object(two_steps: replay.AskTwoSteps) -> None:
    # Source: ollama openai/openai.go releases that copied api.ToolCall's arguments map
    # straight into the chunk: `"arguments": {"path": …}` is a JSON object, not a string.
    # It must go back to the server as a JSON string, as the OpenAI schema has it.
    calls = [
        {"id": "call_m3k8q1za", "type": "function",
         "function": {"name": "read_file", "arguments": {"path": "src/app.py"}}},
        {"id": "call_w7r2n5xe", "type": "function",
         "function": {"name": "read_file", "arguments": {"path": "src/util.py"}}},
    ]  # fmt: skip
    tool_step = [LLAMA(_says(tool_calls=calls)), LLAMA(_says(), "stop"), replay.DONE]
    asked = two_steps(tool_step, _answer(replay.ANSWER, LLAMA))
    asked.assert_ids("call_m3k8q1za", "call_w7r2n5xe")
    sent = [json.loads(c["function"]["arguments"]) for c in asked.sent]
    assert sent == [{"path": "src/app.py"}, {"path": "src/util.py"}]


def test_llama32_json_call_left_in_content(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Meta's Llama 3.1/3.2 tool prompt ("respond with a JSON for a function call
    # … {"name": function name, "parameters": …}"); when Ollama's template parser does not
    # match it (a leading space, a fenced block) the JSON reaches the client as content.
    call = '```json\n{"name": "read_file", "parameters": {"path": "src/app.py"}}\n```'
    pieces = [call[i : i + 9] for i in range(0, len(call), 9)]
    tool_step = [*(LLAMA(_says(p)) for p in pieces), LLAMA(_says(), "stop"), replay.DONE]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=_answer(replay.ONE_ANSWER, LLAMA))])
    run = lantern.ask(replay.QUESTION, model="llama3.2:3b")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER, '"parameters"')
    assert '"parameters"' not in run.stderr, "the call was streamed as answer text"
    replay.assert_references(out, *replay.APP_REF)
    assert [(c["name"], c["arguments"]) for c in out["toolCalls"]] == [
        ("read_file", {"path": "src/app.py"})
    ]
    second = fake.chat_requests()[1]
    assert "def main" in second["messages"][-1]["content"]
