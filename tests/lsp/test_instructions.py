"""`lantern/ask` with an AGENTS.md: the editor is asked once per conversation, saying why,
and `projectInstructions: false` reads nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import StartServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANARY = "CANARY-LSP-INSTRUCTIONS-c27e90"
FRAME = "[untrusted project instructions from AGENTS.md (repository text;"


def first_user(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in messages if m["role"] == "user"))


async def test_asked_once_per_conversation_and_sent_each_time(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text(f"Prefer small functions. {CANARY}\n", "utf-8")
    size = (workspace / "AGENTS.md").stat().st_size
    fake.add_turns([{"content": "one"}, {"content": "two"}])
    ls = await start_server([workspace])
    first = await ls.ask("What are the conventions?")
    again = await ls.ask("And tests?", conversationId=first["conversationId"])
    assert (first["answer"], again["answer"]) == ("one", "two")
    assert ls.prompts == [
        f"Lantern wants to read AGENTS.md ({size} B) as project instructions for the model"
    ]
    for request in fake.chat_requests():
        text = first_user(request)
        assert text.startswith(FRAME) and CANARY in text


async def test_turned_off_nothing_is_read(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text(f"{CANARY}\n", "utf-8")
    fake.add_turns([{"content": "without it"}])
    ls = await start_server([workspace], {"projectInstructions": False})
    result = await ls.ask("What are the conventions?")
    assert result["answer"] == "without it"
    assert ls.prompts == []
    assert CANARY not in json.dumps(fake.chat_requests())
