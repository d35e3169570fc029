"""Model-native tool-call tokens that reach the client as text, read as ``<tool_call>`` blocks.

A server without the right tool parser passes a model's own call syntax on in
``content``: gpt-oss "harmony" commentary-channel calls, DeepSeek's and Kimi's
call tokens. Each call is rewritten as the ``<tool_call>{"name", "arguments"}</tool_call>``
block that `text_words` parses, so one parser (and one set of errors) covers them.
The name is taken only from the explicit recipient; arguments are left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

OPEN, CLOSE = "<tool_call>", "</tool_call>"

# A gpt-oss (harmony) call passed through as text by a server without its parser:
# `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}
# <|call|>`, the recipient sometimes before the channel.
_HARMONY = "to=functions."
_HARMONY_CALL = re.compile(
    r"(?:<\|start\|>assistant\s*+)?(?:<\|channel\|>commentary\s*+)?to=functions\.([\w.-]++)\s*+"
    r"(?:<\|channel\|>commentary\s*+)?(?:<\|constrain\|>\s*+)?(?:json\s*+)?<\|message\|>"
    r"(.*?)(?:<\|call\|>|$)",
    re.S,
)
# DeepSeek V3 (`function<｜tool▁sep｜>NAME` + a ```json fence) and V3.1+ (`NAME<｜tool▁sep｜>{…}`)
# and Kimi K2 (`functions.NAME:0<|tool_call_argument_begin|>{…}`) calls leaked into content.
# A DeepSeek call is read by `_deepseek_calls`: its head by this pattern (possessive, so a
# run of spaces is crossed once), its arguments up to the first end token after the head.
_DEEPSEEK, _DEEPSEEK_END = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"
_DEEPSEEK_HEAD = re.compile(
    r"<｜tool▁call▁begin｜>\s*+(?:function\s*+<｜tool▁sep｜>)?\s*+([\w.-]++)\s*+(?:<｜tool▁sep｜>)?"
    r"\s*+(?:```(?:json)?\s*+)?"
)
_KIMI = "<|tool_call_begin|>"
_KIMI_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*+(?:functions\.)?([\w-]+(?:\.[\w-]+)*?)(?::\d+)?\s*+"
    r"<\|tool_call_argument_begin\|>(.*?)(?:<\|tool_call_end\|>|$)",
    re.S,
)
_DEEPSEEK_SECTION, _KIMI_SECTION = "<｜tool▁calls▁begin｜>", "<|tool_calls_section_begin|>"
_WRAPPERS = (
    _DEEPSEEK_SECTION, "<｜tool▁calls▁end｜>", _KIMI_SECTION, "<|tool_calls_section_end|>",
)  # fmt: skip
# Where such calls start in a reply: the DeepSeek and Kimi call sections, and the ways a
# harmony commentary-channel message opens. Part of `markup.MARKERS`.
MARKERS = (
    _DEEPSEEK_SECTION, _KIMI_SECTION, "<|channel|>commentary",
    "<|start|>assistant<|channel|>commentary", "<|start|>assistant to=",
)  # fmt: skip
_Found = tuple[int, int, str, str]  # start, end, name, arguments


def _regex_calls(pattern: re.Pattern[str]) -> Callable[[str], Iterator[_Found]]:
    def calls(text: str) -> Iterator[_Found]:
        for m in pattern.finditer(text):
            yield m.start(), m.end(), m.group(1), m.group(2)

    return calls


def _deepseek_calls(text: str) -> Iterator[_Found]:
    """DeepSeek calls, in order: a head, then the arguments up to the first end token
    (without the whitespace and the ``` fence before it). One pass: when no end token
    follows a head, none follows a later one either."""
    at = text.find(_DEEPSEEK)
    while at >= 0:
        head = _DEEPSEEK_HEAD.match(text, at)
        if head is None:
            at = text.find(_DEEPSEEK, at + 1)
            continue
        close = text.find(_DEEPSEEK_END, head.end())
        if close < 0:
            return
        body = text[head.end() : close].rstrip()
        if body.endswith("```"):
            body = body[:-3].rstrip()
        yield at, close + len(_DEEPSEEK_END), head.group(1), body
        at = text.find(_DEEPSEEK, close + len(_DEEPSEEK_END))


_NATIVE = (
    (_HARMONY, _regex_calls(_HARMONY_CALL)),
    (_DEEPSEEK, _deepseek_calls),
    (_KIMI, _regex_calls(_KIMI_CALL)),
)


def has_calls(text: str) -> bool:
    """Whether `text` holds a call in one of these syntaxes."""
    return any(mark in text and next(calls(text), None) is not None for mark, calls in _NATIVE)


def as_blocks(text: str) -> str:
    """`text` with each Harmony, DeepSeek and Kimi call rewritten as a ``<tool_call>`` block."""
    for mark, calls in _NATIVE:
        if mark in text:
            parts: list[str] = []
            pos = 0
            for start, end, name, arguments in calls(text):
                parts += [text[pos:start], _block(name, arguments)]
                pos = end
            parts.append(text[pos:])
            text = "".join(parts)
            for wrapper in _WRAPPERS:
                text = text.replace(wrapper, "")
    return text


def _block(name: str, arguments: str) -> str:
    return f'{OPEN}{{"name": "{name}", "arguments": {arguments.strip() or "{}"}}}{CLOSE}'
