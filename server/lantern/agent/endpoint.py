"""Which model to talk to: the configured one, or the Ollama server already running.

No useful model can ship inside Lantern, so with nothing configured we look
for the model server a user most often runs locally: Ollama at its default
address (or `OLLAMA_HOST`). The probe is one HTTP request with a short
timeout, so a machine without Ollama loses a few hundred milliseconds at most.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from lantern.config import Settings

OLLAMA_DEFAULT = "127.0.0.1:11434"
PROBE_TIMEOUT = 0.3

HOW_TO_CONFIGURE = """\
no model is configured. Point Lantern at an OpenAI-compatible endpoint:
  OpenAI:  LANTERN_API_KEY=sk-… lantern ask "…" --model gpt-4o-mini
  Ollama:  ollama pull qwen2.5-coder
           lantern ask "…" --base-url http://localhost:11434/v1 --model qwen2.5-coder
  Others (vLLM, llama.cpp, LM Studio, DeepSeek): --base-url URL --model NAME [--api-key KEY]
The same settings can live in config.toml (`lantern doctor` shows where)
or in LANTERN_MODEL / LANTERN_BASE_URL / LANTERN_API_KEY."""


class EndpointError(Exception):
    """No usable model; the message says how to configure one."""


@dataclass(frozen=True)
class Endpoint:
    model: str
    base_url: str | None
    api_key: str | None
    note: str | None = None  # said on stderr when we chose for the user


def ollama_base_url(environ: Mapping[str, str]) -> str:
    host = environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT
    if not host.startswith(("http://", "https://")):
        host = "http://" + host
    return host.rstrip("/") + "/v1"


def list_models(base_url: str, api_key: str | None = None, timeout: float = 3.0) -> list[str]:
    """GET {base_url}/models; raises OSError/ValueError when the endpoint does not answer."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = json.loads(response.read(1 << 20))
    return [str(m["id"]) for m in data.get("data", []) if isinstance(m, dict) and "id" in m]


def resolve_endpoint(settings: Settings, environ: Mapping[str, str] | None = None) -> Endpoint:
    env = os.environ if environ is None else environ
    if settings.model:
        return Endpoint(settings.model, settings.base_url, settings.api_key)
    if settings.base_url or settings.api_key:
        raise EndpointError(
            "no model is set; name one with --model, LANTERN_MODEL or `model` in config.toml "
            "(`lantern doctor` lists the models your endpoint offers)"
        )
    base_url = ollama_base_url(env)
    try:
        models = list_models(base_url, timeout=PROBE_TIMEOUT)
    except (OSError, ValueError, urllib.error.URLError):
        raise EndpointError(HOW_TO_CONFIGURE) from None
    if not models:
        raise EndpointError(
            "Ollama is running but has no models; `ollama pull qwen2.5-coder` and try again"
        )
    return Endpoint(
        models[0],
        base_url,
        None,
        note=f"no model configured; using Ollama at {base_url} with its first model {models[0]!r}",
    )
