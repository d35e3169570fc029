"""`lantern doctor`'s context window: the line every report has, the check `--probe` makes.

The window is found as a question finds it (`agent/provider/window.py`). The probe
asks again after its round trip, when the model is loaded and Ollama or LM Studio can
say the window it runs with, and sets it against what every request spends before
the question: Lantern's system prompt and tool definitions (`fixed_cost_tokens`). A
window that cannot hold them fails the probe; one that leaves less than `ROOM` tokens
for the question, the files read and the answer is called small. Fixes are worded as
settings and server options, never as `lantern ask` flags.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import cast

from lantern.agent.context import fixed_cost_tokens
from lantern.agent.failure import EndpointError, Fix
from lantern.agent.provider.classify import Server, server_knob
from lantern.agent.provider.endpoint import OPENAI, Endpoint, resolve_endpoint
from lantern.agent.provider.window import (
    ContextWindow,
    context_window,
    server_of,
)
from lantern.cli.doctor_address import LABEL
from lantern.settings.sources import Settings

#: Below this, after the system prompt and tools, a code question soon runs out of room.
ROOM = 8192
_KNOBS = ("ollama", "llama.cpp", "vllm", "lmstudio")  # servers whose window is an option
_SOURCES = {"Ollama": "ollama", "llama.cpp": "llama.cpp", "vLLM": "vllm", "LM Studio": "lmstudio"}
_NAMED = re.compile("(" + "|".join(map(re.escape, _SOURCES)) + ")")


def window_line(settings: Settings, environ: Mapping[str, str]) -> str:
    """What the report's `Context window:` line says."""
    try:
        endpoint = resolve_endpoint(settings, environ)
    except EndpointError:
        return "unknown until a model is set"
    return asyncio.run(context_window(endpoint, settings, environ)).describe()


async def check_window(
    endpoint: Endpoint, settings: Settings, environ: Mapping[str, str]
) -> tuple[list[str], bool]:
    """The probe's lines on the window, and False when no question can fit in it."""
    window = await context_window(endpoint, settings, environ, fresh=True)
    fixed = await asyncio.to_thread(fixed_cost_tokens)
    lines = [
        LABEL.format("context window:")
        + f"{window.describe()}; Lantern's system prompt and tools take about {fixed:,}"
    ]
    room = window.tokens - fixed
    if room >= ROOM:
        return lines, True
    if room <= 0:
        lines.append(
            LABEL.format("FAILED:") + "the window cannot hold Lantern's system prompt and tool "
            "definitions: no question fits"
        )
    else:
        lines.append(
            LABEL.format("warning:") + f"small for Lantern: {room:,} tokens are left for the "
            "question, the files read and the answer (code questions want 16,384 or more)"
        )
    for fix in _fixes(window, server_of(endpoint.base_url or OPENAI, environ)):
        lines.append("    " + f"{'fix:':<14}" + fix.editor_text())
    return lines, room > 0


def _fixes(window: ContextWindow, server: str) -> list[Fix]:
    """The server's own option first: the server the address tells, else the one the
    window's source names (a vLLM or llama.cpp found behind another address)."""
    named = _NAMED.match(window.source.removeprefix("default: "))
    knob = server if server in _KNOBS else _SOURCES[named[1]] if named else None
    found = server_knob(cast(Server, knob)) if knob else None
    fixes = [found] if found else []
    fixes.append(Fix("model", note="a model with a longer context window"))
    if window.kind == "setting":
        fixes.append(
            Fix("maxContextTokens", note="Lantern takes it as the window: raise it if your "
                "server's is larger")
        )  # fmt: skip
    elif window.kind != "server":
        fixes.append(
            Fix("maxContextTokens", note="set it to your server's window if it is larger "
                "than Lantern found")
        )  # fmt: skip
    return fixes
