"""<think> blocks and tool-call markup in streamed content: never shown as the answer.

The filter is checked on every way of splitting a reply into chunks, then end to
end with streams replayed byte for byte by the fake server.
"""

from __future__ import annotations

from typing import Any

import pytest
from lantern.agent.protocol.think import ContentFilter
from lantern.agent.provider.client import ModelClient, Reply
from lantern.agent.reply import ChatTurn

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.unit.test_stream_tool_calls import Make, chunk, make, sse

__all__ = ["make"]  # the ModelClient fixture, shared with the tool-call stream tests

# (content as the model wrote it, answer shown and kept, reasoning)
CASES = [
    ("<think>Check util.py.</think>\n\nIt is in util.py.", "It is in util.py.", "Check util.py."),
    ("<thinking>hm</thinking>Yes.", "Yes.", "hm"),
    ("  <think>a</think> b", "b", "a"),
    ("Plain answer, no tags.", "Plain answer, no tags.", ""),
    ("Compare a < b and c <= d.", "Compare a < b and c <= d.", ""),
    ("The tag <think> is XML here.", "The tag <think> is XML here.", ""),
    ("First.\n<think>more</think>\nSecond.", "First.\nSecond.", "more"),
    ("Only reasoning.</think>The answer.", "The answer.", "Only reasoning."),
    ("<think>never closed", "", "never closed"),
    # gpt-oss harmony passed through as content (llama.cpp without --jinja, older LM Studio
    # and vLLM builds): the analysis channel is reasoning, the final channel the answer.
    (
        "<|channel|>analysis<|message|>Check util.py.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is in util.py.<|return|>",
        "It is in util.py.",
        "Check util.py.",
    ),
    ("<|channel|>final<|message|>Yes.", "Yes.", ""),
    # Replies that open like a whole JSON call but are answers: shown whole.
    ('{"a": 1} is JSON.', '{"a": 1} is JSON.', ""),
    ("[1] is cited.", "[1] is cited.", ""),
    ("```py\nx = 1\n```\nDone.", "```py\nx = 1\n```\nDone.", ""),
]


def run_filter(pieces: list[str], *, hold: bool = False) -> tuple[str, str, str, str]:
    """(text shown, reasoning streamed, content kept, reasoning kept)."""
    f = ContentFilter(hold_leading=hold)
    shown: list[str] = []
    thought: list[str] = []
    for piece in pieces:
        a, b = f.feed(piece)
        shown.append(a)
        thought.append(b)
    a, b = f.finish()
    shown.append(a)
    thought.append(b)
    return "".join(shown), "".join(thought), f.content, f.reasoning


def splits(text: str) -> list[list[str]]:
    """Every way to cut `text` into two pieces, and into three."""
    out = [[text[:i], text[i:]] for i in range(1, len(text))]
    out += [
        [text[:i], text[i:j], text[j:]]
        for i in range(1, len(text))
        for j in range(i + 1, len(text))
    ]
    return out


@pytest.mark.parametrize(("raw", "answer", "reasoning"), CASES)
def test_every_chunking_gives_the_same_answer(raw: str, answer: str, reasoning: str) -> None:
    lone_close = raw.startswith("Only reasoning")
    for pieces in [[raw], *splits(raw)]:
        shown, thought, content, kept = run_filter(pieces, hold=lone_close)
        assert (content, kept) == (answer, reasoning), pieces
        assert (shown, thought) == (answer, reasoning), pieces


MARKUP_CASES = [
    # Hermes / Qwen2.5 / Qwen3 chat templates.
    (
        'Let me look.\n<tool_call>\n{"name": "search", "arguments": {"pattern": "greet"}}'
        "\n</tool_call>",
        "Let me look.\n",
    ),
    # Mistral / Devstral text protocol.
    ('[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.py"}}]', ""),
    # A fenced call.
    ('Calling:\n```tool_call\n{"name": "list_files", "arguments": {}}\n```', "Calling:\n"),
    # Llama 3.1 built-in tool format.
    ('<|python_tag|>{"name": "search", "parameters": {"pattern": "x"}}', ""),
    # gpt-oss harmony commentary-channel calls, recipient after or before the channel.
    (
        "<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json"
        '<|message|>{"pattern": "x"}<|call|>',
        "",
    ),
    ("<|start|>assistant to=functions.search<|channel|>commentary json<|message|>{}", ""),
    # A reply that is only a call: Llama 3.x JSON, fenced, pythonic (held, never shown).
    ('{"name": "search", "parameters": {"pattern": "x"}}', ""),
    ('```json\n{"name": "search", "arguments": {"pattern": "x"}}\n```', ""),
    ('[search(pattern="x")]', ""),
]


def test_whole_call_after_a_think_block_is_not_shown() -> None:
    raw = '<think>Need x.</think>\n\n{"name": "search", "parameters": {"pattern": "x"}}'
    for pieces in [[raw], *splits(raw)[:: max(1, len(raw) // 30)]]:
        shown, thought, content, _ = run_filter(pieces)
        assert (shown, thought) == ("", "Need x."), pieces
        assert content == '{"name": "search", "parameters": {"pattern": "x"}}', pieces


@pytest.mark.parametrize(("raw", "shown_before"), MARKUP_CASES)
def test_tool_markup_is_kept_but_never_shown(raw: str, shown_before: str) -> None:
    for pieces in [[raw], *splits(raw)[:: max(1, len(raw) // 40)]]:
        shown, _, content, _ = run_filter(pieces)
        assert content == raw, pieces
        assert shown == shown_before, pieces


# --- end to end --------------------------------------------------------------------------------

MESSAGES = [{"role": "user", "content": "where is greet?"}]


def content_stream(*pieces: str, extra: dict[str, Any] | None = None) -> list[str]:
    """A reply made only of content deltas, opened by the role delta (with `extra`)."""
    opening = chunk({"role": "assistant", "content": "", **(extra or {})})
    return sse(opening, *(chunk({"content": p}) for p in pieces), chunk({}, "stop"))


async def ask(client: ModelClient) -> tuple[Reply, list[str], list[str]]:
    texts: list[str] = []
    thoughts: list[str] = []
    reply = await client.complete(
        ChatTurn(MESSAGES, None, texts.append, on_reasoning=thoughts.append)
    )
    return reply, texts, thoughts


async def test_think_tag_split_across_http_chunks(fake: FakeOpenAI, make: Make) -> None:
    # LM Studio / vLLM without --reasoning-parser: the template's <think> block arrives as
    # content, one token per chunk, so the tag itself is cut ("<thi" + "nk>"); here the SSE
    # event is also cut mid-JSON between two socket writes.
    stream = content_stream(
        "<thi", "nk>", "Look in", " util.</th", "ink>", "\n\nIt is ", "in util.py."
    )
    stream[2] = stream[2][:20]
    stream.insert(3, content_stream("<thi", "nk>")[2][20:])
    fake.add_turns([Turn(raw=stream, chunk_delay=0.01)])
    reply, texts, thoughts = await ask(make())
    assert reply.content == "It is in util.py."
    assert "".join(texts) == "It is in util.py."
    assert not any("think" in t or "<" in t for t in texts)
    assert reply.reasoning == "Look in util." == "".join(thoughts)
    assert reply.extra == {}  # <think> text is not a provider field to send back


async def test_lone_closing_tag_from_a_distill_is_never_shown(fake: FakeOpenAI, make: Make) -> None:
    # DeepSeek-R1 distills (and Qwen3 thinking templates) via llama.cpp without --jinja: the
    # prompt ends with "<think>\n", so the reply starts with bare reasoning and a lone </think>.
    fake.add_turns(
        [
            Turn(
                raw=content_stream(
                    "Okay, the user", " asks where.\n", "</thi", "nk>\n\n", "In util.py."
                )
            )
        ]
    )
    reply, texts, thoughts = await ask(make("deepseek-r1-distill-qwen-7b"))
    assert reply.content == "In util.py." and "".join(texts) == "In util.py."
    assert reply.reasoning == "Okay, the user asks where.\n" == "".join(thoughts)


async def test_lone_closing_tag_is_removed_from_the_answer_for_any_model(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.add_turns([Turn(raw=content_stream("Reasoning here.", "</think>", "Answer."))])
    reply, _, _ = await ask(make("some-model"))
    assert reply.content == "Answer." and reply.reasoning == "Reasoning here."


async def test_answer_streams_when_the_server_separates_reasoning(
    fake: FakeOpenAI, make: Make
) -> None:
    # Ollama openai.go: qwen3 thinking goes to delta.reasoning, the answer to content; the
    # answer must stream as it comes, not wait for the end.
    fake.add_turns(
        [
            Turn(
                raw=content_stream(
                    "It is ", "in ", "util.py.", extra={"reasoning": "Where is greet?"}
                )
            )
        ]
    )
    reply, texts, thoughts = await ask(make("qwen3:8b"))
    assert texts == ["It is ", "in ", "util.py."]
    assert thoughts == ["Where is greet?"] and reply.extra == {"reasoning": "Where is greet?"}


async def test_text_tool_call_markup_not_streamed(fake: FakeOpenAI, make: Make) -> None:
    # Qwen2.5 via a server whose hermes parser missed the call: the markup is plain content.
    fake.add_turns(
        [
            Turn(
                raw=content_stream(
                    "I will search.\n<tool",
                    '_call>\n{"name": "search", ',
                    '"arguments": {"pattern": "greet"}}\n</tool_call>',
                )
            )
        ]
    )
    reply, texts, _ = await ask(make())
    assert "".join(texts) == "I will search.\n"
    assert reply.content == (
        'I will search.\n<tool_call>\n{"name": "search", "arguments": {"pattern": "greet"}}'
        "\n</tool_call>"
    )
    assert reply.tool_calls == []


async def test_mistral_thinking_chunks_in_content(fake: FakeOpenAI, make: Make) -> None:
    # Mistral API reasoning models (Magistral docs): delta.content is a list of typed chunks,
    # "thinking" (itself a list of text chunks) before "text".
    def event(content: Any, finish: str | None = None) -> dict[str, Any]:
        return chunk({"content": content}, finish, model="magistral-medium-latest")

    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Check util."}]}
    stream = sse(
        event([thinking]),
        event([{"type": "text", "text": "It is in "}]),
        event("util.py."),
        event("", "stop"),
    )
    fake.add_turns([Turn(raw=stream)])
    reply, texts, thoughts = await ask(make("magistral-medium-latest"))
    assert reply.content == "It is in util.py." and "".join(texts) == reply.content
    assert thoughts == ["Check util."] and reply.extra == {}
