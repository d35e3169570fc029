"""The agent loop in process: events, approvals, cancellation, conversations, the prompt.

`Agent.ask` runs against the scripted fake model server over real HTTP, on a
real `Workspace` in a temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.conversation import Conversation, estimate_tokens
from lantern.agent.loop import Agent, AskResult, Event, Limits
from lantern.agent.model import ModelClient
from lantern.agent.prompts import system_prompt
from lantern.approvals import (
    ApprovalRequest,
    Decision,
    Fixed,
    Outcome,
    Remembering,
    WorkspaceGrants,
)
from lantern.workspace.roots import Workspace

from tests.fakes.openai_server import FakeOpenAI, Turn

UTIL_PY = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
CANARY = "CANARY-LOOP-91d0c3"



@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text(UTIL_PY)
    (root / "src" / "app.py").write_text("from src.util import greet\n\nprint(greet('x'))\n")
    (root / "README.md").write_text("# proj\n")
    (root / ".env").write_text(f"TOKEN={CANARY}\n")
    return root


@pytest.fixture
def ws(proj: Path) -> Workspace:
    return Workspace([proj])


@pytest.fixture
async def model(fake: FakeOpenAI) -> AsyncIterator[ModelClient]:
    client = ModelClient(
        model="fake-model", base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=0
    )
    try:
        yield client
    finally:
        await client.close()


def agent(model: ModelClient, ws: Workspace, approvals: Any = None, **limits: Any) -> Agent:
    return Agent(
        model=model,
        workspace=ws,
        approvals=approvals or Fixed(Decision.ALLOW_ONCE),
        limits=Limits(**limits),
    )


def read(call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "arguments": {"path": path, **extra}}


def compressed(events: list[Event]) -> list[str]:
    """Event kinds (tool events with their status), runs of answerDelta folded into one."""
    out: list[str] = []
    for event in events:
        label = event["kind"]
        if label == "tool":
            label = f"tool:{event['callId']}:{event['status']}"
        elif label == "status":
            label = f"status:{event['status']}"
        if not (out and out[-1] == label == "answerDelta"):
            out.append(label)
    return out


# --- events --------------------------------------------------------------------------------


async def test_events_in_order(fake: FakeOpenAI, model: ModelClient, ws: Workspace) -> None:
    fake.add_turns(
        [
            Turn(
                tool_calls=[read("r1", "src/util.py")],
                usage={"prompt_tokens": 50, "completion_tokens": 4},
            ),
            Turn(
                content="greet is at src/util.py:1.",
                usage={"prompt_tokens": 80, "completion_tokens": 6},
            ),
        ]
    )
    events: list[Event] = []
    result = await agent(model, ws).ask("Where is greet?", Conversation(), events.append)
    assert result.stop_reason == "done"
    assert compressed(events) == [
        "status:thinking",
        "usage",
        "tool:r1:running",
        "tool:r1:done",
        "status:thinking",
        "answerDelta",
        "usage",
        "status:done",
    ]
    assert "".join(e["text"] for e in events if e["kind"] == "answerDelta") == result.answer
    usage = [e for e in events if e["kind"] == "usage"]
    assert (usage[-1]["promptTokens"], usage[-1]["completionTokens"]) == (130, 10)
    done = next(e for e in events if e.get("status") == "done" and e["kind"] == "tool")
    assert done["name"] == "read_file" and done["bytes"] > 0 and "ms" in done
    assert [e["step"] for e in events if e.get("status") == "thinking"] == [1, 2]
    ref = result.references[0]
    assert ref.verified and ref.seen and ref.path == "src/util.py"


async def test_awaiting_approval_event_before_the_result(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace, tmp_path: Path
) -> None:
    class Gate:
        def __init__(self) -> None:
            self.asked: list[ApprovalRequest] = []
            self.open = asyncio.Event()

        async def decide(self, request: ApprovalRequest) -> Decision:
            self.asked.append(request)
            await self.open.wait()
            return Decision.ALLOW_CONVERSATION

    gate = Gate()
    approvals = Remembering(gate, grants=WorkspaceGrants(tmp_path / "grants.json"))
    fake.add_turns(
        [
            Turn(tool_calls=[read("r1", "src/util.py")]),
            Turn(tool_calls=[read("r2", "src/util.py", limit=1)]),
            Turn(content="Read it twice."),
        ]
    )
    events: list[Event] = []
    waiting = asyncio.Event()

    def on_event(event: Event) -> None:
        events.append(event)
        if event.get("status") == "awaiting_approval":
            waiting.set()

    task = asyncio.create_task(agent(model, ws, approvals).ask("q", Conversation(), on_event))
    await asyncio.wait_for(waiting.wait(), 5)
    assert not task.done()
    prompt = next(e for e in events if e.get("status") == "awaiting_approval")
    assert prompt["callId"] == "r1" and "src/util.py" in prompt["message"]
    assert not any(e.get("status") == "done" and e["kind"] == "tool" for e in events)
    gate.open.set()
    result = await asyncio.wait_for(task, 10)

    assert result.stop_reason == "done"
    assert [c.status for c in result.tool_calls] == ["done", "done"]
    assert len(gate.asked) == 1  # "for this conversation" covered the second read
    r1 = [e["status"] for e in events if e["kind"] == "tool" and e["callId"] == "r1"]
    assert r1 == ["running", "awaiting_approval", "running", "done"]


async def test_tool_failures_never_raise(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    fake.add_turns(
        [
            Turn(
                tool_calls=[
                    read("a", ".env"),
                    read("b", "missing.py"),
                    read("c", "src"),
                    {"id": "d", "name": "search", "arguments": {"pattern": "("}},
                    {"id": "e", "name": "read_file", "arguments": {"path": 3}},
                ]
            ),
            Turn(content="Nothing readable."),
        ]
    )
    result = await agent(model, ws).ask("q", Conversation())
    assert result.stop_reason == "done"
    codes = [c.code for c in result.tool_calls]
    assert codes[:3] == ["sensitive_path", "not_found", "is_directory"]
    assert codes[4] == "invalid_arguments"
    assert all(c.status == "error" for c in result.tool_calls)
    assert CANARY not in json.dumps(fake.chat_requests())


async def test_calls_of_one_reply_run_concurrently(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    """Every read waits at the gate until all of them got there: only concurrency passes."""
    paths = ["src/util.py", "src/app.py", "README.md"]

    class Barrier:
        def __init__(self) -> None:
            self.waiting: list[str] = []
            self.all_there = asyncio.Event()

        async def decide(self, request: ApprovalRequest) -> Outcome:
            self.waiting.append(request.path)
            if len(self.waiting) == len(paths):
                self.all_there.set()
            await asyncio.wait_for(self.all_there.wait(), 3)
            return Outcome(Decision.ALLOW_ONCE, "auto")

    gate = Barrier()
    fake.add_turns(
        [Turn(tool_calls=[read(f"c{i}", p) for i, p in enumerate(paths)]), Turn(content="ok")]
    )
    result = await agent(model, ws, gate).ask("q", Conversation())
    assert sorted(gate.waiting) == sorted(paths)
    assert [c.status for c in result.tool_calls] == ["done"] * 3
    tools = [m for m in fake.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c0", "c1", "c2"]  # in call order


async def test_identical_calls_in_one_reply_run_once(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[read("r1", "src/util.py"), read("r2", "src/util.py")]),
            Turn(content="ok"),
        ]
    )
    await agent(model, ws).ask("q", Conversation())
    tools = [m for m in fake.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["r1", "r2"]
    assert "def greet" in tools[0]["content"]
    assert "already returned above in call r1" in tools[1]["content"]


# --- limits and cancellation ---------------------------------------------------------------


async def test_cancellation_returns_promptly_and_closes_the_stream(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    fake.add_turns([Turn(content="partial words " * 50, fault="stall")])
    streaming = asyncio.Event()

    def on_event(event: Event) -> None:
        if event["kind"] == "answerDelta":
            streaming.set()

    conv = Conversation()
    task = asyncio.create_task(agent(model, ws).ask("q", conv, on_event))
    await asyncio.wait_for(streaming.wait(), 5)
    started = time.monotonic()
    task.cancel()
    result: AskResult = await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 2
    assert result.stop_reason == "cancelled"
    assert result.answer.startswith("partial words")
    assert conv.messages[-1] == {"role": "assistant", "content": result.answer}

    # The fake's handler returns only when the client has hung up.
    name = f"fake-openai-conn-{fake.port}"
    deadline = time.monotonic() + 3
    while any(t.name == name for t in threading.enumerate()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not any(t.name == name for t in threading.enumerate())


async def test_cancellation_during_tools(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace, tmp_path: Path
) -> None:
    class Never:
        async def decide(self, request: ApprovalRequest) -> Decision:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    fake.add_turns([Turn(content="Let me look.", tool_calls=[read("r1", "src/util.py")])])
    asking = asyncio.Event()

    def on_event(event: Event) -> None:
        if event.get("status") == "awaiting_approval":
            asking.set()

    approvals = Remembering(Never(), grants=WorkspaceGrants(tmp_path / "grants.json"))
    task = asyncio.create_task(agent(model, ws, approvals).ask("q", Conversation(), on_event))
    await asyncio.wait_for(asking.wait(), 5)
    task.cancel()
    result = await asyncio.wait_for(task, 2)
    assert result.stop_reason == "cancelled"
    assert result.answer == "Let me look."


async def test_question_timeout(fake: FakeOpenAI, model: ModelClient, ws: Workspace) -> None:
    fake.add_turns([Turn(content="slow " * 100, chunk_delay=0.05)])
    started = time.monotonic()
    result = await agent(model, ws, question_timeout=0.5).ask("q", Conversation())
    assert time.monotonic() - started < 3
    assert result.stop_reason == "timeout"
    assert result.answer.startswith("slow")


async def test_max_steps_one(fake: FakeOpenAI, model: ModelClient, ws: Workspace) -> None:
    fake.add_turns([Turn(content="Looking.", tool_calls=[read("r1", "src/util.py")])])
    result = await agent(model, ws, max_steps=1).ask("q", Conversation())
    assert result.stop_reason == "max_steps"
    assert result.answer == "Looking."
    assert len(fake.chat_requests()) == 1


async def test_model_error_keeps_the_partial_answer(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    fake.add_turns(
        [
            Turn(content="I will read util.", tool_calls=[read("r1", "src/util.py")]),
            Turn(status=401),
        ]
    )
    result = await agent(model, ws).ask("q", Conversation())
    assert result.stop_reason == "error"
    assert result.error_kind == "auth" and result.error and "API key" in result.error
    assert result.answer == "I will read util."
    assert [c.status for c in result.tool_calls] == ["done"]


# --- conversations -------------------------------------------------------------------------


async def test_follow_up_reuses_history(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[read("r1", "src/util.py")]),
            Turn(content="greet is at src/util.py:1."),
            Turn(content="It returns a greeting, src/util.py:2."),
        ]
    )
    conv = Conversation()
    bot = agent(model, ws)
    first = await bot.ask("Where is greet?", conv)
    second = await bot.ask("What does it return?", conv)
    assert first.conversation_id == second.conversation_id == conv.id
    messages = fake.chat_requests()[-1]["messages"]
    assert [m["role"] for m in messages] == [
        "system", "user", "assistant", "tool", "assistant", "user",
    ]  # fmt: skip
    assert messages[1]["content"] == "Where is greet?"
    assert messages[4]["content"] == "greet is at src/util.py:1."
    assert second.references[0].seen


async def test_old_tool_outputs_are_shortened_first(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace
) -> None:
    def turn(n: int, size: int) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"question {n}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"old{n}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"n": n})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"old{n}", "content": f"OUTPUT{n} " + "x" * size},
            {"role": "assistant", "content": f"answer {n}"},
        ]

    conv = Conversation(messages=[*turn(1, 4000), *turn(2, 4000)])
    conv.answered = {"k1": "old1", "k2": "old2"}
    system_tokens = estimate_tokens([{"content": system_prompt(ws)}])
    budget = estimate_tokens(conv.messages) + system_tokens - 500  # over by ~500 tokens
    fake.add_turns([Turn(content="fine")])
    result = await agent(model, ws, max_context_tokens=budget).ask("question 3", conv)
    assert result.stop_reason == "done"

    sent = fake.chat_requests()[0]["messages"]
    tools = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert tools["old1"].startswith("OUTPUT1 ") and len(tools["old1"]) < 400
    assert "shortened" in tools["old1"]
    assert tools["old2"] == "OUTPUT2 " + "x" * 4000  # the newer one is kept whole
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "question 1",
        "question 2",
        "question 3",
    ]
    assert conv.answered == {"k2": "old2"}  # a shortened result is no longer "above"


def test_compaction_drops_whole_old_turns_last() -> None:
    conv = Conversation(
        messages=[
            {"role": "user", "content": "q1 " + "a" * 2000},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "a2"},
            {"role": "user", "content": "q3"},
        ]
    )
    used = conv.compact(budget_tokens=100)
    assert used <= 100
    assert conv.messages[0] == {"role": "user", "content": "q2"}
    assert conv.messages[-1] == {"role": "user", "content": "q3"}


def test_conversation_file_round_trip(tmp_path: Path) -> None:
    conv = Conversation(messages=[{"role": "user", "content": "q"}], workspace_key="k")
    conv.seen.add("src/util.py", 1, 2)
    conv.answered["key"] = "c1"
    path = tmp_path / "conv.json"
    conv.save(path)
    again = Conversation.load(path)
    assert again.id == conv.id and again.messages == conv.messages
    assert again.seen.covers("src/util.py", 1, 2) and again.answered == {"key": "c1"}
    path.write_text('{"version": 99}')
    with pytest.raises(ValueError):
        Conversation.load(path)


# --- the system prompt ---------------------------------------------------------------------


async def test_system_prompt_as_the_model_gets_it(
    fake: FakeOpenAI, model: ModelClient, ws: Workspace, tmp_path: Path
) -> None:
    fake.add_turns([Turn(content="ok")])
    await agent(model, ws).ask("q", Conversation())
    first = fake.chat_requests()[0]["messages"][0]
    assert first["role"] == "system"
    text = first["content"]
    assert "`proj`" in text
    assert "README.md" in text and "src/" in text
    assert ".env" not in text
    assert str(tmp_path) not in text and os.path.realpath(tmp_path) not in text
    assert "untrusted" in text and "not instructions" in text
    assert "path:line" in text and "path:start-end" in text
    for tool in ("read_file", "list_files", "search"):
        assert f"`{tool}`" in text


def test_system_prompt_names_every_folder(tmp_path: Path) -> None:
    (tmp_path / "api" / "handlers").mkdir(parents=True)
    (tmp_path / "api" / "main.go").write_text("package main\n")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "index.ts").write_text("export {}\n")
    (tmp_path / "web" / "id_rsa").write_text("secret\n")
    text = system_prompt(Workspace([tmp_path / "api", tmp_path / "web"]))
    assert "2 folders: api, web" in text
    assert "api/: handlers/, main.go" in text
    assert "web/: index.ts" in text and "id_rsa" not in text
    assert str(tmp_path) not in text


def test_system_prompt_caps_the_listing(tmp_path: Path) -> None:
    for i in range(75):
        (tmp_path / f"f{i:03d}.txt").write_text("")
    text = system_prompt(Workspace([tmp_path]))
    assert "f000.txt" in text and "f059.txt" in text and "f060.txt" not in text
    assert "and 15 more" in text
