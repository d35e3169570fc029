"""A client that pre-selects the first action (Emacs's eglot: a bare Enter sends the first
title) denies the read (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import ENTER, StartServer, read_call

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANARY = "enter-canary-4b1d90"


async def test_a_bare_enter_never_grants(
    start_server: StartServer, fake: FakeOpenAI, tmp_path: Path
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "notes.txt").write_text(f"{CANARY}\n", "utf-8")
    fake.add_turns([{"tool_calls": [read_call("r1", "notes.txt")]}, {"content": "Refused."}])
    ls = await start_server([folder], answer=ENTER)
    result = await ls.ask("What is in notes.txt?")
    assert len(ls.prompts) == 1
    assert result["toolCalls"][0]["status"] == "denied"
    assert CANARY not in json.dumps(fake.chat_requests())
