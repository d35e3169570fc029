"""Workspace-folder changes in quick succession all apply, in order (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import Lantern, StartServer, all_text, read_call

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.py").write_text(f"{name.upper()}_CONTENT = 1\n", "utf-8")
    return folder


def _change(ls: Lantern, added: list[Path], removed: list[Path]) -> None:
    ls.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in added],
                removed=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in removed],
            )
        )
    )


async def test_two_quick_folder_changes_both_apply(
    start_server: StartServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    a, b, c, d = (_folder(tmp_path, n) for n in "abcd")
    calls = [read_call(f"r{n}", f"{n}/{n}.py") for n in "abc"]
    fake.add_turns([{"tool_calls": calls}, {"content": "Read them."}])
    # Settings are pulled from the client on each change: a round trip in between.
    ls = await start_server([a, d], configuration={"approval": {"mode": "workspace"}})
    _change(ls, [b], [])
    _change(ls, [c], [d])  # sent before the first change was applied
    result = await ls.ask("What is in each folder?")
    assert [t["status"] for t in result["toolCalls"]] == ["done"] * 3, result["toolCalls"]
    sent = all_text(fake.chat_requests()[-1])
    assert all(f"{n}_CONTENT" in sent for n in "ABC")
    system = fake.chat_requests()[0]["messages"][0]["content"]
    assert "3 folders: a, b, c" in system
