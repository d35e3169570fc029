"""The context window a conversation must fit, and how full it is.

Every request is system prompt + tool definitions + project instructions +
history, and must leave room for the reply (`reserve`) inside the window the
endpoint runs with (`provider.window`: what the server reports, the
`maxContextTokens` setting, a table of model families, or a default — and
which one, always said).

Sizes are estimated (`tokens.message_tokens`: characters / 4) and calibrated
by the server's own count: after each request the endpoint answered with real
usage, the conversation keeps the ratio of its `prompt_tokens` to the estimate
of what was sent, so the next estimate is in the server's tokens. A request the
server cut (it counted far fewer tokens than were sent) does not calibrate.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from lantern.agent.conversation import Conversation
from lantern.agent.events import ContextFill
from lantern.agent.prompts import system_prompt
from lantern.agent.protocol.seam import TextProtocol
from lantern.agent.provider.window import ContextWindow
from lantern.agent.reply import Fix, ModelError, Usage
from lantern.agent.tokens import CHARS_PER_TOKEN, estimate_tokens, message_tokens
from lantern.tools.registry import TOOLS, tool_specs
from lantern.workspace.roots import Workspace

#: What the server counts per estimated token is taken within these bounds: a count
#: outside them is more likely a server's quirk than a tokenizer.
_RATIO_BOUNDS = (0.5, 3.0)


def reply_reserve(window: int, max_output_tokens: int | None) -> int:
    """The tokens kept free for the reply: `maxOutputTokens` when set (at most half the
    window), else an eighth of the window between 256 and 4,096."""
    if max_output_tokens:
        return min(max_output_tokens, window // 2)
    return max(256, min(4096, window // 8))


def tools_tokens(tools: Sequence[Mapping[str, Any]] | None) -> int:
    """The estimate of the tool definitions a request sends (Lantern's own: counted once)."""
    if not tools:
        return 0
    if tools is tool_specs():
        return _specs_tokens()
    return estimate_tokens(json.dumps(list(tools), ensure_ascii=False))


@functools.cache
def _specs_tokens() -> int:
    return estimate_tokens(json.dumps(list(tool_specs()), ensure_ascii=False))


class Meter:
    """One conversation's requests measured against its window."""

    def __init__(
        self, window: ContextWindow, conv: Conversation, max_output_tokens: int | None
    ) -> None:
        self.window, self.conv = window, conv
        self.reserve = reply_reserve(window.tokens, max_output_tokens)
        self._sent = 0  # the estimate (uncalibrated) of the last request sent
        self.used = 0  # what the last request and its reply took, in the server's tokens

    @property
    def room(self) -> int:
        """The tokens a request may take: the window less the reply's reserve."""
        return self.window.tokens - self.reserve

    def estimate(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = ()
    ) -> int:
        """`messages` and `tools` in the server's tokens, as far as the calibration knows."""
        return math.ceil(self.raw(messages, tools) * self.conv.token_ratio)

    @staticmethod
    def raw(
        messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = ()
    ) -> int:
        return message_tokens(messages) + tools_tokens(tools)

    def sending(self, messages: Sequence[Mapping[str, Any]], tools: Any) -> None:
        self._sent = self.raw(messages, tools)
        self.used = math.ceil(self._sent * self.conv.token_ratio)

    def answered(self, usage: Usage | None, *, cut: bool) -> None:
        """The server's count of the last request: the meter, and the calibration."""
        if usage is None:
            return
        if usage.estimated or cut or self._sent <= 0 or usage.prompt_tokens <= 0:
            self.used = self.estimate_used(usage)
            return
        low, high = _RATIO_BOUNDS
        self.conv.token_ratio = min(max(usage.prompt_tokens / self._sent, low), high)
        self.used = usage.prompt_tokens + usage.completion_tokens

    def estimate_used(self, usage: Usage) -> int:
        return max(self.used, usage.prompt_tokens) + usage.completion_tokens

    def fill(self) -> ContextFill:
        return ContextFill(self.used, self.window.tokens, self.window.source)


def window_too_small(window: ContextWindow, fixed: int, reserve: int) -> ModelError:
    """The window cannot hold even Lantern's instructions and tools: said before the model
    is asked anything, with the ways to a bigger window."""
    return ModelError(
        "context_length",
        f"the model's context window ({window.tokens:,} tokens; {window.source}) is too small "
        f"for Lantern: its instructions and tools take about {fixed:,} tokens and the reply "
        f"needs {reserve:,}, before any question",
        fixes=(
            Fix(
                note="raise the model server's context window (Ollama: OLLAMA_CONTEXT_LENGTH "
                "or the app's context length slider; llama.cpp: its context size; vLLM: its "
                "max model length)"
            ),
            Fix(note="use a model with a longer context window"),
            Fix("maxContextTokens", note="set it to the window the server really runs with"),
        ),
    )


_CUT_NOTE = (
    "\n[Lantern] Cut to fit the model's context window: {shown:,} of {total:,} characters "
    "shown. To see the rest, ask for less at a time: {narrow}."
)


def fit_share(content: str, tokens: int, ratio: float, tool: str) -> str:
    """`content` within `tokens` (the server's tokens, `ratio` per estimated one), cut at
    a line's end where it can be, with a note that tells the model how to narrow."""
    chars = int(tokens / ratio) * CHARS_PER_TOKEN
    if len(content) <= chars:
        return content
    cut = content.rfind("\n", 0, chars)
    kept = content[: cut if cut > chars // 2 else chars]
    narrow = TOOLS[tool].narrow if tool in TOOLS else "make the call narrower"
    return kept + _CUT_NOTE.format(shown=len(kept), total=len(content), narrow=narrow)


def fixed_cost_tokens(workspace: Workspace | None = None) -> int:
    """The tokens every request spends before the question: Lantern's system prompt and
    its tool definitions, in whichever tool protocol costs more (Lantern's token
    estimate). Without a workspace: an empty folder's, the least any question sends.
    Blocking (the system prompt lists the folder): from async code, run it in a thread."""
    if workspace is None:
        with tempfile.TemporaryDirectory() as empty:
            return fixed_cost_tokens(Workspace([empty]))
    base, specs = system_prompt(workspace), tool_specs()
    native = message_tokens([{"role": "system", "content": base}])
    native += estimate_tokens(json.dumps(specs, ensure_ascii=False))
    text = message_tokens([{"role": "system", "content": TextProtocol(specs).system_prompt(base)}])
    return max(native, text)
