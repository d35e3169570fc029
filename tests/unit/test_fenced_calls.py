"""One answer to "what is call markup": what the stream filter hides, the protocols read.

A reply of prose plus a call in a ```tool_call (or ```tool) fence once came back as
the answer, raw markup and all, with no tool run: the stream filter hid the fence
but the parser did not read it. These run the whole loop over real HTTP against the
fake server (so the real stream filter sits in the path) in both protocols, and
check the rule behind it for every marker the filter hides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lantern.agent.conversation import Conversation
from lantern.agent.loop import Agent
from lantern.agent.protocol.markup import MARKERS, has_markup, parse
from lantern.agent.protocol.text_words import RESULTS_HEADER
from lantern.agent.protocol.think import ContentFilter
from lantern.agent.provider.client import ModelClient
from lantern.approvals.approver import Decision, Fixed
from lantern.settings.model import ToolProtocol
from lantern.workspace.roots import Workspace

from tests.conftest import SentEvents, settings_with, write
from tests.fakes.openai_server import FakeOpenAI, Turn

UTIL_PY = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
CALL = json.dumps({"name": "read_file", "arguments": {"path": "src/util.py"}})
FENCES = {
    "tool_call": f"```tool_call\n{CALL}\n```",
    "tool": f"```tool\n{CALL}\n```",
}
ANSWER = "greet is defined at src/util.py:1."


@pytest.fixture(autouse=True)
def util(ws: Path) -> None:
    """What every test here finds in `ws`: the helper the scripted answers cite."""
    write(ws, "src/util.py", UTIL_PY)


def _shown(events: SentEvents) -> str:
    return "".join(e["text"] for e in events if e["kind"] == "answerDelta")


@pytest.mark.parametrize("fence", sorted(FENCES))
@pytest.mark.parametrize("protocol", ["auto", "text"])
async def test_prose_and_a_fenced_call_runs_the_call(
    fake: FakeOpenAI, http_model: ModelClient, ws: Path, protocol: ToolProtocol, fence: str
) -> None:
    fake.add_turns(
        [Turn(content="Let me read the helper.\n" + FENCES[fence]), Turn(content=ANSWER)]
    )
    bot = Agent(
        model=http_model,
        workspace=Workspace([ws]),
        approvals=Fixed(Decision.ALLOW_ONCE),
        settings=settings_with(tool_protocol=protocol),
    )
    events = SentEvents()
    conv = Conversation()
    result = await bot.ask("Where is greet?", conv, events)

    assert result.stop_reason == "done"
    assert result.answer == ANSWER  # never the fenced markup
    assert [(c.name, c.status) for c in result.tool_calls] == [("read_file", "done")]
    assert "```" not in _shown(events) and "read_file" not in _shown(events)
    first, second = fake.chat_requests()
    assert ("tools" in first) == (protocol == "auto")
    assert "tools" not in second
    results = second["messages"][-1]
    assert results["role"] == "user" and results["content"].startswith(RESULTS_HEADER)
    assert "def greet" in results["content"]
    switched = [e for e in events if e.get("status") == "protocol"]
    assert len(switched) == (1 if protocol == "auto" else 0)
    if protocol == "auto":
        assert conv.tool_protocol == "text"  # `auto` keeps the switch for follow-ups
    assert [(r.path, r.seen) for r in result.references] == [("src/util.py", True)]


async def test_native_mode_reads_the_fence_as_a_call_it_does_not_run(
    fake: FakeOpenAI, http_model: ModelClient, ws: Path
) -> None:
    """`toolProtocol: native` runs no text calls, but it knows the fence is one: the
    question ends with the error that says so, never with the markup as the answer."""
    fake.add_turns([Turn(content="Let me read the helper.\n" + FENCES["tool_call"])])
    bot = Agent(
        model=http_model,
        workspace=Workspace([ws]),
        approvals=Fixed(Decision.ALLOW_ONCE),
        settings=settings_with(tool_protocol="native"),
    )
    result = await bot.ask("Where is greet?", Conversation())
    assert result.stop_reason == "error" and result.error and "toolProtocol" in result.error
    assert result.answer == "Let me read the helper." and result.tool_calls == []


def _filtered(text: str) -> tuple[str, str]:
    """(what the stream filter shows, what it keeps as the reply's content)."""
    f = ContentFilter()
    shown, _ = f.feed(text)
    more, _ = f.finish()
    return shown + more, f.content


@pytest.mark.parametrize("marker", MARKERS)
def test_whatever_the_filter_hides_the_parser_reads_or_reports(marker: str) -> None:
    """For each marker: prose, then markup the filter hides from there on. The parser
    must see markup there too, and either read a call or say why it could not; the
    prose it keeps never holds the marker."""
    text = f"Some prose first.\n{marker}{CALL}"
    shown, content = _filtered(text)
    assert content == text
    assert shown.strip() == "Some prose first."
    assert has_markup(text)
    parsed = parse(text)
    assert parsed.calls or parsed.errors, marker
    assert marker.strip() not in parsed.prose and parsed.prose == "Some prose first."


@pytest.mark.parametrize(
    "text",
    [
        f"Reading.\n```tool_call\n{CALL}\n```\nThen I answer.",
        f"Reading.\n```tool_call json\n{CALL}\n```",
        f"Reading.\n```tool\n{CALL}\n```",
        f"Reading.\n<tool_call >{CALL}</tool_call>",
    ],
)
def test_fenced_and_spaced_calls_are_read(text: str) -> None:
    parsed = parse(text)
    assert [(c.name, json.loads(c.arguments)) for c in parsed.calls] == [
        ("read_file", {"path": "src/util.py"})
    ]
    assert parsed.errors == [] and parsed.prose.startswith("Reading.")
    assert "```" not in parsed.prose and "tool_call" not in parsed.prose


def test_a_fence_that_only_mentions_tool_is_not_a_call() -> None:
    """`toolbox` or ```tools are code blocks like any other: not hidden, not parsed."""
    text = "Use it like this:\n```toolbox\nrun()\n```"
    assert _filtered(text) == (text, text)
    assert not has_markup(text) and parse(text).prose == text
