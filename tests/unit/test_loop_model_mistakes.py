"""What the model gets wrong, and what the loop does about it.

Broken tool arguments, a call cut off by the output limit, empty replies, a
tool that does not exist, many calls at once, the same call twice: each is
scripted in process (`ScriptedModel`) on a real workspace, and the test reads
the result and what the model was sent next. The CLI and the language server
show the same result; their own tests cover how it is printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.conversation import Conversation
from lantern.agent.loop import Agent
from lantern.approvals.approver import Decision, Fixed
from lantern.workspace.roots import Workspace

from tests.fakes.scripted_model import Say, ScriptedModel

Q = "Where is the greeting built?"


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text(
        'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n', "utf-8"
    )
    (root / "src" / "app.py").write_text("from src.util import greet\n\n\ndef main():\n", "utf-8")
    (root / "notes.txt").write_text(
        "".join(f"note {i:03d}: nothing to see in this line\n" for i in range(1, 61)), "utf-8"
    )
    return root


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


def agent(model: ScriptedModel, proj: Path) -> Agent:
    return Agent(model=model, workspace=Workspace([proj]), approvals=Fixed(Decision.ALLOW_ONCE))


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def read(call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    return call(call_id, "read_file", {"path": path, **extra})


def tool_message(messages: list[dict[str, Any]], call_id: str) -> dict[str, Any] | None:
    for message in messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return message
    return None


def assistant_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]


async def test_malformed_tool_arguments(model: ScriptedModel, proj: Path) -> None:
    broken = '{"path": "src/app.py", "offset": '
    model.add(Say(tool_calls=[call("bad1", "read_file", broken)]), Say(content="Sorry, done."))
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "done"
    (record,) = result.tool_calls
    assert (record.id, record.code, record.status) == ("bad1", "invalid_arguments", "error")

    follow = model.messages(1)
    (stub,) = assistant_calls(follow)
    assert stub["id"] == "bad1" and stub["function"]["arguments"] == "{}"
    assert broken not in json.dumps(follow)
    message = tool_message(follow, "bad1")
    assert message is not None and "not valid JSON" in message["content"]


async def test_finish_reason_length_never_runs_the_cut_call(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(
        Say(
            content="Let me read",
            tool_calls=[call("cut1", "read_file", '{"path": "src/ap')],
            finish_reason="length",
        ),
        Say(content="Answering directly."),
    )
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "done" and result.answer == "Answering directly."
    assert result.tool_calls == []
    follow = model.messages(1)
    assert tool_message(follow, "cut1") is None
    assert assistant_calls(follow) == []
    assert "reached the output limit" in follow[-1]["content"]
    assert model.sent[1].tools  # the model may still call tools, smaller ones


async def test_empty_reply_is_retried_once(model: ScriptedModel, proj: Path) -> None:
    model.add(Say(content=""), Say(content="Now an answer."))
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "done" and result.answer == "Now an answer."
    assert len(model.sent) == 2
    assert "empty" in model.messages(1)[-1]["content"]


async def test_empty_reply_twice_is_an_error(model: ScriptedModel, proj: Path) -> None:
    model.add(Say(content=""), Say(content=""), Say(content="(not used)"))
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "error" and result.error and "empty" in result.error
    assert len(model.sent) == 2


async def test_unknown_tool(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(tool_calls=[call("u1", "write_file", {"path": "src/app.py", "text": "x"})]),
        Say(content="I can only read."),
    )
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "done"
    (record,) = result.tool_calls
    assert record.code == "unknown_tool" and record.status == "error"
    message = tool_message(model.messages(1), "u1")
    assert message is not None and "read_file" in message["content"]
    assert "def main" in (proj / "src" / "app.py").read_text()  # untouched


async def test_many_parallel_calls_one_tool_message_each(model: ScriptedModel, proj: Path) -> None:
    calls = [read(f"p{i}", "notes.txt", offset=i * 5 + 1, limit=2) for i in range(6)]
    calls += [call("s1", "search", {"pattern": "greet"}), call("l1", "list_files", {})]
    model.add(Say(tool_calls=calls), Say(content="Done."))
    result = await agent(model, proj).ask(Q, Conversation())
    ids = [c["id"] for c in calls]
    assert [c.id for c in result.tool_calls] == ids
    assert all(c.status == "done" for c in result.tool_calls)

    messages = model.messages(1)
    at = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
    assert [c["id"] for c in messages[at]["tool_calls"]] == ids
    following = messages[at + 1 : at + 1 + len(ids)]
    assert [m["role"] for m in following] == ["tool"] * len(ids)
    assert [m["tool_call_id"] for m in following] == ids
    for i in range(6):  # each read got its own window back
        assert f"note {i * 5 + 1:03d}" in following[i]["content"]
    assert "src/util.py" in following[6]["content"]


async def test_repeated_identical_call_is_answered_from_history(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")]),
        Say(tool_calls=[read("r2", "src/util.py")]),
        Say(content="Done."),
    )
    result = await agent(model, proj).ask(Q, Conversation())
    assert result.stop_reason == "done"
    message = tool_message(model.messages(2), "r2")
    assert message is not None
    assert "already returned above" in message["content"] and "r1" in message["content"]
    assert "def greet" not in message["content"]
