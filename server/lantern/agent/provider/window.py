"""The context window: how many tokens the model behind an endpoint takes, and who said so.

Where the number comes from, first found first (docs/endpoints.md#context-window):

1. the `maxContextTokens` setting, when the user sets it: they know their server;
2. the server itself, for the servers that say (`window_servers`: Ollama, llama.cpp,
   vLLM, LM Studio, OpenRouter, and any address whose model list names a window);
3. `KNOWN_FAMILIES`, a short table of hosted model families, for an endpoint that
   does not say (OpenAI, Azure, Mistral, DeepSeek, Gemini, Groq, …), never for a
   local server (its window is how it was started, not what the model was trained for);
4. `DEFAULT_WINDOW`.

`source` always says which, in words fit to show (`lantern doctor` prints them).
Discovery never raises and never holds a question up by more than a moment: each
request has `REQUEST_TIMEOUT`, the whole of it `DISCOVERY_TIMEOUT`. Requests go only to
the endpoint's own origin, with the headers the model client sends there, and follow no
redirect, so no key reaches another host. A server's answer is kept for the process,
per (server, base URL, model); no answer, or a model not loaded yet, is asked again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast
from urllib.parse import urlsplit

from lantern.agent.provider.classify import Server as ServerName
from lantern.agent.provider.classify import guess_server
from lantern.agent.provider.diagnose import Prober, origin
from lantern.agent.provider.endpoint import OPENAI, Endpoint, ollama_base_url
from lantern.agent.provider.window_servers import Found, Server, ask_server
from lantern.settings.sources import Settings

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_WINDOW",
    "KNOWN_FAMILIES",
    "ContextWindow",
    "context_window",
    "server_of",
]

#: The window assumed when nothing says otherwise: small enough for most servers.
DEFAULT_WINDOW = 8192
REQUEST_TIMEOUT = 1.0
DISCOVERY_TIMEOUT = 1.5
SETTING_SOURCE = "the maxContextTokens setting"
_KEPT = 32  # windows remembered per process

#: Well-known hosted model families and their windows, matched on the model id's longest
#: prefix (lowercased, after any `provider/`). From each provider's own documentation:
#: OpenAI's models as Azure OpenAI documents them (MicrosoftDocs/azure-ai-docs,
#: articles/ai-foundry/openai/includes/models-azure-direct-openai.md), Anthropic's models
#: overview, Google's Gemini model pages, Mistral's model cards, DeepSeek's pricing page,
#: Meta's Llama 3.1 and 3.3 model cards (as Groq serves them) and Qwen2.5's. Where a
#: provider documents a smaller input limit than the window, the input limit is taken.
KNOWN_FAMILIES: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 272_000,  # the input limit of its 400,000-token window
    "gpt-5-chat": 128_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gpt-3.5-turbo": 16_385,
    "gpt-35-turbo": 16_385,  # Azure's name for it
    "claude-": 200_000,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "mistral-large": 128_000,
    "deepseek-chat": 65_536,
    "deepseek-reasoner": 65_536,
    "llama-3.1": 131_072,
    "llama-3.3": 131_072,
    "qwen2.5": 32_768,
}

#: Hosts of APIs whose model list says nothing of windows: nothing is asked there.
_HOSTED = (
    "openai.com", "azure.com", "mistral.ai", "deepseek.com", "googleapis.com", "groq.com",
    "together.xyz", "together.ai", "anthropic.com", "fireworks.ai", "x.ai", "cohere.com",
    "cohere.ai", "perplexity.ai", "cerebras.ai", "deepinfra.com",
)  # fmt: skip
_LOCAL: tuple[Server, ...] = ("ollama", "llama.cpp", "vllm", "lmstudio")
_NAMES = {
    "ollama": "Ollama", "llama.cpp": "llama.cpp", "vllm": "vLLM", "lmstudio": "LM Studio",
    "openrouter": "OpenRouter",
}  # fmt: skip

WindowKind = Literal["setting", "server", "table", "default"]


@dataclass(frozen=True)
class ContextWindow:
    """A window in tokens and where it came from. `source` is shown to users as it is;
    `trained` is the model's own length when the server said it (a server may run it
    with less); `kind` is which rule gave it (see the module docstring)."""

    tokens: int
    source: str
    trained: int | None = None
    kind: WindowKind = field(kw_only=True)

    def describe(self) -> str:
        """`8,192 tokens (Ollama /api/ps: the loaded model; trained for 131,072)`."""
        trained = self.trained if self.trained and self.trained != self.tokens else None
        more = f"; trained for {trained:,}" if trained else ""
        return f"{self.tokens:,} tokens ({self.source}{more})"


_windows: OrderedDict[tuple[Server, str, str], ContextWindow] = OrderedDict()


async def context_window(
    endpoint: Endpoint, settings: Settings, environ: Mapping[str, str], *, fresh: bool = False
) -> ContextWindow:
    """The window of `endpoint`'s model; never raises. `fresh`: ask the server again
    (after a request has loaded the model, say) instead of using what it said before."""
    if settings.max_context_tokens is not None:
        return ContextWindow(settings.max_context_tokens, SETTING_SOURCE, kind="setting")
    base_url = endpoint.base_url or OPENAI
    try:
        server = server_of(base_url, environ)
    except ValueError:  # a host urllib cannot read (settings let few such through)
        return ContextWindow(DEFAULT_WINDOW, "default: the base URL cannot be read", kind="default")
    key = (server, base_url, endpoint.model)
    if not fresh and key in _windows:
        _windows.move_to_end(key)
        return _windows[key]
    prober = Prober(endpoint.api_key, settings.headers, timeout=REQUEST_TIMEOUT)
    try:
        async with asyncio.timeout(DISCOVERY_TIMEOUT):
            found = await ask_server(server, base_url, endpoint.model, prober)
    except TimeoutError:
        found = Found.nothing(f"{_NAMES.get(server, 'the endpoint')} did not answer in time")
    except Exception as exc:  # a bug here must not stop a question
        found = Found.nothing(f"the window could not be found ({type(exc).__name__})")
    window = _window(server, endpoint.model, found)
    if found.settled:
        _windows[key] = window
        while len(_windows) > _KEPT:
            _windows.popitem(last=False)
    return window


def _window(server: Server, model: str, found: Found) -> ContextWindow:
    """What the server said, else the table (not for a local server), else the default."""
    if found.tokens is not None:
        kind: WindowKind = "default" if found.default else "server"
        source = f"default: {found.source}" if found.default else found.source
        return ContextWindow(found.tokens, source, found.trained, kind=kind)
    if server not in _LOCAL:
        family = known_family(model)
        if family is not None:
            return ContextWindow(
                KNOWN_FAMILIES[family], f"known model family: {family}", kind="table"
            )
    tokens = min(DEFAULT_WINDOW, found.trained) if found.trained else DEFAULT_WINDOW
    why = found.source or "the endpoint reports no window"
    return ContextWindow(tokens, f"default: {why}", found.trained, kind="default")


def known_window(settings: Settings, model: str) -> ContextWindow:
    """The window without asking any server: the setting, else the table, else the default
    (for an agent made without a discovered window: tests, tools)."""
    if settings.max_context_tokens is not None:
        return ContextWindow(settings.max_context_tokens, SETTING_SOURCE, kind="setting")
    family = known_family(model)
    if family is not None:
        return ContextWindow(KNOWN_FAMILIES[family], f"known model family: {family}", kind="table")
    return ContextWindow(DEFAULT_WINDOW, "default: no window was looked up", kind="default")


def known_family(model: str) -> str | None:
    """The longest `KNOWN_FAMILIES` prefix of `model` (`openai/gpt-4o-mini` → `gpt-4o`)."""
    name = model.lower().rsplit("/", 1)[-1]
    matches = [family for family in KNOWN_FAMILIES if name.startswith(family)]
    return max(matches, key=len) if matches else None


def server_of(base_url: str, environ: Mapping[str, str]) -> Server:
    """Which server answers at `base_url`, as far as the address tells: Ollama's
    (`OLLAMA_HOST` as elsewhere), OpenRouter's, a hosted API's, or one to ask."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if "/openai/" in parts.path + "/":  # Azure's surfaces, on any host (a gateway too)
        return "hosted"
    if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
        return "openrouter"
    if origin(base_url) == origin(ollama_base_url(environ)):
        return "ollama"
    guessed: ServerName = guess_server(base_url)
    if guessed in _LOCAL:
        return cast(Server, guessed)
    if guessed in ("openai", "azure") or any(host == h or host.endswith("." + h) for h in _HOSTED):
        return "hosted"
    return "other"
