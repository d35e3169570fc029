"""Which models there are: the configured endpoint's (`lantern/models`) and those of the
model servers running on this machine (`lantern/localServers`).

Both are `GET …/models`, and neither follows a redirect. The configured endpoint is
asked with the configured key and headers (as `lantern doctor` does), through
`endpoint.list_models` in a small thread pool of its own (urllib blocks); a local
server is probed with neither: it is an address Lantern guessed, so nothing secret
goes there. Probes run in parallel on the event loop (`Prober`, no thread), and each
ends at its timeout, a server that sends a byte at a time included: nothing of a probe
outlives it, and neither kind of request ever waits in, or holds up, the default
thread pool that every file read uses. Every address leaves the process in public
form (no userinfo, no query).
"""

from __future__ import annotations

import asyncio
import functools
import urllib.error
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lantern.agent.failure import Detail, ErrorKind, Fix, ModelError
from lantern.agent.provider.diagnose import Prober, fixed_url
from lantern.agent.provider.endpoint import OPENAI, list_models, ollama_base_url
from lantern.agent.provider.secrets_out import Secrets
from lantern.escaping import cap, escape_line, public_url
from lantern.settings.sources import Settings
from lantern.shapes import OPTIONAL, wire

LOCAL_TIMEOUT = 1.5  # one local probe
LIST_TIMEOUT = 5.0  # the configured endpoint's list (it may be remote)
#: The configured endpoint's list requests: a slow one waits here, never in the default
#: pool (file reads).
_LISTING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lantern-models")
LOCAL_SERVERS = (
    ("LM Studio", "http://127.0.0.1:1234/v1"),
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
    ("vLLM", "http://127.0.0.1:8000/v1"),
)


_PUBLIC = wire(sent_as=public_url)


@dataclass(frozen=True)
class LocalServer:
    """A `lantern/localServers` item; the address is sent in public form."""

    name: str
    base_url: str = field(metadata=_PUBLIC)
    models: list[str]


def local_candidates(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """Where a local model server usually listens: Ollama (`OLLAMA_HOST` or its default),
    LM Studio, llama.cpp's server and vLLM, at their default ports."""
    return [("Ollama", ollama_base_url(environ)), *LOCAL_SERVERS]


async def probe_local_servers(
    candidates: Sequence[tuple[str, str]], timeout: float = LOCAL_TIMEOUT
) -> list[LocalServer]:
    """The candidates that answer with a model list, in the order given; no key is sent."""

    async def probe(name: str, base_url: str) -> LocalServer | None:
        try:
            async with asyncio.timeout(timeout * 2):  # ends the request, whatever it does
                models = await Prober(None, {}, timeout).models(base_url)
        except Exception:  # refused, timed out: not a server to offer
            return None
        return None if models is None else LocalServer(name, base_url, models)

    urls: dict[str, str] = {}  # one probe per address (OLLAMA_HOST may name another's)
    for name, url in candidates:
        urls.setdefault(url, name)
    found = await asyncio.gather(*(probe(name, url) for url, name in urls.items()))
    return [server for server in found if server is not None]


@dataclass(frozen=True)
class ModelList:
    """The configured endpoint's models, or why there are none (`detail`)."""

    base_url: str = field(metadata=_PUBLIC)
    models: list[str]
    detail: Detail | None = field(default=None, metadata=OPTIONAL)


def configured_base_url(settings: Settings, environ: Mapping[str, str]) -> str:
    """The base URL the settings resolve to: `baseUrl`; OpenAI's with a key or a model and
    no `baseUrl`; with none of them set, Ollama's address (where Lantern looks first)."""
    if settings.base_url:
        return settings.base_url
    if settings.api_key or settings.model:
        return OPENAI
    return ollama_base_url(environ)


async def endpoint_models(
    settings: Settings, environ: Mapping[str, str], timeout: float = LIST_TIMEOUT
) -> ModelList:
    """`GET …/models` at the configured endpoint with its key and headers."""
    base_url = configured_base_url(settings, environ)
    secrets = Secrets.of(api_key=settings.api_key, base_url=base_url, headers=settings.headers)
    ask = functools.partial(list_models, base_url, settings.api_key, timeout, settings.headers)
    try:
        models = await asyncio.wait_for(
            asyncio.get_running_loop().run_in_executor(_LISTING, ask), timeout * 2
        )
    except Exception as exc:
        return ModelList(base_url, [], secrets.error(list_failure(exc, base_url)).detail())
    return ModelList(base_url, [secrets.scrub(name) for name in models])


def list_failure(exc: BaseException, base_url: str) -> ModelError:
    """Why a model list request failed, with the setting to change (never a flag)."""
    shown = public_url(base_url)
    kind: ErrorKind
    status = None
    fixes: tuple[Fix, ...] = (Fix("baseUrl"),)
    if isinstance(exc, urllib.error.HTTPError):
        status = exc.code
        words = escape_line(cap(str(exc.reason), 200))
        if 300 <= exc.code < 400:
            kind = "redirected"
            summary = (
                f"{shown} answered with a redirect ({exc.code}), which Lantern does not "
                "follow (only a 307 or 308 on the same origin)"
            )
            fixes = (Fix("baseUrl", note="use the address it redirects to"),)
        elif exc.code in (401, 403):
            kind, summary = "auth", f"{shown} refused the request for its models ({exc.code})"
            fixes = (Fix("apiKey"), Fix("headers", note="if the server needs other headers"))
        elif exc.code == 404:
            kind, summary = "wrong_url", f"{shown} has no model list (404)"
            fixed = fixed_url(base_url)
            if fixed is not None:
                fixes = (Fix("baseUrl", public_url(fixed, keep=("api-version",))),)
        else:
            kind, summary = "server", f"{shown} answered {exc.code} to the request for its models"
    elif isinstance(exc, ValueError):
        kind, summary, words = "not_api", f"{shown} did not answer with a model list", ""
    else:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        kind, summary = "unreachable", f"nothing answers at {shown}"
        words = escape_line(cap(str(reason) or type(exc).__name__, 200))
    return ModelError(kind, summary, words=words, status=status, fixes=fixes)
