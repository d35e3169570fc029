"""`lantern/ask` end to end: the real server in a subprocess, pytest-lsp as the editor,
the fake OpenAI server as the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import (
    ALLOW,
    ALLOW_CONVERSATION,
    ALLOW_WORKSPACE,
    ASK,
    DENY,
    REQUEST_CANCELLED,
    RESET,
    WAIT,
    Lantern,
    StartServer,
    all_text,
    read_call,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


def tool_statuses(ls: Lantern, request_id: Any, call_id: str) -> list[str]:
    return [e["status"] for e in ls.events_of(request_id, "tool") if e.get("callId") == call_id]


async def wait_for_requests(fake: FakeOpenAI, count: int) -> None:
    """Until the fake model has received `count` chat requests."""
    async with asyncio.timeout(WAIT):
        while len(fake.chat_requests()) < count:
            await asyncio.sleep(0.02)


async def expect_cancelled(pending: asyncio.Future[Any]) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(pending, WAIT)
    assert caught.value.code == REQUEST_CANCELLED


# --------------------------------------------------------------------- a full question


async def test_a_full_question(ls: Lantern, fake: FakeOpenAI, workspace: Path):
    fake.add_turns(
        [
            {"content": "Let me look.", "tool_calls": [read_call("call_1", "src/app.py")]},
            {"content": "The app starts at src/app.py:2-3 as shown."},
        ]
    )
    seen_while_open: list[dict[str, Any]] = []

    async def answer(message: str) -> str:
        # While the prompt is open, the last tool event says so.
        seen_while_open.append(ls.events_of(kind="tool")[-1])
        return ALLOW

    ls.answer = answer
    result = await ls.request(ASK, {"question": "Where does the app start?"}, msg_id="q1")

    # The answer and its references, with spans into the answer text.
    answer_text = "The app starts at src/app.py:2-3 as shown."
    assert result["answer"] == answer_text
    assert result["stopReason"] == "done"
    conversation = result["conversationId"]
    assert isinstance(conversation, str) and conversation
    [ref] = result["references"]
    assert ref["path"] == "src/app.py"
    assert (ref["startLine"], ref["endLine"]) == (2, 3)
    assert ref["verified"] is True and ref["seen"] is True
    assert ref["uri"] == (workspace / "src" / "app.py").as_uri()
    assert ref["range"]["start"]["line"] == 1 and ref["range"]["end"]["line"] == 2
    start, end = ref["span"]
    assert answer_text[start:end] == "src/app.py:2-3"
    [call] = result["toolCalls"]
    assert call["id"] == "call_1" and call["name"] == "read_file"
    assert call["arguments"] == {"path": "src/app.py"}
    assert call["status"] == "done" and call["bytes"] > 0 and "code" not in call
    assert result["usage"]["promptTokens"] > 0 and result["usage"]["completionTokens"] > 0
    # The meter: how full the window is, and where the window came from.
    meter = result["context"]
    assert set(meter) == {"used", "window", "source"} and 0 < meter["used"] < meter["window"]
    assert meter["source"].startswith("default: ")  # the fake reports no window
    usage_events = ls.events_of("q1", "usage")
    assert usage_events and usage_events[-1]["context"] == meter

    # The prompt, and the tool event while it was open.
    assert ls.prompts == ["Lantern wants to read src/app.py (lines 1–400, 171 B)"]
    [open_event] = seen_while_open
    assert open_event["callId"] == "call_1" and open_event["status"] == "awaiting_approval"
    assert open_event["message"] == ls.prompts[0]
    assert open_event["summary"] == "src/app.py · lines 1–400"

    # Events: all for this request and conversation, tool and answerDelta in order.
    events = ls.events_of("q1")
    assert events == ls.events and events
    assert {e["conversationId"] for e in events} == {conversation}
    flow = [
        (e["kind"], e.get("status") or e.get("text"))
        for e in events
        if e["kind"] in ("tool", "answerDelta")
    ]
    first_text = "".join(
        t for k, t in flow[: flow.index(("tool", "running"))] if k == "answerDelta"
    )
    assert first_text == "Let me look."
    tools = [t for k, t in flow if k == "tool"]
    assert tools == ["running", "awaiting_approval", "running", "done"]
    after_tool = flow[flow.index(("tool", "done")) + 1 :]
    assert after_tool and all(k == "answerDelta" for k, _ in after_tool)
    assert "".join(t for _, t in after_tool) == answer_text
    assert events[-1]["kind"] == "status" and events[-1]["status"] == "done"
    done = next(e for e in events if e["kind"] == "tool" and e["status"] == "done")
    assert done["bytes"] == call["bytes"]

    # Work-done progress: begin, reports (tool activity), end.
    [(token, reports)] = ls.client.progress_reports.items()
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].cancellable is True
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    middle = reports[1:-1]
    assert middle and all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    assert [r.message for r in middle] == [
        f"read_file src/app.py · lines 1–400: {s.replace('_', ' ')}" for s in tools
    ]
    assert str(token)

    # The model saw the file through the tool message.
    second = fake.chat_requests()[1]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages and "line 2 of app" in tool_messages[0]["content"]


# --------------------------------------------------------------------- approvals


def _two_reads() -> list[dict[str, Any]]:
    """Turns for one question that reads src/app.py, then answers."""
    return [
        {"tool_calls": [read_call("r1", "src/app.py", offset=1, limit=5)]},
        {"content": "Done."},
    ]


async def _read_again(ls: Lantern, fake: FakeOpenAI, conversation: str | None) -> dict[str, Any]:
    """Another read of the same file (other lines, so not an identical call)."""
    fake.add_turns(
        [{"tool_calls": [read_call("r2", "src/app.py", offset=6, limit=5)]}, {"content": "Ok."}]
    )
    params = {"conversationId": conversation} if conversation else {}
    return await ls.ask("And the rest?", **params)


@pytest.mark.parametrize(
    "choice",
    [ALLOW, ALLOW_CONVERSATION, DENY, None],
    ids=["allow", "allow-conversation", "deny", "dismissed"],
)
async def test_each_answer_to_the_prompt(
    ls: Lantern, fake: FakeOpenAI, workspace: Path, choice: str | None
) -> None:
    fake.add_turns(_two_reads())
    ls.answer = choice
    result = await ls.ask("What is in app.py?")
    assert len(ls.prompts) == 1
    assert ls.prompts[0].startswith("Lantern wants to read src/app.py (lines 1–5")
    [call] = result["toolCalls"]
    sent_back = next(m for m in fake.chat_requests()[1]["messages"] if m["role"] == "tool")
    conversation = result["conversationId"]

    if choice is None or choice == DENY:  # a dismissed prompt is a deny
        assert call["status"] == "denied" and call["code"] == "denied_by_user"
        assert "line 1 of app" not in sent_back["content"]
        assert tool_statuses(ls, None, "r1")[-1] == "denied"
        # Asked again next time: a deny is not remembered as an allow.
        ls.answer = ALLOW
        again = await _read_again(ls, fake, conversation)
        assert len(ls.prompts) == 2 and again["toolCalls"][0]["status"] == "done"
        return

    assert call["status"] == "done"
    assert "line 1 of app" in sent_back["content"]
    again = await _read_again(ls, fake, conversation)
    assert again["toolCalls"][0]["status"] == "done"
    if choice == ALLOW:
        assert len(ls.prompts) == 2  # "Allow" covers that one call only
    else:
        assert len(ls.prompts) == 1  # the same file in the same conversation
        elsewhere = await _read_again(ls, fake, None)  # a new conversation asks again
        assert elsewhere["toolCalls"][0]["status"] == "done"
        assert len(ls.prompts) == 2


async def test_always_allow_persists_across_a_restart(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    fake.add_turns(_two_reads())
    first = await start_server([workspace], answer=ALLOW_WORKSPACE)
    result = await first.ask("What is in app.py?")
    assert result["toolCalls"][0]["status"] == "done" and len(first.prompts) == 1
    again = await _read_again(first, fake, None)  # a new conversation: no prompt
    assert again["toolCalls"][0]["status"] == "done" and len(first.prompts) == 1
    await first.close()
    stored = home / "xdg_data_home" / "lantern" / "approvals.json"
    assert stored.is_file() and '"always": true' in stored.read_text("utf-8")

    second = await start_server([workspace], answer=DENY)  # same XDG_DATA_HOME
    after = await _read_again(second, fake, None)
    assert after["toolCalls"][0]["status"] == "done"
    assert second.prompts == []
    # The jail and the denylist still hold.
    fake.add_turns([{"tool_calls": [read_call("r3", ".env")]}, {"content": "No."}])
    refused = await second.ask("What is in .env?")
    assert refused["toolCalls"][0]["code"] == "sensitive_path"
    assert "zq81-Xy7" not in json.dumps(fake.chat_requests()[-1])


async def test_an_unanswered_prompt_times_out_as_a_deny(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns(_two_reads())
    release = asyncio.Event()

    async def late(message: str) -> str:
        await release.wait()
        return ALLOW  # answered only after the server gave up

    ls = await start_server([workspace], {"approval": {"timeoutSeconds": 1}}, answer=late)
    # The prompt is never answered in time: only the server's 1 s timeout ends the question
    # (the 120 s default would outlast `ls.ask`'s hang guard, WAIT).
    result = await ls.ask("What is in app.py?")
    [call] = result["toolCalls"]
    assert call["status"] == "denied" and call["code"] == "approval_timeout"
    assert result["stopReason"] == "done"
    assert "line 1 of app" not in json.dumps(fake.chat_requests()[1])
    # The late answer arrives after the timeout; the server must shrug it off.
    release.set()
    await ls.answers_sent()  # the next question reaches the server after the late answer
    ls.answer = ALLOW
    fake.add_turns([{"content": "Still here."}])
    assert (await ls.ask("Still there?"))["answer"] == "Still here."


# --------------------------------------------------------------------- cancellation


async def test_cancel_during_a_model_call(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add_turns([{"content": "too late", "delay": 30}, {"content": "Next answer."}])
    pending = asyncio.ensure_future(
        ls.client.protocol.send_request_async(ASK, {"question": "slow?"}, msg_id="slow")
    )
    await wait_for_requests(fake, 1)
    ls.cancel("slow")
    await expect_cancelled(pending)
    cancelled = await ls.wait_event(
        lambda e: e.get("requestId") == "slow" and e.get("status") == "cancelled"
    )
    assert cancelled["kind"] == "status"
    [(_, reports)] = ls.client.progress_reports.items()
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # The server keeps serving.
    result = await ls.ask("next?")
    assert result["answer"] == "Next answer." and result["stopReason"] == "done"


async def test_cancel_while_streaming_and_through_progress(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    """A reply cut mid-stream by `window/workDoneProgress/cancel` also ends as cancelled."""
    words = " ".join(f"w{n}" for n in range(60))
    fake.add_turns([{"content": words, "chunk_delay": 0.5}, {"content": "Fine."}])
    pending = asyncio.ensure_future(
        ls.client.protocol.send_request_async(
            ASK, {"question": "stream?", "workDoneToken": "tok-1"}, msg_id="s1"
        )
    )
    ls.client.progress_reports["tok-1"] = []
    await ls.wait_event(lambda e: e.get("kind") == "answerDelta")
    ls.client.protocol.notify(
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token="tok-1")
    )
    await expect_cancelled(pending)
    assert isinstance(ls.client.progress_reports["tok-1"][-1], types.WorkDoneProgressEnd)
    assert (await ls.ask("again?"))["answer"] == "Fine."


async def test_cancel_during_an_open_prompt(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add_turns(_two_reads()[:1])  # the question ends while the read waits
    release = asyncio.Event()

    async def hold(message: str) -> str:
        await release.wait()
        return ALLOW

    ls.answer = hold
    pending = asyncio.ensure_future(
        ls.client.protocol.send_request_async(ASK, {"question": "read?"}, msg_id="p1")
    )
    await ls.wait_prompt()
    await ls.wait_event(lambda e: e.get("status") == "awaiting_approval")
    ls.cancel("p1")
    await expect_cancelled(pending)
    # The prompt is answered only now, after the question is gone.
    release.set()
    await ls.answers_sent()  # the next question reaches the server after the answer
    ls.answer = ALLOW
    fake.add_turns(
        [{"tool_calls": [read_call("r9", "README.md")]}, {"content": "README.md:1 says proj."}]
    )
    result = await ls.ask("And the readme?")
    assert result["stopReason"] == "done" and result["toolCalls"][0]["status"] == "done"
    assert result["references"][0]["path"] == "README.md"
    # The allowed read of the cancelled question never ran: nothing of app.py reached the
    # model, and the model was asked once for it and twice for the next question.
    requests = fake.chat_requests()
    assert len(requests) == 3 and fake.turns_left == 0
    assert not any("line 1 of app" in all_text(r) for r in requests)
    assert [m["content"] for m in requests[1]["messages"] if m["role"] == "user"][-1] == (
        "And the readme?"
    )


# --------------------------------------------------------------------- conversations


async def test_two_concurrent_questions(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    # Each reply waits, so both questions are in flight together.
    fake.add_turns(
        [{"content": "First reply.", "delay": 0.6}, {"content": "Second reply.", "delay": 0.6}]
    )
    one, two = await asyncio.gather(
        ls.request(ASK, {"question": "one?"}, msg_id="c1"),
        ls.request(ASK, {"question": "two?"}, msg_id="c2"),
    )
    assert {one["answer"], two["answer"]} == {"First reply.", "Second reply."}
    assert one["conversationId"] != two["conversationId"]
    for result, request_id in ((one, "c1"), (two, "c2")):
        events = ls.events_of(request_id)
        assert events and {e["conversationId"] for e in events} == {result["conversationId"]}
        text = "".join(e["text"] for e in events if e["kind"] == "answerDelta")
        assert text == result["answer"]
    assert len(ls.client.progress_reports) == 2


async def test_follow_up_and_reset(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add_turns(
        [{"content": "Alpha is the first."}, {"content": "Beta is next."}, {"content": "Fresh."}]
    )
    first = await ls.ask("What is alpha-question-marker?")
    conversation = first["conversationId"]
    second = await ls.ask("And after it?", conversationId=conversation)
    assert second["conversationId"] == conversation
    follow_up = all_text(fake.chat_requests()[1])
    assert "alpha-question-marker" in follow_up and "Alpha is the first." in follow_up

    assert await ls.request(RESET, {"conversationId": conversation}) == {"reset": True}
    assert await ls.request(RESET, {"conversationId": conversation}) == {"reset": False}
    third = await ls.ask("Start over?", conversationId=conversation)
    assert third["answer"] == "Fresh."
    assert "alpha-question-marker" not in all_text(fake.chat_requests()[2])
