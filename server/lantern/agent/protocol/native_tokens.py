"""Model-native tool-call tokens that reach the client as text, read as ``<tool_call>`` blocks.

A server without the right tool parser passes a model's own call syntax on in
``content``: gpt-oss "harmony" commentary-channel calls, DeepSeek's and Kimi's
call tokens. Each call is rewritten as the ``<tool_call>{"name", "arguments"}</tool_call>``
block that `text_words` parses, so one parser (and one set of errors) covers them.
The name is taken only from the explicit recipient; arguments are left as written.
"""

from __future__ import annotations

import re

OPEN, CLOSE = "<tool_call>", "</tool_call>"

# A gpt-oss (harmony) call passed through as text by a server without its parser:
# `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}
# <|call|>`, the recipient sometimes before the channel.
_HARMONY = "to=functions."
_HARMONY_CALL = re.compile(
    r"(?:<\|start\|>assistant\s*)?(?:<\|channel\|>commentary\s*)?to=functions\.([\w.-]+)\s*"
    r"(?:<\|channel\|>commentary\s*)?(?:<\|constrain\|>\s*)?(?:json\s*)?<\|message\|>"
    r"(.*?)(?:<\|call\|>|$)",
    re.S,
)
# DeepSeek V3 (`function<｜tool▁sep｜>NAME` + a ```json fence) and V3.1+ (`NAME<｜tool▁sep｜>{…}`)
# and Kimi K2 (`functions.NAME:0<|tool_call_argument_begin|>{…}`) calls leaked into content.
_DEEPSEEK = "<｜tool▁call▁begin｜>"
_DEEPSEEK_CALL = re.compile(
    r"<｜tool▁call▁begin｜>\s*(?:function\s*<｜tool▁sep｜>)?\s*([\w.-]+)\s*(?:<｜tool▁sep｜>)?"
    r"\s*(?:```(?:json)?\s*)?(.*?)\s*(?:```\s*)?<｜tool▁call▁end｜>",
    re.S,
)
_KIMI = "<|tool_call_begin|>"
_KIMI_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*(?:functions\.)?([\w-]+(?:\.[\w-]+)*?)(?::\d+)?\s*"
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
_NATIVE = ((_HARMONY, _HARMONY_CALL), (_DEEPSEEK, _DEEPSEEK_CALL), (_KIMI, _KIMI_CALL))


def has_calls(text: str) -> bool:
    """Whether `text` holds a call in one of these syntaxes."""
    return any(mark in text and call.search(text) is not None for mark, call in _NATIVE)


def as_blocks(text: str) -> str:
    """`text` with each Harmony, DeepSeek and Kimi call rewritten as a ``<tool_call>`` block."""
    for mark, pattern in _NATIVE:
        if mark in text:
            text = pattern.sub(
                lambda m: (
                    f'{OPEN}{{"name": "{m.group(1)}", "arguments": '
                    f"{m.group(2).strip() or '{}'}}}{CLOSE}"
                ),
                text,
            )
            for wrapper in _WRAPPERS:
                text = text.replace(wrapper, "")
    return text
