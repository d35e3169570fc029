"""Workspace folders and settings of `lantern serve`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import WAIT, Lantern, StartServer, all_text, read_call

# Each test here sets up its server its own way (folders, settings at start), so none is
# shared; `start_server` runs in the module's event loop (tests/lsp/conftest.py).
pytestmark = pytest.mark.asyncio(loop_scope="module")


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "pkg").mkdir(parents=True)
    b.mkdir()
    (a / "pkg" / "mod.py").write_text("A_CONTENT = 1\n", "utf-8")
    (b / "x.py").write_text("def b_function():\n    return 'B_CONTENT'\n", "utf-8")
    return a, b


async def _messages(ls: Lantern, count: int = 1) -> list[str]:
    """The `window/showMessage` texts, once at least `count` arrived."""
    async with asyncio.timeout(WAIT):
        while len(ls.client.messages) < count:
            await asyncio.sleep(0.02)
    return ls.warnings()


async def test_two_workspace_folders(
    start_server: StartServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    a, b = _folders(tmp_path)
    fake.add_turns(
        [
            {"tool_calls": [read_call("c1", "b/x.py"), read_call("c2", "a/pkg/mod.py")]},
            {"content": "b_function is at b/x.py:1-2; see also a/pkg/mod.py:1."},
        ]
    )
    ls = await start_server([a, b], {"approval": {"mode": "workspace"}})
    result = await ls.ask("Where is b_function?")
    assert [c["status"] for c in result["toolCalls"]] == ["done", "done"]
    assert ls.prompts == []
    sent = all_text(fake.chat_requests()[1])
    assert "B_CONTENT" in sent and "A_CONTENT" in sent
    # The model is told about both folders by name.
    system = fake.chat_requests()[0]["messages"][0]["content"]
    assert "2 folders: a, b" in system and str(tmp_path) not in system
    refs = {r["path"]: r for r in result["references"]}
    assert refs["b/x.py"]["uri"] == (b / "x.py").as_uri()
    assert refs["a/pkg/mod.py"]["uri"] == (a / "pkg" / "mod.py").as_uri()
    assert all(r["verified"] and r["seen"] for r in refs.values())


async def test_a_folder_added_later(
    start_server: StartServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    a, b = _folders(tmp_path)
    fake.add_turns(
        [
            {"tool_calls": [read_call("c1", "x.py")]},
            {"content": "Not here."},
            {"tool_calls": [read_call("c2", "b/x.py")]},
            {"content": "Found it at b/x.py:1."},
        ]
    )
    ls = await start_server([a], {"approval": {"mode": "workspace"}})
    before = await ls.ask("Where is x.py?")
    assert before["toolCalls"][0]["code"] == "not_found"
    ls.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=b.as_uri(), name="b")], removed=[]
            )
        )
    )
    after = await ls.ask("And now?")
    assert after["toolCalls"][0]["status"] == "done"
    assert "B_CONTENT" in all_text(fake.chat_requests()[3])
    assert after["references"][0]["uri"] == (b / "x.py").as_uri()


async def test_a_folder_added_later_brings_its_own_narrowing(
    start_server: StartServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    # Folder b's own settings deny x.py: that must hold from the moment b is added,
    # not from the next settings change.
    a, b = _folders(tmp_path)
    fake.add_turns([{"tool_calls": [read_call("c1", "b/x.py")]}, {"content": "Denied."}])
    ls = await start_server([a], configuration={"approval": {"mode": "workspace"}})
    ls.client.set_configuration(
        {"approval": {"deny": ["x.py"]}}, section="lantern", scope_uri=b.as_uri()
    )
    pulls = ls.configuration_pulls
    ls.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=b.as_uri(), name="b")], removed=[]
            )
        )
    )
    await ls.wait_configuration_pulls(pulls + 1)
    result = await ls.ask("What is in b/x.py?")
    assert result["toolCalls"][0]["code"] == "sensitive_path"
    assert "B_CONTENT" not in all_text(fake.chat_requests()[1])


async def test_settings_changed_at_runtime(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    def question(call_id: str, path: str) -> list[dict[str, object]]:
        return [{"tool_calls": [read_call(call_id, path)]}, {"content": "Ok."}]

    fake.add_turns(question("c1", "src/app.py"))
    ls = await start_server([workspace])
    await ls.ask("Read app?")
    assert len(ls.prompts) == 1

    # Pushed settings: reads in the workspace need no prompt any more.
    ls.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"lantern": {"approval": {"mode": "workspace"}}}
        )
    )
    fake.add_turns(question("c2", "README.md"))
    result = await ls.ask("Read the readme?")
    assert result["toolCalls"][0]["status"] == "done"
    assert len(ls.prompts) == 1

    # No settings in the notification: the server pulls `workspace/configuration`.
    ls.client.set_configuration({"approval": {"mode": "ask"}}, section="lantern")
    pulls = ls.configuration_pulls
    ls.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await ls.wait_configuration_pulls(pulls + 1)  # the pull is a round trip of its own
    fake.add_turns(question("c3", "src/app.py"))
    result = await ls.ask("Read app again?")
    assert result["toolCalls"][0]["status"] == "done"
    assert len(ls.prompts) == 2


async def test_settings_pulled_at_startup(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns([{"tool_calls": [read_call("c1", "src/app.py")]}, {"content": "Ok."}])
    ls = await start_server([workspace], configuration={"approval": {"mode": "workspace"}})
    result = await ls.ask("Read app?")
    assert result["toolCalls"][0]["status"] == "done" and ls.prompts == []


async def test_a_bad_setting_is_reported_and_the_default_kept(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    ls = await start_server([workspace], {"maxSteps": -1, "approval": {"mode": "workspace"}})
    [warning] = await _messages(ls)
    assert "maxSteps" in warning
    assert ls.client.messages[0].type == types.MessageType.Warning
    # maxSteps is still 20: a question of three model calls ends normally.
    fake.add_turns(
        [
            {"tool_calls": [read_call("c1", "src/app.py", limit=2)]},
            {"tool_calls": [read_call("c2", "README.md")]},
            {"content": "Done at src/app.py:1."},
        ]
    )
    result = await ls.ask("Look around?")
    assert result["stopReason"] == "done"
    assert [c["status"] for c in result["toolCalls"]] == ["done", "done"]
    assert len(fake.chat_requests()) == 3
    # The other setting in the same object still took effect.
    assert ls.prompts == []
    # Reported once: not again at the pull after `initialized`, nor on a settings change.
    ls.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lantern": {"questionTimeoutSeconds": 60}})
    )
    ls.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lantern": {"maxSteps": "many"}})
    )
    messages = await _messages(ls, 2)
    assert len(messages) == 2 and "maxSteps" in messages[1] and "many" in messages[1]
