"""The context window as a user meets it: requests that fit, a meter, compaction that
summarizes (and says so), a window too small to start, and tool results that leave room.

The window here is the `maxContextTokens` setting, which wins over what an endpoint
reports; where the window comes from is tested with each server's bytes elsewhere
(tests/unit/test_context_window.py, tests/cli/test_doctor_window.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lantern.agent import summary
from lantern.agent.conversation import Conversation
from lantern.agent.events import CompactedStatus, Event, UsageEvent
from lantern.agent.loop import Agent
from lantern.agent.reply import ModelError
from lantern.approvals.approver import Decision, Fixed
from lantern.converter import to_json
from lantern.workspace.roots import Workspace

from tests.conftest import settings_with
from tests.fakes.scripted_model import Say, ScriptedModel

FACT = "The retry loop lives in src/net/retry.py:42-57 and backs off exponentially."


@pytest.fixture(autouse=True)
def big_file(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "big.py").write_text("".join(f"line_{i} = {'x' * 90!r}\n" for i in range(3000)))


def agent(model: ScriptedModel, ws: Path, **settings: Any) -> Agent:
    return Agent(
        model=model,
        workspace=Workspace([ws]),
        approvals=Fixed(Decision.ALLOW_ONCE),
        settings=settings_with(**settings),
    )


def earlier_turns(n: int, size: int) -> list[dict[str, Any]]:
    """`n` earlier questions, each with a tool round of `size` characters; the first
    answer holds FACT."""
    messages: list[dict[str, Any]] = []
    for i in range(n):
        messages += [
            {"role": "user", "content": f"question {i}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": "x"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"OUTPUT{i} " + "x" * size},
            {"role": "assistant", "content": FACT if i == 0 else f"answer {i}"},
        ]
    return messages


async def test_earlier_turns_are_summarized_and_a_follow_up_keeps_the_fact(ws: Path) -> None:
    conv = Conversation(messages=earlier_turns(3, 6000))
    conv.answered = {"k0": "c0", "k9": "elsewhere"}
    model = ScriptedModel(Say(content=f"The user asked three questions. {FACT}"), Say("Yes."))
    events: list[Event] = []
    result = await agent(model, ws, max_context_tokens=6000).ask("and where?", conv, events.append)
    assert result.stop_reason == "done" and result.answer == "Yes."

    asked, answered = model.sent
    assert asked.tools is None  # the summary request offers no tools
    assert asked.messages[0]["content"] == summary.SYSTEM
    assert "OUTPUT0" in asked.messages[1]["content"]  # the transcript, tool output clipped
    assert "Keep: each question asked" in asked.messages[1]["content"]

    sent = json.dumps(answered.messages)
    assert "src/net/retry.py:42-57" in sent and "OUTPUT1" not in sent
    first, ack, question = conv.messages[:3]
    assert first["content"].startswith("[Lantern] Summary of the earlier turns")
    assert ack["role"] == "assistant" and question == {"role": "user", "content": "and where?"}
    assert conv.answered == {"k9": "elsewhere"}  # the summarized calls are gone

    [done] = result.compactions
    assert (done.how, done.turns) == ("summarized", 3) and done.after < done.before
    assert FACT in (done.summary or "")
    [said] = [e for e in events if isinstance(e, CompactedStatus)]
    assert said.message == f"Earlier turns summarized ({done.before:,} → {done.after:,} tokens)"
    assert to_json(result)["compactions"][0]["how"] == "summarized"

    # A follow-up in the compacted conversation still has the early fact.
    model.add(Say("At src/net/retry.py:42."))
    await agent(model, ws, max_context_tokens=6000).ask("remind me?", conv)
    assert FACT in json.dumps(model.messages(2))


async def test_the_project_instructions_are_never_summarized(ws: Path) -> None:
    conv = Conversation(messages=earlier_turns(3, 6000), instructions=["[AGENTS.md] use tabs"])
    model = ScriptedModel(Say(content="Short summary."), Say("ok"))
    await agent(model, ws, max_context_tokens=6000).ask("q", conv)
    assert "use tabs" not in json.dumps(model.messages(0))
    assert "use tabs" in json.dumps(model.messages(1))


async def test_a_failed_summary_falls_back_to_shortening_and_says_why(ws: Path) -> None:
    conv = Conversation(messages=earlier_turns(3, 6000))
    model = ScriptedModel(ModelError("server", "the summary request failed"), Say("ok"))
    events: list[Event] = []
    result = await agent(model, ws, max_context_tokens=6000).ask("q", conv, events.append)
    assert result.stop_reason == "done"
    [done] = result.compactions
    assert done.how in ("shortened", "dropped") and done.why is not None
    assert "summarizing failed" in done.why
    [said] = [e for e in events if isinstance(e, CompactedStatus)]
    assert "to fit the context window" in said.message and "summarizing failed" in said.message
    sent = json.dumps(model.messages(1))
    assert "older tool output shortened" in sent or "OUTPUT0" not in sent


async def test_a_window_too_small_for_the_tools_is_said_before_asking(ws: Path) -> None:
    model = ScriptedModel()
    result = await agent(model, ws, max_context_tokens=600).ask("q", Conversation())
    assert result.stop_reason == "error" and result.error_code == "model_context_length"
    assert model.sent == []  # the model was never asked
    assert result.error is not None and "600 tokens" in result.error
    assert result.detail is not None and result.detail.fixes


async def test_the_meter_is_in_usage_events_and_the_result(ws: Path) -> None:
    model = ScriptedModel(Say("Done.", usage=(1500, 40)))
    events: list[Event] = []
    result = await agent(model, ws, max_context_tokens=20000).ask(
        "q", Conversation(), events.append
    )
    [usage] = [e for e in events if isinstance(e, UsageEvent)]
    meter = {"used": 1540, "window": 20000, "source": "the maxContextTokens setting"}
    assert usage.context is not None and to_json(usage.context) == meter
    assert to_json(result)["context"] == meter


async def test_the_servers_count_calibrates_the_estimate(ws: Path) -> None:
    """A server that counts far more than characters / 4: the conversation keeps the ratio
    (within bounds) for its next requests, also in its file."""
    conv = Conversation()
    first = ScriptedModel(Say("ok", usage=(100_000, 10)))  # far more than the estimate
    await agent(first, ws, max_context_tokens=200_000).ask("q", conv)
    assert conv.token_ratio == 3.0  # kept within bounds
    assert Conversation.from_json(json.loads(json.dumps(conv.to_json()))).token_ratio == 3.0


async def test_a_result_larger_than_its_share_is_cut_with_a_way_to_narrow(ws: Path) -> None:
    model = ScriptedModel(
        Say(tool_calls=[{"id": "r1", "name": "read_file", "arguments": {"path": "src/big.py"}}]),
        Say("Seen."),
    )
    result = await agent(model, ws, max_context_tokens=8000).ask("q", Conversation())
    assert result.stop_reason == "done"
    [tool] = [m for m in model.messages(1) if m["role"] == "tool"]
    assert "Cut to fit the model's context window" in tool["content"]
    assert "`offset` and `limit`" in tool["content"]
    assert len(tool["content"]) < 8000 * 4
