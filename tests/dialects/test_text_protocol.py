"""Models and servers without native tool calls: the text tool protocol fallback.

Sources: the Qwen2.5/Qwen3 and Hermes chat templates (a call is written as
`<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>` in the text; when the
server's tool parser is off or misses it — vLLM without `--tool-call-parser`, an
Ollama template that does not parse it — it reaches the client as `content`);
mistral-common's `[TOOL_CALLS]` control token followed by a JSON list of calls;
ollama `server/routes.go` ("<model> does not support tools", 400, in OpenAI's
error shape from `openai/openai.go`); vLLM `serving_chat.py` ('"auto" tool choice
requires --enable-auto-tool-choice and --tool-call-parser to be set', 400);
llama.cpp `utils.hpp` ("tools param requires --jinja flag", answered 500).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Lantern, Project
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

HERMES_CALL = (
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>'
)


_chunk = replay.Chunks(
    {
        "id": "chatcmpl-77",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": "qwen2.5:7b",
        "system_fingerprint": "fp_ollama",
        "choices": ("index", "delta", "finish_reason"),
    }
)


def _text_step(pieces: list[str]) -> list[str]:
    return [
        *(_chunk({"role": "assistant", "content": p}) for p in pieces),
        _chunk({"role": "assistant", "content": ""}, "stop"),
        replay.DONE,
    ]


def _split(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _assert_text_protocol_request(request: dict[str, Any]) -> None:
    """A text-protocol request: no tools parameter, no tool roles, the result as a user turn."""
    assert not request.get("tools"), "the text protocol sends no tools parameter"
    messages = request["messages"]
    assert all(m["role"] in ("system", "user", "assistant") for m in messages), messages
    assert not any(m.get("tool_calls") for m in messages), messages
    assert "read_file" in messages[0]["content"], "the tools are described in the system prompt"
    results = [m for m in messages if m["role"] == "user" and "def main" in (m["content"] or "")]
    assert len(results) == 1, messages
    assert "tool" in results[0]["content"].lower() and "untrusted" in results[0]["content"].lower()
    assert messages.index(results[0]) == len(messages) - 1, "the result is the latest turn"


def _assert_read_app(out: dict[str, Any]) -> None:
    assert [(c["name"], c["arguments"], c["status"]) for c in out["toolCalls"]] == [
        ("read_file", {"path": "src/app.py"}, "done")
    ], out["toolCalls"]


def test_hermes_markup_in_content_switches_to_text_protocol(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: Qwen2.5 / Hermes chat template <tool_call> markup, left in content by a server
    # whose tool parser did not pick it up (vLLM without --tool-call-parser, Ollama).
    call_step = _text_step(_split("I'll read the file.\n" + HERMES_CALL))
    fake.add_turns([Turn(raw=call_step), Turn(raw=_text_step(_split(replay.ONE_ANSWER)))])
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    _assert_read_app(out)
    replay.assert_references(out, ("src/app.py", 6, 6))
    assert run.stderr.count("text tool protocol") == 1, run.stderr

    first, second = fake.chat_requests()
    assert first.get("tools"), "auto starts with native tools"
    _assert_text_protocol_request(second)


def test_mistral_tool_calls_token_in_content(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: mistral-common tokenizer: [TOOL_CALLS] then a JSON list of calls, reaching the
    # client as text when the serving side does not parse it.
    text = '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "src/app.py"}}]'
    fake.add_turns(
        [
            Turn(raw=_text_step(_split(text, 11))),
            Turn(raw=_text_step([replay.ONE_ANSWER])),
        ]
    )
    run = lantern.ask(replay.QUESTION, model="mistral-7b-instruct")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    _assert_read_app(out)
    _assert_text_protocol_request(fake.chat_requests()[1])


OLLAMA_NO_TOOLS = Turn(
    raw=(
        '{"error":{"message":"registry.ollama.ai/library/gemma2:2b does not support tools",'
        '"type":"invalid_request_error","param":null,"code":null}}'
    ),
    raw_status=400,
)


def test_ollama_does_not_support_tools_falls_back_to_text(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: ollama server/routes.go + openai/openai.go: 400 "<model> does not support tools"
    # for every request that carries `tools`.
    fake.reject_tools = OLLAMA_NO_TOOLS
    fake.add_turns(
        [
            Turn(raw=_text_step(_split(HERMES_CALL, 5))),
            Turn(raw=_text_step(_split(replay.ONE_ANSWER))),
        ]
    )
    run = lantern.ask(replay.QUESTION, model="gemma2:2b")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    _assert_read_app(out)
    replay.assert_references(out, ("src/app.py", 6, 6))
    assert run.stderr.count("text tool protocol") == 1, run.stderr

    requests = fake.chat_requests()
    assert len(requests) == 3 and requests[0].get("tools")
    assert not requests[1].get("tools")
    _assert_text_protocol_request(requests[2])


REFUSED_TOOLS = [
    # Source: vLLM serving_chat.py: 400 when tools are sent to a server started without
    # --enable-auto-tool-choice.
    pytest.param(
        Turn(
            raw='{"object":"error","message":"\\"auto\\" tool choice requires '
            '--enable-auto-tool-choice and --tool-call-parser to be set",'
            '"type":"BadRequestError","param":null,"code":400}',
            raw_status=400,
        ),
        "Qwen/Qwen2.5-7B-Instruct",
        id="vllm-without-auto-tool-choice",
    ),
    # Source: llama.cpp utils.hpp oaicompat params: "tools param requires --jinja flag",
    # thrown as a runtime_error and answered 500 with type server_error.
    pytest.param(
        Turn(
            raw='{"error":{"code":500,"message":"tools param requires --jinja flag",'
            '"type":"server_error"}}',
            raw_status=500,
        ),
        "qwen2.5-7b-instruct-q4_k_m.gguf",
        id="llamacpp-without-jinja",
    ),
]


@pytest.mark.parametrize(("refusal", "model"), REFUSED_TOOLS)
def test_server_refusing_tools_falls_back_to_text(
    fake: FakeOpenAI, lantern: Lantern, refusal: Turn, model: str
) -> None:
    fake.reject_tools = refusal
    fake.add_turns(
        [Turn(raw=_text_step([HERMES_CALL])), Turn(raw=_text_step(_split(replay.ONE_ANSWER)))]
    )
    run = lantern.ask(replay.QUESTION, model=model)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    _assert_read_app(out)
    _assert_text_protocol_request(fake.chat_requests()[-1])


def test_native_setting_keeps_the_provider_message(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: as the Ollama case; with toolProtocol = "native" Lantern must not fall back,
    # and says the provider's own words plus what to change.
    lantern.config('toolProtocol = "native"\n')
    fake.reject_tools = OLLAMA_NO_TOOLS
    run = lantern.ask(replay.QUESTION, model="gemma2:2b")
    out = replay.assert_error_once(run, "does not support tools")
    assert "toolProtocol" in out["error"]
    assert len(fake.chat_requests()) == 1


def test_text_setting_never_sends_tools(fake: FakeOpenAI, lantern: Lantern) -> None:
    # With toolProtocol = "text" the first request already uses the text protocol.
    lantern.config('toolProtocol = "text"\n')
    fake.add_turns([Turn(raw=_text_step([HERMES_CALL])), Turn(raw=_text_step([replay.ONE_ANSWER]))])
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    _assert_read_app(out)
    first, second = fake.chat_requests()
    assert not first.get("tools")
    _assert_text_protocol_request(second)


def test_tool_protocol_flag_beats_the_config_file(fake: FakeOpenAI, lantern: Lantern) -> None:
    # `--tool-protocol text` on the command line overrides config.toml's "native".
    lantern.config('toolProtocol = "native"\n')
    fake.add_turns([Turn(raw=_text_step([HERMES_CALL])), Turn(raw=_text_step([replay.ONE_ANSWER]))])
    run = lantern.ask(replay.QUESTION, "--tool-protocol", "text")
    _assert_read_app(replay.assert_clean_answer(run, replay.ONE_ANSWER))
    assert not fake.chat_requests()[0].get("tools")


def test_follow_up_keeps_the_text_protocol(
    fake: FakeOpenAI, lantern: Lantern, tmp_path: Path
) -> None:
    # Source: as the Ollama case. The switch is stored with the conversation: a follow-up
    # does not try native tools again (and is not told about the switch again).
    conv = tmp_path / "conv.json"
    fake.reject_tools = OLLAMA_NO_TOOLS
    fake.add_turns(
        [
            Turn(raw=_text_step([HERMES_CALL])),
            Turn(raw=_text_step([replay.ONE_ANSWER])),
            Turn(raw=_text_step(["It takes `argv`, see src/app.py:6."])),
        ]
    )
    first = lantern.ask(replay.QUESTION, "--conversation-file", str(conv), model="gemma2:2b")
    replay.assert_clean_answer(first, replay.ONE_ANSWER)
    before = len(fake.chat_requests())
    second = lantern.ask("What does it take?", "--conversation-file", str(conv), model="gemma2:2b")
    replay.assert_clean_answer(second, "It takes `argv`, see src/app.py:6.")
    assert "text tool protocol" not in second.stderr
    follow_ups = fake.chat_requests()[before:]
    assert len(follow_ups) == 1 and not follow_ups[0].get("tools")


def test_two_text_calls_in_a_fence_with_prose(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: how chat models (Llama 3 / Gemma through Ollama) answer a text tool protocol:
    # prose first, the calls inside a code fence, several calls in one reply.
    text = (
        "Let me look at both files.\n\n```xml\n"
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/util.py"}}\n</tool_call>\n'
        "```\n"
    )
    lantern.config('toolProtocol = "text"\n')
    fake.add_turns(
        [Turn(raw=_text_step(_split(text, 9))), Turn(raw=_text_step(_split(replay.ANSWER)))]
    )
    run = lantern.ask(replay.QUESTION, model="gemma2:9b")
    out = replay.assert_clean_answer(run, replay.ANSWER)
    replay.assert_read_both(out)
    replay.assert_references(out, ("src/app.py", 6, 6), ("src/util.py", 1, 2))
    second = fake.chat_requests()[1]
    _assert_text_protocol_request(second)
    assert "def greet" in second["messages"][-1]["content"]


def test_text_protocol_calls_stay_in_the_jail(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    # Source: the Hermes <tool_call> format again; the calls a text-protocol model writes
    # go through the same jail and secret refusals as native ones.
    calls = "".join(
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "{path}"}}}}</tool_call>\n'
        for path in (".env", "link.txt", "../outside/canary.txt", "deploy.key")
    )
    answer = "I could not read those files."
    fake.reject_tools = OLLAMA_NO_TOOLS
    fake.add_turns([Turn(raw=_text_step([calls])), Turn(raw=_text_step([answer]))])
    run = lantern.ask(replay.QUESTION, model="gemma2:2b")
    out = replay.assert_clean_answer(run, answer)
    assert len(out["toolCalls"]) == 4, out["toolCalls"]
    assert all(c["status"] != "done" and c.get("code") for c in out["toolCalls"]), out["toolCalls"]
    sent = json.dumps(fake.chat_requests())
    for canary in project.canaries:
        assert canary not in sent and canary not in run.stdout
