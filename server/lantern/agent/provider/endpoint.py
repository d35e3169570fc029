"""Which model to talk to: the configured one, or the Ollama server already running.

No useful model can ship inside Lantern, so with nothing configured we look
for the model server a user most often runs locally: Ollama at its default
address (or `OLLAMA_HOST`). The probe is one HTTP request with a short
timeout, so a machine without Ollama loses a few hundred milliseconds at most.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO
from urllib.parse import unquote

from lantern.agent.failure import EndpointError, Fix, shown
from lantern.agent.provider.diagnose import model_ids, with_path
from lantern.agent.provider.key_header import credentials
from lantern.agent.provider.redirects import MAX_HOPS, followed
from lantern.agent.provider.secrets_out import Secrets
from lantern.escaping import public_url, split_userinfo
from lantern.settings.sources import Settings

OLLAMA_DEFAULT = "127.0.0.1:11434"
PROBE_TIMEOUT = 0.3
LIST_TIMEOUT = 1.0  # only when no model is set: the models to choose from
OPENAI = "https://api.openai.com/v1"

# Printed by `lantern ask` as it is, line by line.
HOW_TO_CONFIGURE = """\
no model is configured. Point Lantern at an OpenAI-compatible endpoint:
  OpenAI:  LANTERN_API_KEY=sk-… lantern ask "…" --model gpt-4o-mini
  Ollama:  ollama pull qwen2.5-coder
           lantern ask "…" --base-url http://localhost:11434/v1 --model qwen2.5-coder
  Others (vLLM, llama.cpp, LM Studio, DeepSeek): --base-url URL --model NAME [--api-key KEY]
The same settings can live in config.toml (`lantern doctor` shows where)
or in LANTERN_MODEL / LANTERN_BASE_URL / LANTERN_API_KEY."""

# Shown in an editor: settings, never command-line flags.
HOW_TO_CONFIGURE_SETTINGS = (
    "No model is configured. Set `model` (e.g. gpt-4o-mini, with your OpenAI API key: "
    "`apiKey`, in VS Code Lantern: Set API Key), and `baseUrl` for any other "
    "OpenAI-compatible server (Ollama http://localhost:11434/v1, vLLM, llama.cpp, "
    "LM Studio). Or run Ollama on this machine with a model pulled (ollama pull "
    "qwen2.5-coder): Lantern then finds it by itself."
)


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_HOPS

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if followed(req.full_url, code, newurl) is None:
            return None  # the 3xx is then raised as an HTTPError
        return super().redirect_request(req, fp, code, msg, headers, newurl)


#: Follows only a 307 or 308 on the same origin (`redirects.py`): any other would carry
#: the key and the `headers` setting to another origin, or change the request.
NO_REDIRECTS = urllib.request.build_opener(_SameOrigin)


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


def list_models(
    base_url: str,
    api_key: str | None = None,
    timeout: float = 3.0,
    headers: Mapping[str, str] | None = None,
) -> list[str]:
    """GET {base_url}/models (its query kept); raises OSError/ValueError when the endpoint
    does not answer with a model list."""
    # urllib would take `user:password@host` for the host name (and ask DNS for it): the
    # userinfo goes as Basic credentials instead, as the model client's httpx sends it.
    api_key, headers = credentials(base_url, api_key, headers or {})
    userinfo, bare = split_userinfo(base_url)
    request = urllib.request.Request(with_path(bare, "/models"))
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    if userinfo:
        user, _, password = userinfo.partition(":")
        pair = f"{unquote(user)}:{unquote(password)}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(pair).decode())
    for name, value in headers.items():
        request.add_header(name, value)
    # Only a 307 or 308 on the same origin is followed: no key or header leaves it.
    try:
        with NO_REDIRECTS.open(request, timeout=timeout) as response:
            models = model_ids(json.loads(response.read(1 << 20)))
    except http.client.InvalidURL:  # its words quote the URL: a password's part, maybe
        raise ValueError(
            "the base URL is not a valid URL (a password with / ? # or @ in it "
            "must be percent-encoded)"
        ) from None
    if models is None:
        raise ValueError("the answer is not a model list")
    return models


def resolve_endpoint(settings: Settings, environ: Mapping[str, str] | None = None) -> Endpoint:
    env = os.environ if environ is None else environ
    if settings.model:
        return Endpoint(settings.model, settings.base_url, settings.api_key)
    if settings.base_url or settings.api_key:
        try:
            offered = tuple(
                list_models(settings.base_url or OPENAI, settings.api_key, timeout=LIST_TIMEOUT)
            )
        except (OSError, ValueError, urllib.error.URLError):
            offered = ()
        # Names from the endpoint: one that echoes a credential shows it hidden.
        secrets = Secrets.of(
            api_key=settings.api_key, base_url=settings.base_url, headers=settings.headers
        )
        offered = tuple(secrets.scrub(name) for name in offered)
        has = f"; the endpoint has: {shown(offered)}" if offered else ""
        raise EndpointError(
            f"no model is set: set `model` to one your endpoint offers{has}",
            cli="no model is set; name one with --model, LANTERN_MODEL or `model` in "
            f"config.toml{has or ' (`lantern doctor` lists the models your endpoint offers)'}",
            fixes=(Fix("model", choices=offered),),
        )
    base_url = ollama_base_url(env)
    try:
        models = list_models(base_url, timeout=PROBE_TIMEOUT)
    except (OSError, ValueError, urllib.error.URLError):
        raise EndpointError(
            HOW_TO_CONFIGURE_SETTINGS,
            cli=HOW_TO_CONFIGURE,
            fixes=(Fix("model"), Fix("baseUrl", note="for a server other than OpenAI")),
        ) from None
    if not models:
        raise EndpointError(
            "Ollama is running but has no models; `ollama pull qwen2.5-coder` and try again",
            fixes=(Fix(note="ollama pull qwen2.5-coder"),),
        )
    return Endpoint(
        models[0],
        base_url,
        None,
        note=f"no model configured; using Ollama at {public_url(base_url)} with its first "
        f"model {models[0]!r}",
    )
