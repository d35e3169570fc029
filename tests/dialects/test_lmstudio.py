"""LM Studio's OpenAI-compatible server (`http://localhost:1234/v1`).

Source: LM Studio docs ("OpenAI Compatibility Endpoints", "Tool Use" streaming
example): tool-call deltas with a numeric-string id in the first delta and the
arguments in pieces after it; models whose reasoning is not separated (DeepSeek-R1
distills, Qwen3 with "Separate reasoning_content" off) stream `<think>…</think>`
inside `content`, and the tags are split wherever the tokenizer cuts them; no
usage is sent in the stream.
"""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

MODEL = "deepseek-r1-distill-qwen-7b"

_chunk = replay.Chunks(
    {
        "id": "chatcmpl-k2v9x7q1m3z8w5r4t6y0",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": MODEL,
        "system_fingerprint": MODEL,
        "choices": ("index", "delta", "logprobs", "finish_reason"),
    }
)


def _call(index: int, call_id: str, pieces: list[str]) -> list[str]:
    def more(piece: str) -> dict[str, Any]:
        return {"index": index, "type": "function", "function": {"arguments": piece}}

    return [
        _chunk({"tool_calls": [replay.call(call_id, "", index=index)]}),
        *(_chunk({"tool_calls": [more(piece)]}) for piece in pieces),
    ]


def test_lmstudio_think_in_content_split_across_chunks(two_steps: replay.AskTwoSteps) -> None:
    # Source: LM Studio docs (tool use streaming; reasoning left in content).
    tool_step = [
        _chunk({"role": "assistant", "content": "<"}),
        _chunk({"content": "think>SECRET-LM"}),
        _chunk({"content": " plan: read app.py </"}),
        _chunk({"content": "think"}),
        _chunk({"content": ">\n"}),
        *_call(0, "365174485", ['{"path"', ': "src/app.py"}']),
        *_call(1, "610109318", ['{"path": "src/util.py"}']),
        _chunk({}, "tool_calls"),
        replay.DONE,
    ]
    answer_step = [
        _chunk({"role": "assistant", "content": "<think>"}),
        _chunk({"content": "SECRET-LM2 line 6"}),
        _chunk({"content": "</th"}),
        _chunk({"content": "ink>" + replay.ANSWER[:12]}),
        _chunk({"content": replay.ANSWER[12:]}),
        _chunk({}, "stop"),
        replay.DONE,
    ]
    asked = two_steps(tool_step, answer_step, model=MODEL, private=("SECRET-LM",))
    asked.assert_ids("365174485", "610109318")
    assert "SECRET-LM" not in asked.run.stderr
    # No usage in the stream: counts are estimated, and said to be.
    assert asked.out["usage"]["estimated"] is True
    assert asked.out["usage"]["promptTokens"] > 0 and asked.out["usage"]["completionTokens"] > 0
    for message in asked.second["messages"]:
        assert "SECRET-LM" not in (message.get("content") or ""), message


def test_lmstudio_think_never_reaches_the_terminal(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: as above, in text mode: the answer is printed, the reasoning nowhere.
    answer_step = [
        _chunk({"role": "assistant", "content": "<thi"}),
        _chunk({"content": "nk>SECRET-TTY"}),
        _chunk({"content": "</think>" + replay.ONE_ANSWER}),
        _chunk({}, "stop"),
        replay.DONE,
    ]
    tool_step = [
        *_call(0, "365174485", ['{"path": "src/app.py"}']),
        _chunk({}, "tool_calls"),
        replay.DONE,
    ]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=answer_step)])
    run = lantern.ask(replay.QUESTION, model=MODEL, as_json=False)
    assert run.rc == 0, run.stderr
    assert run.stdout.startswith(replay.ONE_ANSWER + "\n"), run.stdout
    assert "SECRET-TTY" not in run.stdout and "SECRET-TTY" not in run.stderr
    assert "think>" not in run.stdout


def test_reply_that_is_all_reasoning_gets_one_nudge(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Source: LM Studio with a DeepSeek-R1 distill: a reply can end right after its
    # `</think>` with no answer at all (finish_reason "stop"). Nothing is shown or stored
    # as the answer; the model is asked once more, and the note asking it goes where
    # strict providers accept it: not as a user message right after the tool result.
    tool_step = [
        _chunk({"role": "assistant", "content": ""}),
        *_call(0, "847261935", ['{"path": ', '"src/app.py"}']),
        _chunk({}, "tool_calls"),
        replay.DONE,
    ]
    only_thought = [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": p}) for p in ("<thi", "nk>ALL-SECRET it is line 6", "</think>")),
        _chunk({}, "stop"),
        replay.DONE,
    ]
    answer = [
        _chunk({"role": "assistant", "content": replay.ONE_ANSWER}),
        _chunk({}, "stop"),
        replay.DONE,
    ]
    fake.add_turns([Turn(raw=tool_step), Turn(raw=only_thought), Turn(raw=answer)])
    run = lantern.ask(replay.QUESTION, model=MODEL)
    out = replay.assert_clean_answer(run, replay.ONE_ANSWER, "ALL-SECRET")
    replay.assert_references(out, *replay.APP_REF)
    requests = fake.chat_requests()
    assert len(requests) == 3
    replay.assert_history_well_formed(requests[2])
    assert "ALL-SECRET" not in str(requests[2]["messages"])
