"""The context window through `lantern ask`, as a real subprocess against replayed servers:
the meter after an answer, a long conversation summarized (and a follow-up that still knows
an early fact), and a server that cuts a prompt Lantern was told would fit."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Lantern
from tests.cli.test_ask_events import sse
from tests.fakes import window_answers
from tests.fakes.openai_server import FakeOpenAI, Turn

FACT = "The greeting is built by greet() in src/util.py:1-2."
SUMMARY = f"The user asked what the project does; it is a tiny greeter. {FACT}"
BIG = "".join(f"row {i:04d}: " + "value " * 12 + "\n" for i in range(600))


def _usage(prompt: int, completion: int = 10) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + 10}


def _is_summary_request(body: dict[str, object]) -> bool:
    messages = body.get("messages")
    return isinstance(messages, list) and "Lantern's summarizer" in str(messages[0])


def test_the_meter_after_an_answer_says_the_window_and_where_it_came_from(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # Ollama runs the model with 8,192 tokens: /api/ps says so.
    fake.routes.update(window_answers.ollama(model="fake-model", loaded=8192, trained=32768))
    lantern.env = dict(lantern.env, OLLAMA_HOST=f"127.0.0.1:{fake.port}")
    fake.add_turns([Turn(content="It greets.", usage=_usage(900))])
    run = lantern.ask("What does it do?")
    assert run.rc == 0, run.stderr
    meter = {"used": 910, "window": 8192, "source": "Ollama /api/ps: the loaded model"}
    assert run.json["context"] == meter

    fake.add_turns([Turn(content="It greets.", usage=_usage(7000))])
    run = lantern.ask("What does it do?", as_json=False)
    assert run.rc == 0, run.stderr
    assert (
        "lantern: context window: 7,010 of 8,192 used (85%; Ollama /api/ps: the loaded model); "
        "earlier turns will be summarized when the window is full"
    ) in run.stderr.splitlines()


def test_a_long_conversation_is_summarized_and_a_follow_up_knows_an_early_fact(
    fake: FakeOpenAI, lantern: Lantern, tmp_path: Path
) -> None:
    (lantern.project.root / "big.txt").write_text(BIG, "utf-8")
    lantern.config("maxContextTokens = 6000\n")
    conversation = tmp_path / "conversation.json"
    keep = ("--conversation-file", str(conversation))
    summary = sse({"role": "assistant", "content": SUMMARY})
    fake.reject_if(_is_summary_request, Turn(raw=summary))
    read = {"id": "r1", "name": "read_file"}

    fake.add_turns([Turn(content=FACT)])
    assert lantern.ask("Where is the greeting built?", *keep).rc == 0
    said: list[str] = []
    for n in range(6):  # questions that each read a big file, until the window is full
        call = {**read, "id": f"r{n}", "arguments": {"path": "big.txt", "offset": 1 + 100 * n}}
        fake.add_turns([Turn(tool_calls=[call]), Turn(content=f"Rows {n}.")])
        run = lantern.ask(f"What is in big.txt, part {n}?", *keep, as_json=False)
        assert run.rc == 0, run.stderr
        said = [line for line in run.stderr.splitlines() if line.startswith("lantern: Earlier")]
        if said:
            break
    assert said and said[0].startswith("lantern: Earlier turns summarized ("), said
    stored = json.loads(conversation.read_text("utf-8"))["messages"]
    assert stored[0]["content"].startswith("[Lantern] Summary of the earlier turns")

    fake.add_turns([Turn(content="In src/util.py:1-2.")])
    run = lantern.ask("Where was the greeting built again?", *keep)
    assert run.rc == 0, run.stderr
    follow_up = json.dumps(fake.chat_requests()[-1]["messages"])
    assert FACT in follow_up  # the early fact, kept by the summary


def test_a_window_set_larger_than_the_server_runs_is_cut_and_said_with_the_fix(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # The server runs 2,048 tokens and cuts longer prompts silently, as Ollama does; the
    # user told Lantern 32,000.
    fake.window = 2048
    (lantern.project.root / "big.txt").write_text(BIG, "utf-8")
    lantern.config("maxContextTokens = 32000\n")
    read = {"id": "r1", "name": "read_file", "arguments": {"path": "big.txt"}}
    fake.add_turns([Turn(tool_calls=[read]), Turn(content="Rows.")])
    run = lantern.ask("What is in big.txt?", as_json=False)
    assert run.rc == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if line.startswith("lantern: warning:")]
    assert len(warned) == 1, run.stderr
    assert "the server cut the conversation to fit its context window" in warned[0]
    assert "fix:" in run.stderr
