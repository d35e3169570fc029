"""Mistral's API (`https://api.mistral.ai/v1`) and Devstral.

Sources: the Mistral API's chat-completions behaviour as reported in client bug
threads, and mistral-common's request validator (`validator.py`): a request
with an unknown field such as `stream_options` is answered 422 with a pydantic
`detail` list as its `message` (not a string); tool-call ids must be exactly 9
characters a-z, A-Z, 0-9; after `tool` messages only an `assistant` message (or
more tool messages) may follow — "Unexpected role 'system' after role 'tool'"
otherwise. Streams send each tool call whole, without `type`, with the usage in
the finish chunk. Devstral served through the Mistral tool parser sends the id
in the first delta and `"id": "null"` with `"name": ""` on the argument deltas.
"""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

MODEL = "mistral-large-latest"

# mistral-common / the API's pydantic validation of an unknown request field.
STREAM_OPTIONS_422 = Turn(
    raw=(
        '{"object":"error","message":{"detail":[{"type":"extra_forbidden",'
        '"loc":["body","stream_options"],"msg":"Extra inputs are not permitted",'
        '"input":{"include_usage":true}}]},"type":"invalid_request_error",'
        '"param":null,"code":null}'
    ),
    raw_status=422,
)


# mistral-common's request models forbid unknown fields (pydantic extra="forbid").
_REQUEST_KEYS = {
    "model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop",
    "random_seed", "response_format", "tools", "tool_choice", "presence_penalty",
    "frequency_penalty", "n", "prediction", "parallel_tool_calls", "safe_prompt", "prompt_mode",
}  # fmt: skip
_MESSAGE_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls", "prefix"},
    "tool": {"role", "content", "tool_call_id", "name"},
}
_CALL_KEYS = {"id", "type", "function", "index"}


def assert_mistral_accepts(request: dict[str, Any], *, options_refused: bool = True) -> None:
    """What mistral-common's validator checks beyond message order: no unknown fields.

    `options_refused=False` for replays that let `stream_options` through (not Mistral's
    own API, which refuses it: see the 422 tests)."""
    keys = set(request) - (set() if options_refused else {"stream_options"})
    assert keys <= _REQUEST_KEYS, keys - _REQUEST_KEYS
    for message in request["messages"]:
        allowed = _MESSAGE_KEYS[message["role"]]
        assert set(message) <= allowed, (message["role"], set(message) - allowed)
        for sent in message.get("tool_calls") or ():
            assert set(sent) <= _CALL_KEYS, set(sent) - _CALL_KEYS
    replay.assert_history_well_formed(request, replay.MADE_ID)


_chunk = replay.Chunks(
    {
        "id": "0b7e5f3c2a1d4e6f8a9b0c1d2e3f4a5b",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": MODEL,
        "choices": ("index", "delta", "finish_reason", "logprobs"),
    }
)


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
    }


def _whole(call_id: str, arguments: str, index: int = 0) -> dict[str, Any]:
    """A call as Mistral streams it: whole, in one delta, without `type`."""
    return {
        "id": call_id,
        "function": {"name": "read_file", "arguments": arguments},
        "index": index,
    }


def _tool_step(*calls: tuple[str, str]) -> list[str]:
    whole = [_whole(call_id, arguments, i) for i, (call_id, arguments) in enumerate(calls)]
    return [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"tool_calls": whole}, "tool_calls", usage=_usage(390, 45)),
        replay.DONE,
    ]


def _answer_step(text: str) -> list[str]:
    return [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": text[:25]}),
        _chunk({"content": text[25:]}, "stop", usage=_usage(820, 30)),
        replay.DONE,
    ]


def test_mistral_422_on_stream_options_falls_back(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Mistral API 422 extra_forbidden for stream_options; streams with usage inside.
    fake.reject_stream_options = STREAM_OPTIONS_422

    fake.add_turns(
        [
            Turn(raw=_tool_step(("Hk3bT9aQz", replay.READ_APP), ("p2XvR8mLc", replay.READ_UTIL))),
            Turn(raw=_answer_step(replay.ANSWER)),
        ]
    )
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ANSWER)
    replay.assert_read_both(out)
    replay.assert_references(out, ("src/app.py", 6, 6), ("src/util.py", 1, 2))
    assert out["usage"] == {"promptTokens": 1210, "completionTokens": 75}
    assert "422" not in run.stderr

    requests = fake.chat_requests()
    answered = [r for r in requests if "stream_options" not in r]
    assert len(answered) == 2, "after the 422, every request goes without stream_options"
    assert len(requests) == 3 and "stream_options" in requests[0]
    second = answered[1]
    assert_mistral_accepts(answered[0])
    assert_mistral_accepts(second)
    sent = replay.assistant_with_calls(second)["tool_calls"]
    assert [c["id"] for c in sent] == ["Hk3bT9aQz", "p2XvR8mLc"]
    assert "def greet" in replay.tool_contents(second)["p2XvR8mLc"]


def test_mistral_422_without_body_falls_back(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Mistral-served gateways answering an unknown field with a bare 422.
    bare = Turn(raw="", raw_status=422)
    fake.reject_stream_options = bare

    fake.add_turns(
        [
            Turn(raw=_tool_step(("Hk3bT9aQz", replay.READ_APP))),
            Turn(raw=_answer_step(replay.ONE_ANSWER)),
        ]
    )
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    replay.assert_references(out, ("src/app.py", 6, 6))
    assert sum("stream_options" not in r for r in fake.chat_requests()) == 2


def test_devstral_null_id_continuations_keep_the_real_id(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: Devstral through the Mistral tool parser: id in the first delta, then argument
    # deltas with "id": "null" and "name": "" that must not overwrite it.
    def piece(call_id: str, name: str, arguments: str) -> str:
        return _chunk({"tool_calls": [replay.call(call_id, arguments, index=0, name=name)]})

    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        piece("Kq3v9XbZ1", "read_file", ""),
        piece("null", "", '{"path": '),
        piece("null", "", '"src/app.py"'),
        piece("null", "", "}"),
        _chunk({}, "tool_calls", usage=_usage(300, 20)),
        replay.DONE,
    ]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=_answer_step(replay.ONE_ANSWER))])
    run = lantern.ask(replay.QUESTION, model="devstral-small-latest")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    replay.assert_references(out, ("src/app.py", 6, 6))
    assert [(c["id"], c["name"], c["status"]) for c in out["toolCalls"]] == [
        ("Kq3v9XbZ1", "read_file", "done")
    ]

    second = fake.chat_requests()[1]
    assert_mistral_accepts(second, options_refused=False)
    sent = replay.assistant_with_calls(second)["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in sent] == [
        ("Kq3v9XbZ1", "read_file", replay.READ_APP)
    ]


def test_mistral_last_step_sends_no_system_or_user_after_tool(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Source: Mistral API 400 "Unexpected role 'system' after role 'tool'" (message order
    # check of mistral-common's validator). With --max-steps 2 the second request is the
    # last step, where Lantern asks for an answer without tools.
    fake.add_turns(
        [
            Turn(raw=_tool_step(("Hk3bT9aQz", replay.READ_APP), ("p2XvR8mLc", replay.READ_UTIL))),
            Turn(raw=_answer_step(replay.ANSWER)),
        ]
    )
    run = lantern.ask(replay.QUESTION, "--max-steps", "2")
    assert run.rc in (0, 4), run.stderr
    out = run.json
    assert out["answer"] == replay.ANSWER
    replay.assert_references(out, ("src/app.py", 6, 6), ("src/util.py", 1, 2))

    requests = fake.chat_requests()
    assert len(requests) == 2
    last = requests[-1]
    assert_mistral_accepts(last, options_refused=False)
    roles = [m["role"] for m in last["messages"]]
    assert roles[roles.index("tool") :] == ["tool", "tool"], roles
    assert not last.get("tools") or last.get("tool_choice") == "none"


def test_mistral_empty_reply_nudge_keeps_message_order(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: as above; an empty reply after tool results makes Lantern ask once more, and
    # that nudge must not be a user/system message right after the tool messages either.
    empty = [_chunk({"role": "assistant", "content": ""}), _chunk({}, "stop"), replay.DONE]
    fake.add_turns(
        [
            Turn(raw=_tool_step(("Hk3bT9aQz", replay.READ_APP))),
            Turn(raw=empty),
            Turn(raw=_answer_step(replay.ONE_ANSWER)),
        ]
    )
    run = lantern.ask(replay.QUESTION)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER)
    replay.assert_references(out, ("src/app.py", 6, 6))
    requests = fake.chat_requests()
    assert len(requests) == 3
    for request in requests[1:]:
        assert_mistral_accepts(request, options_refused=False)


def test_magistral_thinking_chunks_are_not_the_answer(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: Mistral API reasoning docs for Magistral: `delta.content` is a *list* of chunks,
    # `{"type": "thinking", "thinking": [{"type": "text", ...}]}` first, then text chunks.
    def thinking(text: str) -> dict[str, Any]:
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}

    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk(thinking("MAGI-1 the user wants")),
        _chunk(thinking(" main; read app.py")),
        _chunk(
            {"tool_calls": [_whole("Mg7Tq2Lx9", replay.READ_APP)]},
            "tool_calls",
            usage=_usage(300, 40),
        ),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk(thinking("MAGI-2 line 6")),
        _chunk({"content": [{"type": "text", "text": replay.ONE_ANSWER[:10]}]}),
        _chunk({"content": replay.ONE_ANSWER[10:]}, "stop", usage=_usage(700, 20)),
        replay.DONE,
    ]
    fake.reject_stream_options = STREAM_OPTIONS_422
    fake.add_turns([Turn(raw=tool_step), Turn(raw=answer_step)])
    run = lantern.ask(replay.QUESTION, model="magistral-medium-latest")
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER, "MAGI-1", "MAGI-2")
    replay.assert_references(out, ("src/app.py", 6, 6))
    answered = [r for r in fake.chat_requests() if "stream_options" not in r]
    assert len(answered) == 2
    assert_mistral_accepts(answered[1])
    assert [c["id"] for c in replay.assistant_with_calls(answered[1])["tool_calls"]] == [
        "Mg7Tq2Lx9"
    ]
