"""Helpers shared by the dialect replays: SSE framing, chunk builders and common checks.

The streams themselves live in the test modules, one per server family, so that
each reads as the wire does. Here are only the framing (`data:` lines, compact
JSON as Go, C++ and pydantic servers write it), `Chunks` to build one server's
chunks in its own key order, small builders for tool calls and usage, the
two-step question every dialect answers (`Replay.two_steps`: read the files,
then answer citing them), and the assertions that hold for every provider:
tool-call ids sent back match the tool messages, nothing but tool messages
follows an assistant message with calls, the answer carries no private
reasoning or tool-call markup, the references point at the lines, and a
provider's error reaches the user once, in its own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.cli.conftest import Lantern, Run
from tests.fakes.openai_server import FakeOpenAI, Turn

# The workspace of `tests/cli/conftest.py`: `main` is defined on line 6 of
# src/app.py, `greet` on lines 1-2 of src/util.py.
ANSWER = "`main` is defined at src/app.py:6 and calls `greet` from src/util.py:1-2."
ONE_ANSWER = "`main` is defined at src/app.py:6."
QUESTION = "Where is main defined, and what does it call?"

# What every provider accepts back as a tool-call id when Lantern has to make one.
MADE_ID = re.compile(r"[A-Za-z0-9]{9}")

READ_APP = '{"path": "src/app.py"}'
READ_UTIL = '{"path": "src/util.py"}'


def data(event: dict[str, Any]) -> str:
    """One SSE event as servers write it: `data: <compact JSON>` and a blank line."""
    return "data: " + json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n\n"


DONE = "data: [DONE]\n\n"


def calls_sent(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool call of every assistant message in a recorded request, in order."""
    return [
        call
        for message in request["messages"]
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    ]


def assistant_with_calls(request: dict[str, Any]) -> dict[str, Any]:
    """The one assistant message with tool calls in a two-step question's second request."""
    found = [m for m in request["messages"] if m.get("role") == "assistant" and m.get("tool_calls")]
    assert len(found) == 1, f"expected one assistant message with calls: {request['messages']}"
    return found[0]


def assert_history_well_formed(
    request: dict[str, Any], id_pattern: re.Pattern[str] | None = None
) -> None:
    """What strict providers (Mistral first) check on every request they receive.

    Each assistant message with tool calls is followed by exactly one tool message
    per call, with the same ids in the same order; ids are unique, non-empty,
    never "null", and of `id_pattern` when given; arguments are JSON objects; and
    no `system` or `user` message comes directly after a `tool` message.
    """
    messages = request["messages"]
    seen_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            ids = [call["id"] for call in message["tool_calls"]]
            after = messages[i + 1 : i + 1 + len(ids)]
            assert [m.get("role") for m in after] == ["tool"] * len(ids), messages
            assert [m.get("tool_call_id") for m in after] == ids, messages
            for call in message["tool_calls"]:
                assert isinstance(call["id"], str) and call["id"] not in ("", "null"), call
                if id_pattern is not None:
                    assert id_pattern.fullmatch(call["id"]), call["id"]
                assert call.get("type") == "function", call
                assert isinstance(json.loads(call["function"]["arguments"]), dict), call
            seen_ids += ids
        if role == "tool" and i + 1 < len(messages):
            follower = messages[i + 1].get("role")
            assert follower not in ("system", "user"), (
                f"a {follower!r} message right after a tool message: {messages}"
            )
    assert len(seen_ids) == len(set(seen_ids)), f"tool-call ids reused: {seen_ids}"


def tool_contents(request: dict[str, Any]) -> dict[str, str]:
    """tool_call_id -> content of each tool message."""
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m.get("role") == "tool"}


def assert_clean_answer(run: Run, answer: str, *private: str) -> dict[str, Any]:
    """The run answered exactly `answer`, with none of `private` nor any tool-call markup."""
    assert run.rc == 0, run.stderr
    out = run.json
    assert out["stopReason"] == "done", out
    assert out["answer"] == answer, out["answer"]
    for text in (*private, "<think>", "</think>", "<tool_call>", "[TOOL_CALLS]"):
        assert text not in out["answer"], f"{text!r} leaked into the answer"
        assert text not in run.stdout, f"{text!r} leaked onto stdout"
    return out


def assert_references(out: dict[str, Any], *expected: tuple[str, int, int]) -> None:
    """References found in the answer, each verified and seen (the lines were read)."""
    got = [(r["path"], r["startLine"], r["endLine"]) for r in out["references"]]
    assert got == list(expected), out["references"]
    assert all(r["verified"] and r["seen"] for r in out["references"]), out["references"]


def assert_read_both(out: dict[str, Any]) -> None:
    """Both files were read by the tools, one call each, and succeeded."""
    calls = [(c["name"], c["arguments"], c["status"]) for c in out["toolCalls"]]
    assert calls == [
        ("read_file", {"path": "src/app.py"}, "done"),
        ("read_file", {"path": "src/util.py"}, "done"),
    ], out["toolCalls"]


# --- building a server's chunks ----------------------------------------------------------------


class Chunks:
    """One server's `chat.completion.chunk` events, fields in the order that server writes them.

    `envelope` is a whole chunk but for its choice: the value under "choices" names the
    choice's keys in order. There `index` is 0, `delta` the delta, any `…finish_reason`
    the finish reason and any other key null. Keyword arguments of a call add (or
    replace) top-level fields.
    """

    def __init__(self, envelope: dict[str, Any]) -> None:
        self.envelope = envelope

    def _with(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {key: choices if key == "choices" else value for key, value in self.envelope.items()}

    def __call__(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        values = {"index": 0, "delta": delta}
        choice = {
            key: finish if key.endswith("finish_reason") else values.get(key)
            for key in self.envelope["choices"]
        }
        return data({**self._with([choice]), **extra})

    def usage(self, usage: dict[str, Any]) -> str:
        """The last chunk some servers send when usage was asked for: no choices, the usage."""
        return data({**self._with([]), "usage": usage})


def usage(prompt: int, completion: int, **more: Any) -> dict[str, Any]:
    """An OpenAI usage object, with any server-specific fields after the three counts."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        **more,
    }


def call(
    call_id: str | None, arguments: str | None, *, index: int | None = None, name: str = "read_file"
) -> dict[str, Any]:
    """A tool call as it appears in a delta; `None` leaves out the id, index or arguments."""
    made: dict[str, Any] = {} if index is None else {"index": index}
    if call_id is not None:
        made["id"] = call_id
    function = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {**made, "type": "function", "function": function}


def args(index: int, piece: str) -> dict[str, Any]:
    """A later delta of call `index`: the next piece of its arguments, nothing else."""
    return {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


# --- the two-step question: read, then answer --------------------------------------------------

BOTH_REFS = (("src/app.py", 6, 6), ("src/util.py", 1, 2))
APP_REF = (("src/app.py", 6, 6),)


@dataclass
class TwoSteps:
    """A question answered in two model turns: tool calls, then the answer that cites them."""

    run: Run
    out: dict[str, Any]
    requests: list[dict[str, Any]]
    second: dict[str, Any]
    assistant: dict[str, Any]

    @property
    def sent(self) -> list[dict[str, Any]]:
        """The tool calls Lantern sent back in the second request."""
        return list(self.assistant["tool_calls"])

    def assert_ids(self, *ids: str) -> None:
        """The calls went back with exactly these ids, each tool result under its call's id."""
        assert [c["id"] for c in self.sent] == list(ids), self.sent
        assert_results_sent(self.second, *ids)

    def assert_usage(self, prompt: int, completion: int) -> None:
        """The token counts the server reported, summed over both steps."""
        assert self.out["usage"] == {"promptTokens": prompt, "completionTokens": completion}


class Replay:
    """The fake server and `lantern ask` together: replays a dialect's steps, checks the run."""

    def __init__(self, fake: FakeOpenAI, lantern: Lantern) -> None:
        self.fake, self.lantern = fake, lantern

    def two_steps(
        self,
        tool_step: list[str],
        answer_step: list[str],
        *,
        answer: str = ANSWER,
        private: tuple[str, ...] = (),
        model: str | None = None,
        id_pattern: re.Pattern[str] | None = None,
    ) -> TwoSteps:
        """Replay both steps and check what every dialect must get right.

        The answer is exactly `answer`, free of `private` text and markup; its references
        are verified and seen: for `ANSWER` both files, each read by one call, for
        `ONE_ANSWER` src/app.py:6. The second request is well formed (ids of `id_pattern`
        when given), with one assistant message that carries calls.
        """
        self.fake.add_turns([Turn(raw=tool_step), Turn(raw=answer_step)])
        run = self.lantern.ask(QUESTION, **({} if model is None else {"model": model}))
        out = assert_clean_answer(run, answer, *private)
        if answer == ANSWER:
            assert_read_both(out)
            assert_references(out, *BOTH_REFS)
        elif answer == ONE_ANSWER:
            assert_references(out, *APP_REF)
        requests = self.fake.chat_requests()
        second = requests[1]
        assert_history_well_formed(second, id_pattern)
        return TwoSteps(run, out, requests, second, assistant_with_calls(second))


# What the `two_steps` fixture is: `Replay.two_steps` bound to this test's server and workspace.
AskTwoSteps = Callable[..., TwoSteps]


def assert_error_once(run: Run, words: str) -> dict[str, Any]:
    """The run stopped on the provider's error: its words in the result and once on stderr.

    Exit code 3, `stopReason` "error", and no bare "Error code: N" line left for the user.
    """
    assert run.rc == 3, run.stderr
    out = run.json
    assert out["stopReason"] == "error", out
    assert words in out["error"], out["error"]
    assert run.stderr.count(words) == 1, run.stderr
    assert not re.search(r"Error code: \d+\s*$", run.stderr, re.M), run.stderr
    return out


def assert_results_sent(request: dict[str, Any], *ids: str) -> None:
    """Each read's result went back under its call's id: src/app.py's first, then src/util.py's."""
    contents = tool_contents(request)
    for call_id, defines in zip(ids, ("def main", "def greet"), strict=False):
        assert defines in contents[call_id], contents
