"""`lantern ask --approve ask` on a terminal: what one answer covers afterwards.

Names and contents are different grants: allowing a listing for the whole
conversation must still ask before a search, because a search with a file as
its path (`^` on `src/app.py`) returns that whole file.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import pytest

from tests.cli.test_ask_cli import Terminal as AskTerminal
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pty")

PROMPT_END = "[d] Deny (default): "


class Terminal(AskTerminal):
    """The CLI suite's terminal, answering approval prompts one at a time."""

    choices = ""  # the answers the last prompt offered

    def answer_prompt(self, choice: str, timeout: float = HANG_S) -> str:
        """Wait for the next approval prompt, answer it, and return its text."""
        self.wait_for(PROMPT_END, timeout)
        prompt, self.screen = self.screen.split(PROMPT_END, 1)
        os.write(self.master, choice.encode() + b"\n")
        lines = prompt.strip().splitlines()
        self.choices = f"{lines[-1].strip()}  {PROMPT_END.strip()}"
        return lines[-2]


def test_listing_allowed_for_the_conversation_still_asks_before_a_search(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[{"id": "l1", "name": "list_files", "arguments": {}}]),
            Turn(
                tool_calls=[
                    {
                        "id": "s1",
                        "name": "search",
                        "arguments": {"pattern": "^", "path": "src/app.py"},
                    }
                ]
            ),
            Turn(tool_calls=[{"id": "l2", "name": "list_files", "arguments": {"path": "src"}}]),
            Turn(content="I could not read it."),
        ]
    )
    term = Terminal(lantern)
    try:
        listing = term.answer_prompt("c")  # Allow in chat
        # The editor's words: the same four answers, whichever client asks.
        assert term.choices == "[a] Allow  [c] Allow in chat  [w] Always allow  [d] Deny (default):"
        search = term.answer_prompt("d")
        out = term.finish(timeout=HANG_S)
    finally:
        term.close()
    assert term.proc.returncode == 0, term.screen
    assert listing.endswith("Lantern wants to list the files in the workspace")
    assert search.endswith("Lantern wants to search src/app.py for `^`")
    assert [(c["id"], c["status"]) for c in out["toolCalls"]] == [
        ("l1", "done"),
        ("s1", "denied"),
        ("l2", "done"),  # covered by the listing grant: no third prompt
    ]
    sent = json.dumps(fake.chat_requests()[-1]["messages"])
    assert "def main" not in sent and "greet(name)" not in sent
