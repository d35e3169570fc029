"""The agent loop in process: events, approvals, cancellation, conversations, the prompt.

`Agent.ask` runs on a real `Workspace` in a temporary folder against a model
scripted in process (`ScriptedModel`), so each test says what the model replies
and reads what the loop sent it. A few run end to end against the fake
OpenAI-compatible server over real HTTP, where the wire is the subject: hanging
up a cancelled stream, provider fields going back verbatim, estimated usage,
tool-call markup held back from the answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.context import Meter, reply_reserve
from lantern.agent.conversation import Conversation
from lantern.agent.events import AnswerDeltaEvent, Event, ToolEvent
from lantern.agent.loop import Agent, AskResult
from lantern.agent.prompts import system_prompt
from lantern.agent.protocol.text_words import RESULTS_HEADER, render_results
from lantern.agent.protocol.text_words import Outcome as Result
from lantern.agent.provider.client import ModelClient
from lantern.agent.reply import ChatModel, ModelError
from lantern.agent.tokens import message_tokens
from lantern.approvals.approver import (
    ApprovalRequest,
    Decision,
    Fixed,
    Outcome,
    PromptObserver,
    Remembering,
    WorkspaceGrants,
)
from lantern.audit import AuditLog
from lantern.converter import to_json
from lantern.tools.registry import tool_specs
from lantern.workspace.roots import Workspace

from tests.conftest import SentEvents, settings_with
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.fakes.scripted_model import Say, ScriptedModel
from tests.hang import HANG_S

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
def model() -> ScriptedModel:
    return ScriptedModel()


def agent(model: ChatModel, proj: Path, approvals: Any = None, **limits: Any) -> Agent:
    return Agent(
        model=model,
        workspace=Workspace([proj]),
        approvals=approvals or Fixed(Decision.ALLOW_ONCE),
        settings=settings_with(**limits),
    )


def read(call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "arguments": {"path": path, **extra}}


def sse(*deltas: dict[str, Any], finish: str = "stop", usage: Any = None) -> list[str]:
    """A raw OpenAI-style event stream: one chunk per delta, a finish chunk, [DONE]."""

    def chunk(choices: list[Any], **more: Any) -> str:
        body = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        return f"data: {json.dumps(body | {'choices': choices} | more)}\n\n"

    parts = [chunk([{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
    parts.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    if usage is not None:
        parts.append(chunk([], usage=usage))
    return [*parts, "data: [DONE]\n\n"]


def tool_call_markup(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def everything_sent(model: ScriptedModel) -> str:
    return json.dumps([sent.messages for sent in model.sent])


def compressed(events: SentEvents) -> list[str]:
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


async def test_events_in_order(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")], usage=(50, 4)),
        Say(content="greet is at src/util.py:1.", usage=(80, 6)),
    )
    events = SentEvents()
    result = await agent(model, proj).ask("Where is greet?", Conversation(), events)
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
    assert "estimated" not in usage[-1] and "estimated" not in to_json(result)["usage"]
    done = next(e for e in events if e.get("status") == "done" and e["kind"] == "tool")
    assert done["name"] == "read_file" and done["bytes"] > 0 and "ms" in done
    assert [e["step"] for e in events if e.get("status") == "thinking"] == [1, 2]
    ref = result.references[0]
    assert ref.verified and ref.seen and ref.path == "src/util.py"


async def test_awaiting_approval_event_before_the_result(
    model: ScriptedModel, proj: Path, tmp_path: Path
) -> None:
    class Gate:
        def __init__(self) -> None:
            self.asked: list[ApprovalRequest] = []
            self.open = asyncio.Event()

        async def ask(self, request: ApprovalRequest) -> Decision:
            self.asked.append(request)
            await self.open.wait()
            return Decision.ALLOW_CONVERSATION

    gate = Gate()
    approvals = Remembering(gate, grants=WorkspaceGrants(tmp_path / "grants.json"))
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")]),
        Say(tool_calls=[read("r2", "src/util.py", limit=1)]),
        Say(content="Read it twice."),
    )
    events = SentEvents()
    waiting = asyncio.Event()

    def on_event(event: Event) -> None:
        events(event)
        if events[-1].get("status") == "awaiting_approval":
            waiting.set()

    task = asyncio.create_task(agent(model, proj, approvals).ask("q", Conversation(), on_event))
    await asyncio.wait_for(waiting.wait(), HANG_S)
    assert not task.done()
    prompt = next(e for e in events if e.get("status") == "awaiting_approval")
    assert prompt["callId"] == "r1" and "src/util.py" in prompt["message"]
    assert not any(e.get("status") == "done" and e["kind"] == "tool" for e in events)
    gate.open.set()
    result = await asyncio.wait_for(task, HANG_S)

    assert result.stop_reason == "done"
    assert [c.status for c in result.tool_calls] == ["done", "done"]
    assert len(gate.asked) == 1  # "for this conversation" covered the second read
    r1 = [e["status"] for e in events if e["kind"] == "tool" and e["callId"] == "r1"]
    assert r1 == ["running", "awaiting_approval", "running", "done"]


async def test_tool_failures_never_raise(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(
            tool_calls=[
                read("a", ".env"),
                read("b", "missing.py"),
                read("c", "src"),
                {"id": "d", "name": "search", "arguments": {"pattern": "("}},
                {"id": "e", "name": "read_file", "arguments": {"path": 3}},
            ]
        ),
        Say(content="Nothing readable."),
    )
    result = await agent(model, proj).ask("q", Conversation())
    assert result.stop_reason == "done"
    codes = [c.code for c in result.tool_calls]
    assert codes[:3] == ["sensitive_path", "not_found", "is_directory"]
    assert codes[4] == "invalid_arguments"
    assert all(c.status == "error" for c in result.tool_calls)
    assert len(model.sent) == 2 and CANARY not in everything_sent(model)


async def test_calls_of_one_reply_run_concurrently(model: ScriptedModel, proj: Path) -> None:
    """Every read waits at the gate until all of them got there: only concurrency passes."""
    paths = ["src/util.py", "src/app.py", "README.md"]

    class Barrier:
        def __init__(self) -> None:
            self.waiting: list[str] = []
            self.all_there = asyncio.Event()

        async def decide(
            self, request: ApprovalRequest, *, observer: PromptObserver | None = None
        ) -> Outcome:
            self.waiting.append(request.path)
            if len(self.waiting) == len(paths):
                self.all_there.set()
            await asyncio.wait_for(self.all_there.wait(), HANG_S)
            return Outcome(Decision.ALLOW_ONCE, "auto")

    gate = Barrier()
    model.add(Say(tool_calls=[read(f"c{i}", p) for i, p in enumerate(paths)]), Say(content="ok"))
    result = await agent(model, proj, gate).ask("q", Conversation())
    assert sorted(gate.waiting) == sorted(paths)
    assert [c.status for c in result.tool_calls] == ["done"] * 3
    tools = [m for m in model.messages(1) if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c0", "c1", "c2"]  # in call order


async def test_identical_calls_in_one_reply_run_once(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py"), read("r2", "src/util.py")]),
        Say(content="ok"),
    )
    await agent(model, proj).ask("q", Conversation())
    tools = [m for m in model.messages(1) if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["r1", "r2"]
    assert "def greet" in tools[0]["content"]
    assert "already returned above in call r1" in tools[1]["content"]


# --- limits and cancellation ---------------------------------------------------------------


def established(port: int) -> int:
    """TCP connections on loopback to or from `port` that are still open (Linux's table)."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        ports = {int(local.rpartition(":")[2], 16), int(remote.rpartition(":")[2], 16)}
        count += state == "01" and port in ports  # 01: ESTABLISHED
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/tcp")
async def test_cancellation_ends_a_stalled_question_and_closes_the_stream(
    fake: FakeOpenAI, http_model: ModelClient, proj: Path
) -> None:
    """A cancelled question hangs up on the endpoint, so it stops generating (and billing)."""
    fake.add_turns([Turn(content="partial words " * 50, fault="stall")])
    streaming = asyncio.Event()
    streamed: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, AnswerDeltaEvent):
            streamed.append(event.text)
            if "".join(streamed).startswith("partial words"):
                streaming.set()

    conv = Conversation()
    task = asyncio.create_task(agent(http_model, proj).ask("q", conv, on_event))
    await asyncio.wait_for(streaming.wait(), HANG_S)
    assert established(fake.port) > 0  # the stalled stream is open
    task.cancel()
    # The stream stalls forever: the task ends at all only because the cancel reached it.
    result: AskResult = await asyncio.wait_for(task, HANG_S)
    assert result.stop_reason == "cancelled"
    assert result.answer.startswith("partial words")
    assert conv.messages[-1] == {"role": "assistant", "content": result.answer}

    # The fake keeps a stalled stream open until the client hangs up, then closes its end.
    async with asyncio.timeout(HANG_S):
        while established(fake.port):
            await asyncio.sleep(0.02)


async def test_cancellation_during_tools(model: ScriptedModel, proj: Path, tmp_path: Path) -> None:
    class Never:
        async def ask(self, request: ApprovalRequest) -> Decision:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    model.add(Say(content="Let me look.", tool_calls=[read("r1", "src/util.py")]))
    asking = asyncio.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ToolEvent) and event.status == "awaiting_approval":
            asking.set()

    approvals = Remembering(Never(), grants=WorkspaceGrants(tmp_path / "grants.json"))
    task = asyncio.create_task(agent(model, proj, approvals).ask("q", Conversation(), on_event))
    await asyncio.wait_for(asking.wait(), HANG_S)
    task.cancel()
    result = await asyncio.wait_for(task, HANG_S)  # the approval never comes: only the cancel
    assert result.stop_reason == "cancelled"
    assert result.answer == "Let me look."
    assert len(model.sent) == 1


async def test_question_timeout(model: ScriptedModel, proj: Path) -> None:
    # At least 5 s of streaming (load only makes the sleeps longer); the first chunk comes
    # at once, so the 2 s limit falls in the middle.
    model.add(Say(content="slow " * 100, chunks=100, chunk_delay=0.05))
    result = await agent(model, proj, question_timeout_seconds=2.0).ask("q", Conversation())
    assert result.stop_reason == "timeout"
    assert result.answer.startswith("slow")
    assert len(result.answer) < len(("slow " * 100).strip())  # cut by the timeout, not ended


async def test_max_steps_one(model: ScriptedModel, proj: Path) -> None:
    model.add(Say(content="Looking.", tool_calls=[read("r1", "src/util.py")]))
    result = await agent(model, proj, max_steps=1).ask("q", Conversation())
    assert result.stop_reason == "max_steps"
    assert result.answer == "Looking."
    assert len(model.sent) == 1


async def test_model_error_keeps_the_partial_answer(model: ScriptedModel, proj: Path) -> None:
    refused = "the endpoint refused the API key (401): check LANTERN_API_KEY"
    model.add(
        Say(content="I will read util.", tool_calls=[read("r1", "src/util.py")]),
        ModelError("auth", refused),
    )
    events = SentEvents()
    result = await agent(model, proj).ask("q", Conversation(), events)
    assert result.stop_reason == "error"
    assert result.error_code == "model_auth" and result.error == refused
    assert events[-1]["status"] == "error" and events[-1]["message"] == refused
    assert events[-1]["detail"]["code"] == "model_auth"
    assert result.answer == "I will read util."
    assert [c.status for c in result.tool_calls] == ["done"]


# --- conversations -------------------------------------------------------------------------


async def test_follow_up_reuses_history(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")]),
        Say(content="greet is at src/util.py:1."),
        Say(content="It returns a greeting, src/util.py:2."),
    )
    conv = Conversation()
    bot = agent(model, proj)
    first = await bot.ask("Where is greet?", conv)
    second = await bot.ask("What does it return?", conv)
    assert first.conversation_id == second.conversation_id == conv.id
    messages = model.messages(-1)
    assert [m["role"] for m in messages] == [
        "system", "user", "assistant", "tool", "assistant", "user",
    ]  # fmt: skip
    assert messages[1]["content"] == "Where is greet?"
    assert messages[4]["content"] == "greet is at src/util.py:1."
    assert second.references[0].seen


async def test_old_tool_outputs_are_shortened_when_summarizing_fails(
    model: ScriptedModel, proj: Path
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
    fixed = Meter.raw(
        [{"role": "system", "content": system_prompt(Workspace([proj]))}], tool_specs()
    )
    need = message_tokens(conv.messages) + fixed - 500  # over by ~500 tokens
    window = next(w for w in range(need, 2 * need) if w - reply_reserve(w, None) >= need)
    # Summarizing the earlier turns fails: the old way, shortening, takes over.
    model.add(ModelError("server", "no summary today"), Say(content="fine"))
    result = await agent(model, proj, max_context_tokens=window).ask("question 3", conv)
    assert result.stop_reason == "done"

    sent = model.messages(1)
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
    done = conv.compact(budget_tokens=100)
    assert done.after <= 100 and done.turns == 1
    assert conv.messages[0] == {"role": "user", "content": "q2"}
    assert conv.messages[-1] == {"role": "user", "content": "q3"}


def test_compaction_treats_text_protocol_results_as_tool_output() -> None:
    results = render_results([Result("Abc123xyz", "read_file", "{}", "OUT " + "x" * 4000)])
    conv = Conversation(
        messages=[
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": '<tool_call>{"name": "read_file"}</tool_call>'},
            {"role": "user", "content": results},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "q2"},
        ],
        answered={"k1": "Abc123xyz", "k2": "Zzz999zzz"},
    )
    conv.compact(budget_tokens=message_tokens(conv.messages) - 500)
    assert "shortened" in conv.messages[2]["content"] and len(conv.messages) == 5
    assert conv.answered == {"k2": "Zzz999zzz"}
    # A results message is not a question: turns are dropped whole, from a real question.
    conv.compact(budget_tokens=message_tokens(conv.messages[2:]))
    assert conv.messages == [{"role": "user", "content": "q2"}]


def test_conversation_file_round_trip(tmp_path: Path) -> None:
    conv = Conversation(messages=[{"role": "user", "content": "q"}], workspace_key="k")
    conv.seen.add("src/util.py", 1, 2)
    conv.answered["key"] = "c1"
    path = tmp_path / "conv.json"
    conv.save(path)
    again = Conversation.load(path)
    assert again.id == conv.id and again.messages == conv.messages
    assert again.seen.covers("src/util.py", 1, 2) and again.answered == {"key": "c1"}
    assert again.tool_protocol == "native"
    path.write_text('{"version": 99}')
    with pytest.raises(ValueError):
        Conversation.load(path)


# --- the system prompt ---------------------------------------------------------------------


async def test_system_prompt_as_the_model_gets_it(
    model: ScriptedModel, proj: Path, tmp_path: Path
) -> None:
    model.add(Say(content="ok"))
    await agent(model, proj).ask("q", Conversation())
    first = model.messages(0)[0]
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


# --- provider fields and usage ------------------------------------------------------------


async def test_provider_fields_go_back_verbatim_also_after_a_file_round_trip(
    fake: FakeOpenAI, http_model: ModelClient, proj: Path, tmp_path: Path
) -> None:
    """DeepSeek's reasoning_content and Gemini's thought signature must come back unchanged."""
    signature = {"google": {"thought_signature": "c2lnbmF0dXJl/+=="}}
    fake.add_turns(
        [
            Turn(
                raw=sse(
                    {"role": "assistant", "content": None, "reasoning_content": "Util "},
                    {"reasoning_content": "has greet."},
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {
                                    "name": "read_file",
                                    "arguments": '{"path": "src/util.py"}',
                                },
                                "extra_content": signature,
                            }
                        ]
                    },
                    finish="tool_calls",
                    usage={"prompt_tokens": 5, "completion_tokens": 5},
                )
            ),
            Turn(content="greet is at src/util.py:1."),
            Turn(content="It returns a greeting, src/util.py:2."),
        ]
    )
    events = SentEvents()
    conv = Conversation()
    first = await agent(http_model, proj).ask("Where is greet?", conv, events)
    assert first.answer == "greet is at src/util.py:1."
    assert [e["text"] for e in events if e["kind"] == "reasoning"] == ["Util ", "has greet."]
    assert "greet." not in "".join(e["text"] for e in events if e["kind"] == "answerDelta")
    sent_back = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Util has greet.",
        "tool_calls": [
            {
                "extra_content": signature,
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "src/util.py"}'},
            }
        ],
    }
    assert fake.chat_requests()[1]["messages"][2] == sent_back

    path = tmp_path / "conv.json"
    conv.save(path)
    await agent(http_model, proj).ask("What does it return?", Conversation.load(path))
    assert fake.chat_requests()[2]["messages"][2] == sent_back


async def test_usage_marked_estimated_only_when_estimated(
    fake: FakeOpenAI, http_model: ModelClient, proj: Path
) -> None:
    fake.add_turns([Turn(raw=sse({"role": "assistant", "content": "Hello there."}))])
    events = SentEvents()
    result = await agent(http_model, proj).ask("q", Conversation(), events)
    usage = to_json(result)["usage"]
    assert usage["estimated"] is True and usage["promptTokens"] > 0
    assert [e.get("estimated") for e in events if e["kind"] == "usage"] == [True]


# --- message order ---------------------------------------------------------------------------


def assert_order_every_provider_accepts(messages: list[dict[str, Any]]) -> None:
    roles = [m["role"] for m in messages]
    assert roles.count("system") == 1 and roles[0] == "system"
    for before, after in itertools.pairwise(roles):
        assert not (before == "tool" and after in ("system", "user")), roles


async def test_last_step_note_goes_inside_the_last_tool_message(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(Say(tool_calls=[read("r1", "src/util.py")]), Say(content="At src/util.py:1."))
    conv = Conversation()
    result = await agent(model, proj, max_steps=2).ask("q", conv)
    assert result.stop_reason == "max_steps" and result.answer == "At src/util.py:1."
    assert model.sent[0].tools and model.sent[0].tool_choice is None
    last = model.sent[1]
    # Still declared (the history holds tool calls; gateways to Anthropic refuse tool
    # results without tool definitions), but the model may not call one.
    assert last.tools == model.sent[0].tools and last.tool_choice == "none"
    assert_order_every_provider_accepts(last.messages)
    note = last.messages[-1]
    assert note["role"] == "tool" and note["tool_call_id"] == "r1"
    data, _, lantern = note["content"].partition("not part of the tool output")
    assert "def greet" in data and "last step" in lantern and "def greet" not in lantern
    assert all("last step" not in str(m.get("content")) for m in conv.messages)


async def test_calls_a_server_returns_anyway_at_the_last_step_are_not_run(
    model: ScriptedModel, proj: Path
) -> None:
    # Ollama ignores tool_choice: at the last step it may still call a tool.
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")]),
        Say(content="At src/util.py:1.", tool_calls=[read("r2", "src/app.py")]),
    )
    result = await agent(model, proj, max_steps=2).ask("q", Conversation())
    assert result.stop_reason == "max_steps" and result.answer == "At src/util.py:1."
    assert [c.id for c in result.tool_calls] == ["r1"]


async def test_budget_note_goes_inside_the_last_tool_message(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py"), read("r2", "src/app.py")]),
        Say(content="Partly: src/util.py:1."),
    )
    result = await agent(model, proj, max_tool_output_bytes=60).ask("q", Conversation())
    assert result.stop_reason == "budget"
    assert model.sent[1].tools and model.sent[1].tool_choice == "none"
    messages = model.messages(1)
    assert_order_every_provider_accepts(messages)
    assert [m.get("tool_call_id") for m in messages[-2:]] == ["r1", "r2"]
    assert "tool output budget for this question is used up" in messages[-1]["content"]


async def test_empty_reply_nudge_follows_the_same_rule(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(content=""),
        Say(tool_calls=[read("r1", "src/util.py")]),
        Say(content=""),
        Say(content="At src/util.py:1."),
    )
    result = await agent(model, proj).ask("Where is greet?", Conversation())
    assert result.stop_reason == "done"
    requests = [sent.messages for sent in model.sent]
    after_question = requests[1]
    assert [m["role"] for m in after_question] == ["system", "user"]
    assert after_question[1]["content"].startswith("Where is greet?\n\n[Lantern] ")
    assert "reply was empty" in after_question[1]["content"]
    after_tools = requests[3]
    assert_order_every_provider_accepts(after_tools)
    assert after_tools[-1]["role"] == "tool" and "reply was empty" in after_tools[-1]["content"]
    assert "reply was empty" not in requests[2][-1]["content"]  # one request only


async def test_a_turn_that_stopped_early_is_closed_for_the_follow_up(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(
        Say(tool_calls=[read("r1", "src/util.py")]),
        ModelError("auth", "the endpoint refused the API key (401)"),
        Say(content="Try again later."),
    )
    conv = Conversation()
    bot = agent(model, proj)
    first = await bot.ask("Where is greet?", conv)
    assert first.stop_reason == "error" and first.answer == ""
    await bot.ask("And now?", conv)
    messages = model.messages(2)
    assert_order_every_provider_accepts(messages)
    assert [m["role"] for m in messages[-3:]] == ["tool", "assistant", "user"]
    assert "no answer" in messages[-2]["content"]


# --- the text tool protocol ------------------------------------------------------------------


class Recorder:
    """Allows every read once and remembers what it was asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        self.paths.append(request.path)
        return Outcome(Decision.ALLOW_ONCE, "user")


async def test_calls_written_as_text_switch_to_the_text_protocol(
    fake: FakeOpenAI, http_model: ModelClient, proj: Path, tmp_path: Path
) -> None:
    """Qwen/Hermes markup the server did not parse: run it like a native call, never show it."""
    fake.add_turns(
        [
            Turn(
                content="Let me look.\n"
                + tool_call_markup("read_file", path="src/util.py")
                + tool_call_markup("read_file", path=".env")
            ),
            Turn(content="greet is at src/util.py:1."),
        ]
    )
    gate = Recorder()
    audit = AuditLog(tmp_path / "audit.jsonl")
    bot = Agent(model=http_model, workspace=Workspace([proj]), approvals=gate, audit=audit)
    events = SentEvents()
    conv = Conversation()
    result = await bot.ask("Where is greet?", conv, events)

    assert result.stop_reason == "done"
    assert result.answer == "greet is at src/util.py:1."
    assert "<tool_call>" not in json.dumps([e for e in events if e["kind"] == "answerDelta"])
    switched = [e for e in events if e.get("status") == "protocol"]
    assert len(switched) == 1 and "fake-model" in switched[0]["message"]
    assert "text tool protocol" in switched[0]["message"]
    assert gate.paths == ["src/util.py"]  # same approvals; .env refused by the same jail
    assert [(c.name, c.status, c.code) for c in result.tool_calls] == [
        ("read_file", "done", None),
        ("read_file", "error", "sensitive_path"),
    ]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", c.id) for c in result.tool_calls)
    logged = [json.loads(line) for line in audit.path.read_text().splitlines()]
    assert sum(1 for r in logged if r.get("tool") == "read_file") == 2
    ref = result.references[0]
    assert ref.path == "src/util.py" and ref.verified and ref.seen

    second = fake.chat_requests()[1]
    assert "tools" not in second
    assert "<tool_call>" in second["messages"][0]["content"]  # tools described in the prompt
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    results = second["messages"][3]["content"]
    assert results.startswith(RESULTS_HEADER) and "untrusted" in results
    assert "def greet" in results and f"id {result.tool_calls[0].id}: read_file" in results
    assert CANARY not in json.dumps(fake.chat_requests())
    assert conv.tool_protocol == "text"


async def test_endpoint_without_tools_falls_back_and_the_file_remembers(
    model: ScriptedModel, proj: Path, tmp_path: Path
) -> None:
    no_tools = "registry.ollama.ai/library/gemma does not support tools"
    model.add(
        ModelError("tools_unsupported", no_tools),
        Say(content=tool_call_markup("search", pattern="def greet")),
        Say(content="greet is at src/util.py:1."),
        Say(content="It returns a greeting."),
    )
    events = SentEvents()
    conv = Conversation()
    result = await agent(model, proj).ask("Where is greet?", conv, events)
    assert result.stop_reason == "done" and result.answer == "greet is at src/util.py:1."
    assert [c.status for c in result.tool_calls] == ["done"]
    requests = model.sent
    assert requests[0].tools and requests[1].tools is None and requests[2].tools is None
    assert "<tool_call>" in requests[1].messages[0]["content"]  # tools described in the prompt
    assert [e["step"] for e in events if e.get("status") == "thinking"] == [1, 1, 2]
    assert sum(e.get("status") == "protocol" for e in events) == 1

    path = tmp_path / "conv.json"
    conv.save(path)
    events.clear()
    again = await agent(model, proj).ask("What does it return?", Conversation.load(path), events)
    assert again.stop_reason == "done"
    assert model.sent[3].tools is None
    assert "<tool_call>" in model.messages(3)[0]["content"]
    assert not any(e.get("status") == "protocol" for e in events)  # said once


async def test_native_mode_never_switches(model: ScriptedModel, proj: Path) -> None:
    model.add(
        ModelError("tools_unsupported", "registry.ollama.ai/library/gemma does not support tools"),
        Say(content="Looking.\n" + tool_call_markup("read_file", path="src/util.py")),
    )
    bot = agent(model, proj, tool_protocol="native")
    result = await bot.ask("q", Conversation())
    assert result.stop_reason == "error" and result.error_code == "model_tools_unsupported"
    assert result.error and "does not support tools" in result.error
    assert len(model.sent) == 1

    marked = await bot.ask("q", Conversation())
    assert marked.stop_reason == "error" and marked.error and "toolProtocol" in marked.error
    assert marked.answer == "Looking." and marked.tool_calls == []
    assert model.sent[1].tools  # still offered natively


async def test_text_mode_from_the_start(model: ScriptedModel, proj: Path) -> None:
    model.add(
        Say(content="[TOOL_CALLS]read_file[ARGS]" + json.dumps({"path": "src/util.py"})),
        Say(content="At src/util.py:1."),
    )
    events = SentEvents()
    result = await agent(model, proj, tool_protocol="text").ask("q", Conversation(), events)
    assert result.stop_reason == "done" and [c.status for c in result.tool_calls] == ["done"]
    first = model.sent[0]
    assert first.tools is None and "## Calling tools" in first.messages[0]["content"]
    assert not any(e.get("status") == "protocol" for e in events)


async def test_unreadable_calls_get_one_correction_then_a_clear_error(
    model: ScriptedModel, proj: Path
) -> None:
    broken = 'Reading now. <tool_call>{"name": "read_file", "arguments": {"path": </tool_call>'
    model.add(Say(content=broken), Say(content=broken))
    result = await agent(model, proj, tool_protocol="text").ask("q", Conversation())
    assert result.stop_reason == "error" and result.error and "could not be read" in result.error
    assert "<tool_call>" not in result.answer and result.answer.startswith("Reading now.")
    correction = model.messages(1)
    assert [m["role"] for m in correction[-2:]] == ["assistant", "user"]
    assert "could not be read" in correction[-1]["content"]


async def test_calls_at_the_last_step_are_not_run_nor_shown(
    model: ScriptedModel, proj: Path
) -> None:
    model.add(
        Say(content=tool_call_markup("read_file", path="src/util.py")),
        Say(content="From what I read: src/util.py:1.\n" + tool_call_markup("search", pattern="x")),
    )
    result = await agent(model, proj, max_steps=2, tool_protocol="text").ask("q", Conversation())
    assert result.stop_reason == "max_steps"
    assert result.answer == "From what I read: src/util.py:1."
    assert [c.name for c in result.tool_calls] == ["read_file"]
    messages = model.messages(1)
    assert messages[-1]["role"] == "user" and "last step" in messages[-1]["content"]
    assert messages[-1]["content"].startswith(RESULTS_HEADER)
