"""What an editor's own view asks of the server, end to end: the real `lantern serve`,
pytest-lsp as the editor, the fake OpenAI server as the model.

`lantern/approve` instead of `window/showMessageRequest` for a client that asks for it;
`lantern/grants` / `lantern/revokeGrant`; `lantern/models` / `lantern/localServers`;
`model` in the result; `history` seeding a conversation after a reload or a restart."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import (
    ACTIONS,
    ALLOW,
    ALLOW_CONVERSATION,
    ALLOW_WORKSPACE,
    DENY,
    SERVER_COMMAND,
    WAIT,
    Lantern,
    plain,
    read_call,
    server_env,
)

APPROVE = "lantern/approve"
GRANTS = "lantern/grants"
REVOKE = "lantern/revokeGrant"
MODELS = "lantern/models"
LOCAL_SERVERS = "lantern/localServers"
INVALID_PARAMS = -32602
KEY = "sk-canary-Zt5"

Action = str | None | Callable[[dict[str, Any]], Awaitable[Any]]


class Editor(Lantern):
    """A `Lantern` client that may ask for `lantern/approve` and answers it as told."""

    def __init__(self, client: LanguageClient, env: Mapping[str, str]) -> None:
        super().__init__(client, env)
        self.approvals: list[dict[str, Any]] = []
        self.action: Action = ALLOW  # the next answers' `action`
        self._approve_tasks: list[asyncio.Task[Any]] = []

        @client.feature(APPROVE)
        async def on_approve(params: Any) -> dict[str, Any]:
            task = asyncio.current_task()
            if task is not None:
                self._approve_tasks.append(task)
            request = plain(params)
            self.approvals.append(request)
            action = self.action
            if callable(action):
                return {"action": await action(request)}
            return {"action": action}

    async def start(
        self,
        folders: Iterable[Path],
        options: Mapping[str, Any] | None,
        approval_requests: bool,
        shows_errors: bool = False,
    ) -> None:
        offers = {"approvalRequests": approval_requests, "showsErrors": shows_errors}
        lantern = {name: True for name, on in offers.items() if on}
        await self.initialize(
            folders,
            options,
            experimental={"lantern": lantern} if lantern else None,
            work_done_progress=False,
        )

    async def approvals_answered(self) -> None:
        """Until every `lantern/approve` so far is answered and its answer on the wire."""
        pending = [t for t in self._approve_tasks if not t.done()]
        if pending:
            done, _ = await asyncio.wait(pending, timeout=WAIT)
            assert len(done) == len(pending), "an approval is still unanswered"
        await asyncio.sleep(0)

    def log_lines(self) -> list[str]:
        """What the server logged to the client (warnings and errors)."""
        return [m.message for m in self.client.log_messages]


StartEditor = Callable[..., Awaitable[Editor]]


@pytest.fixture
async def start_editor(home: Path, fake: FakeOpenAI) -> AsyncIterator[StartEditor]:
    started: list[Editor] = []

    async def start(
        folders: Iterable[Path],
        options: Mapping[str, Any] | None = None,
        *,
        approval_requests: bool = True,
        shows_errors: bool = False,
        env: Mapping[str, str | None] | None = None,
    ) -> Editor:
        server_vars = server_env(home, fake.base_url)
        for name, value in (env or {}).items():
            if value is None:
                server_vars.pop(name, None)
            else:
                server_vars[name] = value
        client = await ClientServerConfig(
            server_command=SERVER_COMMAND, server_env=server_vars
        ).start()
        assert isinstance(client, LanguageClient)
        editor = Editor(client, server_vars)
        started.append(editor)
        await editor.start(folders, options, approval_requests, shows_errors)
        return editor

    yield start
    for editor in started:
        await editor.close()


def tool_events(ls: Lantern, call_id: str) -> list[dict[str, Any]]:
    return [e for e in ls.events_of(kind="tool") if e.get("callId") == call_id]


# --------------------------------------------------------------------- lantern/approve


async def test_an_editor_that_asks_gets_lantern_approve(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns(
        [{"tool_calls": [read_call("call_1", "src/app.py")]}, {"content": "It counts lines."}]
    )
    ls = await start_editor([workspace])
    open_while_asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> str:
        open_while_asked.append(ls.events_of(kind="tool")[-1])
        return ALLOW

    ls.action = answer
    result = await ls.ask("What is in app.py?", conversationId="conv-7")
    assert ls.prompts == []  # no window/showMessageRequest
    [request] = ls.approvals
    assert request == {
        "conversationId": "conv-7",
        "callId": "call_1",
        "tool": "read_file",
        "message": "Lantern wants to read src/app.py (lines 1–400, 171 B)",
        "path": "src/app.py",
        "folder": False,
        "startLine": 1,
        "endLine": 400,
        "size": 171,
        "actions": ACTIONS,
        "timeoutSeconds": 120.0,
    }
    [waiting] = open_while_asked
    assert waiting["callId"] == "call_1" and waiting["status"] == "awaiting_approval"
    assert waiting["message"] == request["message"]
    [call] = result["toolCalls"]
    assert call["status"] == "done" and call["waitMs"] > 0
    assert "line 1 of app" in json.dumps(fake.chat_requests()[1])


@pytest.mark.parametrize("action", [DENY, "Yes please", None])
async def test_a_search_approval_names_its_pattern_and_only_a_title_allows(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path, action: str | None
) -> None:
    search = {"id": "s1", "name": "search", "arguments": {"pattern": "line\n\\d", "path": "src"}}
    fake.add_turns([{"tool_calls": [search]}, {"content": "Nothing."}])
    ls = await start_editor([workspace])
    ls.action = action
    result = await ls.ask("Where are the lines?")
    [request] = ls.approvals
    assert request["message"] == "Lantern wants to search src for `line\\n\\d`"
    assert (request["tool"], request["path"], request["folder"]) == ("search", "src", True)
    assert request["pattern"] == "line\n\\d" and request["callId"] == "s1"
    assert "startLine" not in request and "size" not in request
    [call] = result["toolCalls"]
    assert (call["status"], call["code"]) == ("denied", "denied_by_user")
    assert "of app" not in json.dumps(fake.chat_requests()[1])


async def test_other_clients_keep_show_message_request(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    search = {"id": "s1", "name": "search", "arguments": {"pattern": "retry\\(", "path": "src"}}
    fake.add_turns([{"tool_calls": [search]}, {"content": "None."}])
    ls = await start_editor([workspace], approval_requests=False)
    ls.answer = DENY
    await ls.ask("Any retries?")
    assert ls.approvals == []
    assert ls.prompts == ["Lantern wants to search src for `retry\\(`"]


async def test_an_unanswered_approval_times_out_and_a_late_answer_is_ignored(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns(
        [{"tool_calls": [read_call("r1", "src/app.py")]}, {"content": "Could not read."}]
    )
    release = asyncio.Event()

    async def late(request: dict[str, Any]) -> str:
        await release.wait()
        return ALLOW  # the user picks after the server gave up

    ls = await start_editor([workspace], {"approval": {"timeoutSeconds": 1}})
    ls.action = late
    result = await ls.ask("What is in app.py?")
    [request] = ls.approvals
    assert request["timeoutSeconds"] == 1.0
    [call] = result["toolCalls"]
    assert (call["status"], call["code"]) == ("denied", "approval_timeout")
    # The client's cue to close its prompt: the call's tool event went to `denied`.
    assert tool_events(ls, "r1")[-1]["status"] == "denied"
    assert "line 1 of app" not in json.dumps(fake.chat_requests()[1])

    release.set()
    await ls.approvals_answered()
    ls.action = ALLOW
    fake.add_turns([{"content": "Still here."}])
    assert (await ls.ask("Still there?"))["answer"] == "Still here."
    assert ls.log_lines() == []  # the late answer was no error, nor a warning


# --------------------------------------------------------------------- grants


async def test_grants_are_listed_and_revoked_through_the_server(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    def read_turns(call_id: str) -> list[dict[str, Any]]:
        # Other lines each time: a repeated call would be answered "already returned above".
        offset = int(call_id[1:])
        read = read_call(call_id, "src/app.py", offset=offset, limit=1)
        return [{"tool_calls": [read]}, {"content": "Read."}]

    ls = await start_editor([workspace])
    ls.action = ALLOW_CONVERSATION
    fake.add_turns(read_turns("r1"))
    await ls.ask("Read it", conversationId="c1")
    assert await ls.request(GRANTS, {}) == {"grants": []}
    [grant] = (await ls.request(GRANTS, {"conversationId": "c1"}))["grants"]
    assert set(grant) == {"id", "scope", "kind", "path", "workspace"}
    assert (grant["scope"], grant["kind"], grant["path"]) == ("conversation", "file", "src/app.py")
    assert grant["workspace"] == workspace.name

    fake.add_turns(read_turns("r2"))
    await ls.ask("Again", conversationId="c1")
    assert len(ls.approvals) == 1  # remembered
    assert await ls.request(REVOKE, {"id": grant["id"]}) == {"revoked": True}
    assert await ls.request(REVOKE, {"id": grant["id"]}) == {"revoked": False}
    assert (await ls.request(GRANTS, {"conversationId": "c1"}))["grants"] == []
    ls.action = ALLOW_WORKSPACE
    fake.add_turns(read_turns("r3"))
    again = await ls.ask("Once more", conversationId="c1")
    assert len(ls.approvals) == 2  # asked again after the revoke
    assert again["toolCalls"][0]["status"] == "done"

    # Always Allow: listed, stored, revoked from the file; then a read prompts again.
    [always] = (await ls.request(GRANTS, {}))["grants"]
    assert (always["scope"], always["kind"]) == ("always", "workspace")
    assert isinstance(always["since"], int)
    stored = home / "xdg_data_home" / "lantern" / "approvals.json"
    assert '"always": true' in stored.read_text("utf-8")
    assert await ls.request(REVOKE, {"id": always["id"]}) == {"revoked": True}
    assert json.loads(stored.read_text("utf-8")) == {"workspaces": {}}
    ls.action = DENY
    fake.add_turns(read_turns("r4"))
    denied = await ls.ask("And in a new conversation?")
    assert len(ls.approvals) == 3
    assert denied["toolCalls"][0]["status"] == "denied"

    for bad in ({"id": 5}, {}):
        with pytest.raises(JsonRpcException) as caught:
            await ls.request(REVOKE, bad)
        assert caught.value.code == INVALID_PARAMS


# --------------------------------------------------------------------- models


async def test_models_of_the_configured_endpoint(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.models = ["fake-model", "other-model"]
    ls = await start_editor([workspace], env={"LANTERN_API_KEY": KEY})
    assert await ls.request(MODELS, {}) == {
        "baseUrl": fake.base_url,
        "models": ["fake-model", "other-model"],
    }
    [get] = [r for r in fake.requests if r.method == "GET"]
    assert get.headers["authorization"] == f"Bearer {KEY}"  # the configured endpoint's key


async def test_models_from_an_endpoint_that_does_not_answer(
    start_editor: StartEditor, workspace: Path
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    ls = await start_editor([workspace], {"baseUrl": closed, "apiKey": KEY})
    result = await ls.request(MODELS, {})
    assert result["baseUrl"] == closed and result["models"] == []
    detail = result["detail"]
    assert detail["code"] == "model_unreachable"
    assert [f.get("setting") for f in detail["fixes"]] == ["baseUrl"]
    assert "--" not in json.dumps(detail) and KEY not in json.dumps(result)


async def test_local_servers_are_probed_without_a_key(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.models = ["qwen-local"]
    ollama_host = fake.base_url[: -len("/v1")]
    ls = await start_editor([workspace], env={"OLLAMA_HOST": ollama_host, "LANTERN_API_KEY": KEY})
    servers = (await ls.request(LOCAL_SERVERS, {}))["servers"]
    assert servers[0] == {"name": "Ollama", "baseUrl": fake.base_url, "models": ["qwen-local"]}
    assert {s["name"] for s in servers} <= {"Ollama", "LM Studio", "llama.cpp", "vLLM"}
    gets = [r for r in fake.requests if r.method == "GET"]
    assert gets and all("authorization" not in r.headers for r in gets)


# --------------------------------------------------------------------- model in the result


async def test_the_result_names_the_model_that_answered(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns([{"content": "Hi."}])
    ls = await start_editor([workspace])
    assert (await ls.ask("Hello?"))["model"] == "fake-model"
    nowhere = await start_editor([])
    result = await nowhere.ask("Hello?")
    assert result["errorCode"] == "no_workspace" and result["model"] is None


async def test_the_model_lantern_chose_from_ollama_is_named(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.models = ["first-model", "second-model"]
    fake.add_turns([{"content": "Hi from Ollama."}])
    ls = await start_editor(
        [workspace],
        env={
            "LANTERN_MODEL": None,
            "LANTERN_BASE_URL": None,
            "OLLAMA_HOST": fake.base_url[: -len("/v1")],
        },
    )
    result = await ls.ask("Hello?")
    assert result["answer"] == "Hi from Ollama."
    assert result["model"] == "first-model" == fake.chat_requests()[0]["model"]


async def test_a_client_that_shows_errors_gets_no_second_notification(
    start_editor: StartEditor, workspace: Path
) -> None:
    """No model: every client gets the failure with its `detail`; only a client that does
    not render it itself also gets a `window/showMessage` (VS Code showed two toasts)."""
    no_model = {"LANTERN_MODEL": None, "LANTERN_BASE_URL": None, "OLLAMA_HOST": "127.0.0.1:9"}
    rich = await start_editor([workspace], shows_errors=True, env=no_model)
    plain_client = await start_editor([workspace], env=no_model)
    for ls in (rich, plain_client):
        result = await ls.ask("Hello?")
        assert result["errorCode"] == "no_model"
        assert {f.get("setting") for f in result["detail"]["fixes"]} >= {"model", "baseUrl"}
    assert not [m for m in rich.client.messages if "model" in m.message]
    assert [m for m in plain_client.client.messages if "No model is configured" in m.message]


# --------------------------------------------------------------------- history


def conversation_messages(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request["messages"] if m["role"] != "system"]


async def test_history_seeds_a_conversation_the_server_does_not_know(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns([{"content": "Gamma comes third."}, {"content": "Then delta."}])
    ls = await start_editor([workspace])
    history = [
        {"question": "What is alpha?", "answer": "Alpha is the first."},
        {"question": "And beta?", "answer": "Beta is second."},
    ]
    first = await ls.ask("And gamma?", conversationId="X", history=history)
    assert first["conversationId"] == "X" and first["answer"] == "Gamma comes third."
    assert conversation_messages(fake.chat_requests()[0]) == [
        ("user", "What is alpha?"),
        ("assistant", "Alpha is the first."),
        ("user", "And beta?"),
        ("assistant", "Beta is second."),
        ("user", "And gamma?"),
    ]
    # The conversation has messages now: the same history again is not added twice.
    await ls.ask("And delta?", conversationId="X", history=history)
    assert conversation_messages(fake.chat_requests()[1]) == [
        ("user", "What is alpha?"),
        ("assistant", "Alpha is the first."),
        ("user", "And beta?"),
        ("assistant", "Beta is second."),
        ("user", "And gamma?"),
        ("assistant", "Gamma comes third."),
        ("user", "And delta?"),
    ]


@pytest.mark.parametrize(
    "history",
    ["turns", [["q", "a"]], [{"question": "q"}], [{"question": "q", "answer": 3}]],
    ids=["not-a-list", "not-objects", "no-answer", "answer-not-text"],
)
async def test_a_history_of_the_wrong_shape_is_invalid_params(
    start_editor: StartEditor, fake: FakeOpenAI, workspace: Path, history: Any
) -> None:
    ls = await start_editor([workspace])
    with pytest.raises(JsonRpcException) as caught:
        await ls.ask("Hello?", conversationId="Y", history=history)
    assert caught.value.code == INVALID_PARAMS
    assert "history" in str(caught.value)
    assert fake.chat_requests() == []
