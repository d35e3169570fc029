"""`lantern ask` on stderr: reasoning, protocol switches, estimated usage, errors — each once.

The fake replays raw SSE so the stream carries what real servers send
(`reasoning_content` deltas, `<think>` blocks, no usage at all).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern

Q = "What is in this workspace?"


def sse(*deltas: dict[str, Any], finish: str = "stop") -> list[str]:
    """An OpenAI-style chat stream of `deltas`, ending with `finish` and no usage."""

    def chunk(delta: dict[str, Any], reason: str | None) -> str:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
        }
        return f"data: {json.dumps(body)}\n\n"

    return [*(chunk(d, None) for d in deltas), chunk({}, finish), "data: [DONE]\n\n"]


def reasoning_turns() -> list[Turn]:
    # DeepSeek-style `reasoning_content`, then a `<think>` block in the content (LM Studio,
    # vLLM without a reasoning parser).
    return [
        Turn(
            raw=sse(
                {"role": "assistant", "reasoning_content": "First PRIVATE-1"},
                {"reasoning_content": " then PRIVATE-2"},
                {"reasoning_content": " and PRIVATE-3"},
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "list_files", "arguments": "{}"},
                        }
                    ]
                },
                finish="tool_calls",
            )
        ),
        Turn(raw=sse({"role": "assistant", "content": "<think>PRIVATE-4</think>It is a greeter."})),
    ]


def test_reasoning_shows_one_thinking_line_per_step(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(reasoning_turns())
    run = lantern.ask(Q, as_json=False)
    assert run.rc == 0, run.stderr
    assert run.stdout == "It is a greeter.\n"
    assert run.stderr.count("thinking…") == 2  # two steps, each with reasoning
    assert "PRIVATE" not in run.stdout + run.stderr


def test_reasoning_prints_nothing_in_json_mode(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(reasoning_turns())
    run = lantern.ask(Q)
    assert run.rc == 0, run.stderr
    assert run.json["answer"] == "It is a greeter."
    assert "thinking" not in run.stderr and "PRIVATE" not in run.stderr + run.stdout


def test_estimated_usage_is_marked(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(raw=sse({"role": "assistant", "content": "It is a greeter."}))])
    run = lantern.ask(Q, as_json=False)
    assert run.rc == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "tokens" in line]
    assert line.startswith("lantern: ~") and "+ ~" in line
    fake.add_turns(
        [Turn(content="Sent usage.", usage={"prompt_tokens": 1200, "completion_tokens": 3})]
    )
    run = lantern.ask(Q, as_json=False)
    assert "lantern: 1,200 prompt + 3 completion tokens" in run.stderr.splitlines()


def test_protocol_switch_is_said_once(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Ollama's answer to `tools` for a model without tool support.
    fake.reject_tools = Turn(
        raw='{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools"}}',
        raw_status=400,
    )
    fake.add_turns(
        [
            Turn(content='<tool_call>{"name": "list_files", "arguments": {}}</tool_call>'),
            Turn(content="It is a greeter."),
        ]
    )
    run = lantern.ask(Q, as_json=False)
    assert run.rc == 0, run.stderr
    assert run.stdout == "It is a greeter.\n"
    said = [line for line in run.stderr.splitlines() if "text tool protocol" in line]
    assert len(said) == 1, run.stderr
    assert said[0].startswith("lantern: ")


def test_each_error_message_is_printed_once(fake: FakeOpenAI, lantern: Lantern) -> None:
    # A stream cut twice: one `retrying` line, then the final error; no log echo of either.
    fake.add_turns([Turn(fault="cut", content="partial"), Turn(fault="cut", content="partial")])
    run = lantern.ask(Q, as_json=False)
    assert run.rc == 3
    lines = [line for line in run.stderr.splitlines() if "broke off" in line]
    assert len(lines) == 2, run.stderr
    assert lines[0].endswith("; retrying") and not lines[1].endswith("; retrying")
    assert all(line.count("broke off") == 1 for line in lines)


def test_final_error_names_the_status_once_then_the_fix(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Gemini's error body is a JSON array; the SDK alone would say "Error code: 400".
    body = '[{"error": {"code": 400, "message": "Invalid JSON payload", "status": "BAD"}}]'
    fake.add_turns([Turn(raw=body, raw_status=400)])
    run = lantern.ask(Q, as_json=False)
    assert run.rc == 3
    line, fix = run.stderr.splitlines()
    assert line.startswith("lantern: ") and "Invalid JSON payload" in line
    assert len(re.findall(r"\b400\b", run.stderr)) == 1 and "Error code" not in line
    assert fix.startswith("  fix: check the model name")
