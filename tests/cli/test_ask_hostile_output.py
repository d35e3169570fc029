"""`lantern ask` against model output built to hurt: arguments nested 100,000 deep, a
reply that never ends, a stream of empty chunks, an answer of 100,000 citations.

Each ends the question the documented way (a result, a stop reason, an exit code), never
with a traceback. The fake server replays the hostile bytes; hangs are bounded by
HANG_S only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from lantern import exit_codes
from lantern.agent.references import MAX_CITATIONS

from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern

Q = "What is in this workspace?"
DEEP = "[" * 100_000 + "]" * 100_000


def _sse(delta: dict[str, object], finish: str | None = None) -> str:
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(chunk)}\n\n"


def test_arguments_nested_100k_deep_are_invalid_arguments(
    lantern: Lantern, fake: FakeOpenAI
) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[{"id": "call_deep", "name": "read_file", "arguments": DEEP}]),
            Turn(content="Sorry, let me answer without it."),
        ]
    )
    run = lantern.ask(Q)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == exit_codes.OK, run.stderr[-2000:]
    (call,) = run.json["toolCalls"]
    assert call["code"] == "invalid_arguments"
    assert run.json["answer"] == "Sorry, let me answer without it."
    # The model was told, in the result of its call, what was wrong.
    sent = json.dumps(fake.chat_requests()[1]["messages"])
    assert "nested deeper than" in sent


def test_arguments_nested_100k_deep_in_the_text_protocol(
    lantern: Lantern, fake: FakeOpenAI
) -> None:
    call = '<tool_call>{"name": "read_file", "arguments": ' + DEEP + "}</tool_call>"
    fake.add_turns([Turn(content=call), Turn(content="Answered without it.")])
    run = lantern.ask(Q, "--tool-protocol", "text")
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == exit_codes.OK, run.stderr[-2000:]
    assert run.json["answer"] == "Answered without it."


def test_a_stream_chunk_nested_100k_deep_is_a_stream_error(
    lantern: Lantern, fake: FakeOpenAI
) -> None:
    bad = 'data: {"choices": [{"index": 0, "delta": {"content": ' + DEEP + "}}]}\n\n"
    fake.add_turns([Turn(raw=[bad]), Turn(raw=[bad])])
    run = lantern.ask(Q)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == exit_codes.MODEL
    assert run.json["errorCode"] == "model_stream"


def test_an_answer_of_100k_citations_reports_the_first_200(
    lantern: Lantern, fake: FakeOpenAI
) -> None:
    (lantern.project.root / "a.py").write_text("x = 1\n" * 12, "utf-8")
    cited = [f"a.py:{1 + i % 12}" for i in range(100_000)]
    cited[5] = "src/util.py:2"
    cited[200] = "src/util.py:1"  # the 201st: not considered
    answer = " ".join(cited)
    assert len(answer.encode()) < 1 << 20  # under the cap on one reply
    fake.add_turns([Turn(raw=[_sse({"content": answer}, "stop"), "data: [DONE]\n\n"])])
    run = lantern.ask(Q)
    assert run.rc == exit_codes.OK, run.stderr[-2000:]
    assert run.json["answer"] == answer
    refs = run.json["references"]
    assert len(refs) == MAX_CITATIONS == 200
    assert all(r["verified"] for r in refs)
    assert [r["path"] for r in refs].count("src/util.py") == 1
    start = sum(len(c) + 1 for c in cited[:199])
    assert refs[-1]["span"] == [start, start + len(cited[199])]


PIECE = "all work and no play " * 780  # ~16 KiB


def test_an_endless_answer_stops_at_1_mib_as_truncated(lantern: Lantern, fake: FakeOpenAI) -> None:
    """The stream never ends (16 MiB, then it hangs): the question stops at the cap with
    `truncated`, what arrived as the answer, and the limit named; not at the timeout."""
    fake.add_turns([Turn(raw=[_sse({"content": PIECE})] * 1000, fault="stall")])
    run = lantern.ask(Q)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == exit_codes.LIMIT
    result = run.json
    assert result["stopReason"] == "truncated"
    assert result["detail"]["code"] == "truncated"
    assert "limit of 1 MiB for one reply" in result["detail"]["message"]
    assert result["answer"].startswith(PIECE.strip())
    assert len(result["answer"]) < 2 << 20
    assert len(fake.chat_requests()) == 1


def test_endless_tool_call_arguments_are_never_run(lantern: Lantern, fake: FakeOpenAI) -> None:
    first = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"path'}}
    more = {"index": 0, "function": {"arguments": PIECE}}
    raw = [_sse({"tool_calls": [first]}), *[_sse({"tool_calls": [more]})] * 1000]
    fake.add_turns([Turn(raw=raw, fault="stall"), Turn(content="A smaller answer.")])
    run = lantern.ask(Q)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.rc == exit_codes.OK, run.stderr[-2000:]
    assert run.json["toolCalls"] == []  # cut off: not run
    assert run.json["answer"] == "A smaller answer."
    second = fake.chat_requests()[1]["messages"]
    assert len(json.dumps(second)) < 1 << 20  # the cut call is not sent back
