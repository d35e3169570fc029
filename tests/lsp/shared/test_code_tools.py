"""The code tools through `lantern/ask`: the real server in a subprocess, pytest-lsp as the
editor, the fake model asking `find_symbol` once and citing what it was shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import ALLOW, ASK, Lantern, all_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

SESSION_PY = """\
class Session:
    def close(self) -> None:
        pass


def open_session() -> Session:
    return Session()
"""


@pytest.fixture
def workspace(module_workspace: Path) -> Path:
    (module_workspace / "src" / "session.py").write_text(SESSION_PY, "utf-8")
    return module_workspace


async def test_find_symbol_through_ask(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    answer = "`Session.close` is defined at src/session.py:2-3."
    call = {"id": "f1", "name": "find_symbol", "arguments": {"name": "Session.close"}}
    fake.add_turns([{"content": "", "tool_calls": [call]}, {"content": answer}])
    ls.answer = ALLOW
    result = await ls.request(ASK, {"question": "Where is Session.close?"}, msg_id="fs1")
    assert result["answer"] == answer and result["stopReason"] == "done"
    assert [(c["name"], c["status"]) for c in result["toolCalls"]] == [("find_symbol", "done")]
    prompt = "Lantern wants to look up definitions of `Session.close` in the workspace"
    assert ls.prompts == [prompt]
    [ref] = result["references"]
    assert (ref["path"], ref["startLine"], ref["verified"]) == ("src/session.py", 2, True)
    # Only the definition's first line was shown: a citation of its whole range is not seen.
    assert ref["seen"] is False
    sent = all_text(fake.chat_requests()[-1])
    assert "src/session.py:2-3 method Session.close  def close(self) -> None:" in sent
    assert "ENV_SECRET_MARKER" not in all_text(fake.chat_requests()[0]) + sent
