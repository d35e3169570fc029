"""What `lantern ask` says when there is no whole answer: no model, a cut-off reply,
an output limit, a prompt the endpoint cut. Text as a person reads it, exit codes as
scripts branch on them."""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Lantern
from tests.fakes.openai_server import FakeOpenAI, Turn

Q = "Where is main defined?"
EXIT_LIMIT = 4


def test_no_model_prints_readable_help(lantern: Lantern, fake: FakeOpenAI) -> None:
    run = lantern.ask(Q, base_url=None, model=None, as_json=False)
    assert run.rc == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert lines[0] == "lantern: no model is configured. Point Lantern at an OpenAI-compatible " \
        "endpoint:"  # fmt: skip
    assert lines[1].startswith("  OpenAI:  LANTERN_API_KEY=sk-")
    assert any(line.strip().startswith("lantern ask") and "--base-url" in line for line in lines)
    assert "\\n" not in run.stderr
    assert fake.requests == []


def test_a_reply_cut_at_the_output_limit_is_truncated(fake: FakeOpenAI, lantern: Lantern) -> None:
    lantern.config("maxOutputTokens = 300\n")
    fake.add_turns([Turn(content="main is defined in src/app.py and it", finish_reason="length")])
    run = lantern.ask(Q)
    assert run.rc == EXIT_LIMIT, run.stderr
    out = run.json
    assert out["stopReason"] == "truncated"
    assert out["answer"] == "main is defined in src/app.py and it"
    fix = out["detail"]["fixes"][0]
    assert fix == {"setting": "maxOutputTokens", "value": 600, "note": "it is 300 now"}
    (request,) = fake.chat_requests()
    assert request["max_tokens"] == 300 and "max_completion_tokens" not in request

    fake.add_turns([Turn(content="main is defined in", finish_reason="length")])
    text = lantern.ask(Q, as_json=False)
    assert text.rc == EXIT_LIMIT
    assert text.stdout == "main is defined in\n"  # what was received is shown
    lines = text.stderr.splitlines()
    start = lines.index(
        "lantern: the answer was cut off: the model reached its output limit "
        "(finish_reason length); what arrived is shown"
    )
    assert lines[start + 1] == "  fix: maxOutputTokens = 600 in config.toml — it is 300 now"


def test_max_output_tokens_follows_what_the_endpoint_takes(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # OpenAI's 400 for a reasoning model sent `max_tokens` (its API reference: "Unsupported
    # parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'
    # instead."): asked once more with the other name, never both.
    lantern.config("maxOutputTokens = 2048\n")
    refusal = (
        '{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with '
        'this model. Use \'max_completion_tokens\' instead.", "type": '
        '"invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}'
    )
    fake.reject_if(lambda body: "max_tokens" in body, Turn(raw=refusal, raw_status=400))
    fake.add_turns([Turn(content="At src/app.py:6.")])
    run = lantern.ask(Q)
    assert run.rc == 0, run.stderr
    first, second = fake.chat_requests()
    assert first["max_tokens"] == 2048 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 2048 and "max_tokens" not in second


def _usage(prompt: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5}


def test_a_prompt_the_endpoint_cut_is_warned_once(
    fake: FakeOpenAI, lantern: Lantern, tmp_path: Any
) -> None:
    # Ollama at its default context cuts the prompt and counts only what it kept: the
    # endpoint's prompt_tokens far below what was sent. Port 11434 is not needed: the words
    # name the server knob when the server is known, else the setting alone.
    big = "\n".join(f"line {i}: " + "x" * 60 for i in range(400))
    (lantern.project.root / "big.txt").write_text(big, "utf-8")
    conversation = tmp_path / "conv.json"
    read = {"id": "c1", "name": "read_file", "arguments": {"path": "big.txt"}}
    fake.add_turns(
        [
            Turn(tool_calls=[read], usage=_usage(300)),
            Turn(content="It is a list of lines.", usage=_usage(900)),
            Turn(content="Still lines.", usage=_usage(900)),
        ]
    )
    run = lantern.ask(Q, "--conversation-file", str(conversation), as_json=False)
    assert run.rc == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if line.startswith("lantern: warning:")]
    assert len(warned) == 1, run.stderr
    assert "the server cut the conversation to fit its context window" in warned[0]
    again = lantern.ask(Q, "--conversation-file", str(conversation))
    assert again.rc == 0, again.stderr
    assert "warning" not in again.stderr and "warnings" not in again.json  # once per conversation
