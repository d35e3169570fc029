"""The one-line summary of a tool call that every `tool` event carries (`summarize` in
`tools/registry.py`, each tool's own in its module)."""

from __future__ import annotations

from typing import Any

import pytest
from lantern.agent.events import ToolCallRecord, tool_event
from lantern.converter import to_json
from lantern.tools.registry import summarize
from lantern.workspace.lines import MAX_LINES


@pytest.mark.parametrize(
    ("name", "arguments", "summary"),
    [
        ("read_file", {"path": "src/app.py"}, f"src/app.py · lines 1–{MAX_LINES}"),
        ("read_file", {"path": "a.py", "offset": 41, "limit": 40}, "a.py · lines 41–80"),
        ("read_file", {"path": "a.py", "offset": 10, "limit": 5000}, "a.py · lines 10–409"),
        ("read_file", {"path": "a.py", "offset": 0, "limit": True}, "a.py · lines 1–400"),
        ("search", {"pattern": "retry", "glob": "*.py"}, "/retry/ in . (*.py)"),
        ("search", {"pattern": "def greet", "path": "src"}, "/def greet/ in src"),
        ("list_files", {}, "."),
        ("list_files", {"path": "src", "glob": "**/*.ts"}, "src (**/*.ts)"),
        ("fetch_url", {"url": "http://x"}, ""),
        ("fetch_url", {"path": "notes"}, "notes"),
        ("read_file", '{"path": "a.py"', "(malformed arguments)"),
        ("read_file", {"path": 7}, "7 · lines 1–400"),
    ],
)
def test_summary_says_what_the_call_asks_for(name: str, arguments: Any, summary: str) -> None:
    assert summarize(name, arguments) == summary


def test_summary_is_one_bounded_escaped_line() -> None:
    """What the model sent never brings a control character or a line break along."""
    text = summarize("search", {"pattern": "\x1b]52;c;x\x07\n" + "a" * 5000, "path": "s\u2028rc"})
    assert text.isprintable() and "\n" not in text
    assert "\\u001b]52;c;x\\u0007\\n" in text and "s\\u2028rc" in text
    assert len(text) < 300 and "chars)" in text


def test_the_answer_s_tool_calls_carry_the_same_summary_as_the_events() -> None:
    # A client that renders the final result (the VS Code panel re-draws its rows from
    # `toolCalls`) shows the same line as it did from the events.
    record = ToolCallRecord("a1", "read_file", {"path": "src/app.py"}, status="done")
    assert to_json(record)["summary"] == to_json(tool_event(record, "done"))["summary"]
    assert to_json(record)["summary"] == f"src/app.py · lines 1–{MAX_LINES}"
