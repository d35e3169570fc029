"""`lantern ask` with the code tools: a scripted model asks "where is X defined?" with one
`find_symbol` call, answers citing the line it was shown, and the reference is verified
and seen. Real subprocess, real workspace, the fake model server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern, Project


def test_where_is_it_defined_in_one_find_symbol_call(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    answer = "`greet` is defined at src/util.py:1 and called at src/app.py:7."
    fake.add_turns(
        [
            Turn(tool_calls=[{"id": "f1", "name": "find_symbol", "arguments": {"name": "greet"}}]),
            Turn(content=answer),
        ]
    )
    run = lantern.ask("Where is greet defined?")
    assert run.rc == 0, run.stderr
    out = run.json
    assert [(c["name"], c["status"]) for c in out["toolCalls"]] == [("find_symbol", "done")]
    refs = {answer[r["span"][0] : r["span"][1]]: r for r in out["references"]}
    assert refs["src/util.py:1"]["verified"] and refs["src/util.py:1"]["seen"]
    # The call site exists but the model was never shown it.
    assert refs["src/app.py:7"]["verified"] and not refs["src/app.py:7"]["seen"]
    assert "find_symbol greet in ." in run.stderr

    sent = fake.chat_requests()[-1]["messages"]
    result = next(m for m in sent if m.get("tool_call_id") == "f1")["content"]
    assert result.splitlines() == [
        "[untrusted definitions of 'greet' under .]",
        "src/util.py:1-2 function greet  def greet(name: str) -> str:",
    ]
    # The model was offered the tool and told when to use it.
    first = fake.chat_requests()[0]
    assert "find_symbol" in {t["function"]["name"] for t in first["tools"]}
    assert "`find_symbol`" in first["messages"][0]["content"]
    for canary in project.canaries:
        assert canary not in str(fake.requests)
