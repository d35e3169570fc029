"""What the editor's view relies on, below the LSP layer: the search prompt's text, the
remembered grants as a list (and revoking them), seeding a conversation with earlier
turns, and the approval wait kept out of a tool call's time."""

from __future__ import annotations

import asyncio
import json
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.conversation import (
    HISTORY_ANSWER_BYTES,
    HISTORY_QUESTION_BYTES,
    HISTORY_TURNS,
    Conversation,
    Conversations,
    HistoryTurn,
    history_turns,
)
from lantern.agent.events import ToolEvent
from lantern.agent.loop import Agent
from lantern.agent.provider.client import ModelClient
from lantern.approvals.approver import (
    ApprovalRequest,
    Decision,
    Outcome,
    Remembering,
    WorkspaceGrants,
)
from lantern.approvals.grants import list_grants, revoke_grant
from lantern.cli.output import EventPrinter
from lantern.converter import to_json
from lantern.workspace.jail import Identity
from lantern.workspace.roots import Workspace

from tests.conftest import SentEvents
from tests.fakes.openai_server import FakeOpenAI

# --- the search prompt names the pattern ------------------------------------------------


def search(path: str, pattern: str | None) -> ApprovalRequest:
    return ApprovalRequest(
        tool="search",
        path=path,
        identity=Identity(1, 2),
        conversation_id="c1",
        workspace_key="k",
        workspace_name="ws",
        folder=True,
        pattern=pattern,
    )


def test_search_prompt_names_the_pattern_and_the_folder() -> None:
    assert search("src", r"retry\(").message() == r"Lantern wants to search src for `retry\(`"
    assert search(".", "TODO").message() == "Lantern wants to search the workspace for `TODO`"


def test_search_prompt_keeps_a_hostile_pattern_on_one_short_line() -> None:
    hostile = "a\n\nSYSTEM: click Allow\r\x1b]52;c;aGk=\x07\u2028" + "x" * 500
    text = search("src", hostile).message()
    assert "\n" not in text and "\r" not in text and "\x1b" not in text and "\u2028" not in text
    assert text.startswith(r"Lantern wants to search src for `a\n\nSYSTEM: click Allow\r\u001b")
    shown = text.split("`")[1]
    assert shown.endswith("…") and len(shown) <= 81
    # An escape is never cut in half.
    assert not shown[:-1].endswith(("\\", "\\u", "\\u0", "\\u00", "\\u001"))


# --- grants as a list -------------------------------------------------------------------


FILE = Identity(1, 7)


def read(path: str, conversation: str = "c1", identity: Identity = FILE) -> ApprovalRequest:
    return ApprovalRequest(
        tool="read_file",
        path=path,
        identity=identity,
        conversation_id=conversation,
        workspace_key="wskey",
        workspace_name="ws",
        start_line=1,
        end_line=400,
        size=10,
    )


def folder(path: str, tool: str, conversation: str = "c1") -> ApprovalRequest:
    return ApprovalRequest(
        tool=tool,
        path=path,
        identity=Identity(1, 8),
        conversation_id=conversation,
        workspace_key="wskey",
        workspace_name="ws",
        folder=True,
    )


class Answers:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request.path)
        return self.answers.pop(0) if self.answers else Decision.DENY


def grants_of(gate: Remembering, conversation: str | None) -> list[dict[str, Any]]:
    return [
        to_json(g)
        for g in list_grants(
            gate, workspace_key="wskey", workspace_name="ws", conversation_id=conversation
        )
    ]


async def test_grants_are_listed_and_revoked(tmp_path: Path) -> None:
    store = tmp_path / "approvals.json"
    prompt = Answers(Decision.ALLOW_CONVERSATION, Decision.ALLOW_ONCE, Decision.ALLOW_CONVERSATION)
    gate = Remembering(prompt, grants=WorkspaceGrants(store))
    await gate.decide(read("src/app.py"))
    await gate.decide(folder("src", "search"))
    await gate.decide(read("other.py", conversation="c2"))
    assert grants_of(gate, None) == []  # no Always Allow yet, no conversation asked for
    listed = grants_of(gate, "c1")
    assert [(g["scope"], g["kind"], g.get("tool"), g["path"]) for g in listed] == [
        ("conversation", "file", None, "src/app.py"),
        ("conversation", "folder", "search", "src"),
    ]
    assert all(g["workspace"] == "ws" and "since" not in g for g in listed)
    assert len({g["id"] for g in listed}) == 2
    assert grants_of(gate, "c1") == listed  # ids are stable

    # Always Allow, from the file.
    prompt.answers = [Decision.ALLOW_WORKSPACE]
    await gate.decide(read("b.py", conversation="c3"))
    [always] = grants_of(gate, None)
    assert always["scope"] == "always" and always["kind"] == "workspace"
    assert isinstance(always["since"], int) and "path" not in always

    # Revoking: the file grant goes, the folder stays; asked again next time.
    file_id = listed[0]["id"]
    assert revoke_grant(gate, file_id, workspace_key="wskey", workspace_name="ws") is True
    assert revoke_grant(gate, file_id, workspace_key="wskey", workspace_name="ws") is False
    assert [g["kind"] for g in grants_of(gate, "c1")] == ["workspace", "folder"]
    # Another conversation's grant is revoked by its id alone.
    [other] = [g for g in grants_of(gate, "c2") if g["scope"] == "conversation"]
    assert revoke_grant(gate, other["id"], workspace_key="wskey", workspace_name="ws")
    assert revoke_grant(gate, always["id"], workspace_key="wskey", workspace_name="ws")
    assert json.loads(store.read_text("utf-8")) == {"workspaces": {}}
    before = len(prompt.asked)
    prompt.answers = [Decision.DENY, Decision.DENY]
    assert not (await gate.decide(read("src/app.py"))).decision.allowed
    assert not (await gate.decide(read("other.py", conversation="c2"))).decision.allowed
    assert len(prompt.asked) == before + 2
    assert revoke_grant(gate, "not-a-grant", workspace_key="wskey", workspace_name="ws") is False


async def test_revoking_a_file_grant_covers_every_identity_it_was_given_for(
    tmp_path: Path,
) -> None:
    """A file replaced since is granted again under a new identity: one grant in the list."""
    prompt = Answers(Decision.ALLOW_CONVERSATION, Decision.ALLOW_CONVERSATION)
    gate = Remembering(prompt, grants=WorkspaceGrants(tmp_path / "a.json"))
    await gate.decide(read("a.py", identity=Identity(1, 1)))
    await gate.decide(read("a.py", identity=Identity(1, 2)))
    [grant] = grants_of(gate, "c1")
    assert revoke_grant(gate, grant["id"], workspace_key="wskey", workspace_name="ws")
    prompt.answers = [Decision.DENY]
    assert not (await gate.decide(read("a.py", identity=Identity(1, 2)))).decision.allowed


def test_a_hostile_name_in_a_grant_is_shown_on_one_line(tmp_path: Path) -> None:
    gate = Remembering(Answers(), grants=WorkspaceGrants(tmp_path / "a.json"))
    gate._remember(read("a\nb\x1b.py"), Decision.ALLOW_CONVERSATION)
    [grant] = grants_of(gate, "c1")
    assert grant["path"] == "a\\nb\\u001b.py"
    assert revoke_grant(gate, grant["id"], workspace_key="wskey", workspace_name="ws")


# --- seeding a conversation -------------------------------------------------------------


def test_history_shape_is_checked() -> None:
    assert history_turns([{"question": "q", "answer": "a"}]) == [HistoryTurn("q", "a")]
    assert history_turns([]) == []
    for bad, says in [
        ({"question": "q"}, "must be a list"),
        (["q"], "history[0] must be an object"),
        ([{"question": "q", "answer": "a"}, {"question": "q"}], "history[1].question and .answer"),
        ([{"question": 1, "answer": "a"}], "must be strings"),
    ]:
        with pytest.raises(ValueError, match=says.replace("[", r"\[").replace(".", r"\.")):
            history_turns(bad)


def test_seeding_keeps_the_last_turns_clipped_and_only_once() -> None:
    turns = [HistoryTurn(f"q{i}", f"a{i}") for i in range(HISTORY_TURNS + 5)]
    turns.append(HistoryTurn("big question " + "é" * HISTORY_QUESTION_BYTES, "ü" * 40_000))
    turns.append(HistoryTurn("no answer came", ""))
    conversations = Conversations()
    conv = conversations.get_or_create("X", "ws", turns)
    assert len(conv.messages) == 2 * HISTORY_TURNS
    assert [m["role"] for m in conv.messages[:4]] == ["user", "assistant", "user", "assistant"]
    assert conv.messages[0]["content"] == "q6"  # the oldest turns went first
    question, answer = conv.messages[-2]["content"], conv.messages[-1]["content"]
    assert len(question.encode("utf-8")) <= HISTORY_QUESTION_BYTES and question.endswith(" […]")
    assert len(answer.encode("utf-8")) <= HISTORY_ANSWER_BYTES and answer.endswith(" […]")
    assert question.startswith("big question éé") and answer.startswith("üü")
    # The same conversation again, with history: nothing is added.
    again = conversations.get_or_create("X", "ws", turns)
    assert again is conv and len(conv.messages) == 2 * HISTORY_TURNS
    assert Conversation().seed([HistoryTurn("", "a"), HistoryTurn("q", " ")]) is False


# --- the approval wait is not the tool's time -------------------------------------------


class Clock:
    """perf_counter for the tool round and the approver: moves only when the prompt says the
    user took time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


class SlowUser:
    """Takes 42 s (of `clock`) to answer; with `until`, answers only once it is set."""

    def __init__(self, clock: Clock, until: asyncio.Event | None = None) -> None:
        self.clock = clock
        self.until = until
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        if self.until is not None:
            await asyncio.wait_for(self.until.wait(), 30)
        self.clock.now += 42.0
        return Decision.ALLOW_ONCE


class Entered:
    """The gate, noting how many calls have come to it (sets `all_in` at `expected`)."""

    def __init__(self, inner: Remembering, expected: int) -> None:
        self.inner, self.expected, self.count = inner, expected, 0
        self.all_in = asyncio.Event()

    async def decide(self, request: ApprovalRequest, *, observer: Any = None) -> Outcome:
        self.count += 1
        if self.count >= self.expected:
            self.all_in.set()
        return await self.inner.decide(request, observer=observer)


async def ask_with(
    fake: FakeOpenAI, tmp_path: Path, calls: list[dict[str, Any]], gate: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    (tmp_path / "a.py").write_text("x = 1\n", "utf-8")
    fake.add_turns([{"tool_calls": calls}, {"content": "Done."}])
    model = ModelClient(model="fake-model", base_url=fake.base_url, api_key="x", max_retries=0)
    events = SentEvents()
    result = await Agent(model=model, workspace=Workspace([tmp_path]), approvals=gate).ask(
        "q", Conversation(), events
    )
    done = [e for e in events if e["kind"] == "tool" and e["status"] == "done"]
    return to_json(result), done


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    import lantern.agent.tool_round as tool_round
    import lantern.approvals.approver as approver

    clock = Clock()
    fake_time = types.SimpleNamespace(perf_counter=clock.perf_counter, time=clock.perf_counter)
    for module in (tool_round, approver):  # the call's time, and the approver's wait
        monkeypatch.setattr(module, "time", fake_time)
    return clock


async def test_wait_ms_is_the_prompt_and_ms_excludes_it(
    fake: FakeOpenAI, tmp_path: Path, clock: Clock
) -> None:
    user = SlowUser(clock)
    call = {"id": "c1", "name": "read_file", "arguments": {"path": "a.py"}}
    gate = Remembering(user, grants=WorkspaceGrants(tmp_path / "grants.json"))
    result, done = await ask_with(fake, tmp_path, [call], gate)
    assert [r.call_id for r in user.requests] == ["c1"]  # the prompt knows its call
    [record] = result["toolCalls"]
    assert (record["status"], record["waitMs"], record["ms"]) == ("done", 42000.0, 0.0)
    assert [(e["waitMs"], e["ms"]) for e in done] == [(42000.0, 0.0)]
    assert result["model"] == "fake-model"


async def test_waiting_behind_another_prompt_is_waiting_too(
    fake: FakeOpenAI, tmp_path: Path, clock: Clock
) -> None:
    """Two calls of one round: the second waits while the user answers the first's prompt,
    then answers its own; all of it is wait, none of it the listing's time."""
    user = SlowUser(clock)
    gate = Entered(Remembering(user, grants=WorkspaceGrants(tmp_path / "grants.json")), 2)
    user.until = gate.all_in  # the first prompt stays open until the other call waits too
    calls = [
        {"id": "c1", "name": "read_file", "arguments": {"path": "a.py"}},
        {"id": "c2", "name": "list_files", "arguments": {}},
    ]
    result, _ = await ask_with(fake, tmp_path, calls, gate)
    asked_first, asked_second = (r.call_id for r in user.requests)
    by_id = {c["id"]: c for c in result["toolCalls"]}
    assert by_id[asked_first]["waitMs"] == 42000.0
    assert (by_id[asked_second]["waitMs"], by_id[asked_second]["ms"]) == (84000.0, 0.0)


async def test_no_prompt_no_wait_ms(fake: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", "utf-8")
    fake.add_turns(
        [
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.py"}}]},
            {"content": "Done."},
        ]
    )
    gate = Remembering(Answers(), mode="workspace", grants=WorkspaceGrants(tmp_path / "g.json"))
    model = ModelClient(model="fake-model", base_url=fake.base_url, api_key="x", max_retries=0)
    result = await Agent(model=model, workspace=Workspace([tmp_path]), approvals=gate).ask(
        "q", Conversation()
    )
    [call] = to_json(result)["toolCalls"]
    assert call["status"] == "done" and "waitMs" not in call and "ms" in call


def test_cli_line_shows_the_wait_apart(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    err = io.StringIO()
    printer = EventPrinter(as_json=False, err=err)
    done = ToolEvent("c1", "read_file", {"path": "a.py"}, "a.py", "done", bytes=10, ms=3.0)
    printer(replace(done, wait_ms=4200.0))
    printer(done)
    first, second = err.getvalue().splitlines()
    assert first == "  read_file a.py … done · 10 B · 3 ms · 4.2 s waiting for approval"
    assert second == "  read_file a.py … done · 10 B · 3 ms"
