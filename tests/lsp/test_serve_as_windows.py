"""`lantern serve` on native Windows, EMULATED on Linux through tests/as_windows.py.

The server must start (an editor gets an answer, not a crash), answer
`initialize`, refuse a question with `errorCode: unsupported_platform` and the
one message without calling the model or reading the workspace, and shut down
cleanly. What the emulation does and does not show: tests/as_windows.py.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lantern.platform_gate import MESSAGE
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import WAIT, Lantern, server_env

AS_WINDOWS = str(Path(__file__).resolve().parents[1] / "as_windows.py")
CANARY = "CANARY-WINDOWS-LSP-93d2a6b0"


@pytest.fixture
async def windows_server(home: Path, fake: FakeOpenAI) -> AsyncIterator[Lantern]:
    config = ClientServerConfig(
        server_command=[sys.executable, AS_WINDOWS, "serve"],
        server_env=server_env(home, fake.base_url),
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    server = Lantern(client, server_env(home, fake.base_url))
    try:
        yield server
    finally:
        await server.close()


async def test_serve_starts_refuses_a_question_and_shuts_down(
    windows_server: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "src" / "app.py").write_text(f"print('{CANARY}')\n", "utf-8")
    fake.add_turns(
        [
            {
                "tool_calls": [
                    {"id": "c1", "name": "read_file", "arguments": {"path": "src/app.py"}}
                ]
            },
            {"content": "done"},
        ]
    )
    ls = windows_server
    await ls.initialize([workspace])
    assert ls.initialized is not None
    assert ls.initialized.server_info is not None
    assert ls.initialized.server_info.name == "lantern"

    result = await ls.ask("What does src/app.py print?", conversationId="c-1")
    assert result["stopReason"] == "error"
    assert result["errorCode"] == "unsupported_platform"
    assert result["error"] == MESSAGE
    assert result["conversationId"] == "c-1"
    assert result["toolCalls"] == [] and result["answer"] == ""
    assert fake.requests == []  # no model was asked, so nothing was read for one
    assert ls.events == []
    assert CANARY not in repr(result)

    info = await ls.request("lantern/info", {})  # the rest of the protocol still answers
    assert info["version"]

    process = ls.client._server
    assert process is not None
    # `shutdown`, then `exit`; it waits for the process to end.
    await asyncio.wait_for(ls.client.shutdown_session(), WAIT)
    assert process.returncode == 0  # 0: `exit` came after `shutdown`
