"""Diagnose the URL, not the model: what the endpoint itself says when asked once more.

A chat request that finds no route (404 "404 page not found" from Ollama's
router, FastAPI's `{"detail":"Not Found"}`, LM Studio's 200 "Unexpected
endpoint or method") is usually a base URL without `/v1`. One cheap probe
tells: the model list at the fixed URL (`GET …/v1/models`), or Ollama's own
list (`GET /api/tags`) at the server's root. A missing model gets the models
the endpoint has. At most two small GETs, only after a failure; nothing from
any workspace is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx2

from lantern.agent.failure import Fix, ModelError
from lantern.escaping import escape_line, public_url

PROBE_TIMEOUT = 3.0
_MAX_BODY = 1 << 20


def with_path(base_url: str, path: str) -> str:
    """`base_url` with `path` appended to its path; its query (Azure's api-version) kept."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


def origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def fixed_url(base_url: str) -> str | None:
    """The base URL people most likely meant: `/v1` added (or put in place of Ollama's
    `/api`), a pasted `/chat/completions` taken off; None when it looks right."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    elif path in ("", "/api"):
        path = "/v1"
    elif not re.search(r"/v\d+(beta\d*)?(/|$)|/openai(/|$)", path):
        path += "/v1"
    fixed = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    return None if fixed.rstrip("/") == base_url.rstrip("/") else fixed


def model_ids(data: Any) -> list[str] | None:
    """The models in an OpenAI list (`{"data": [{"id"}]}`) or Ollama's (`{"models":
    [{"name"}]}`); None when the body is neither (an error, a web page)."""
    if not isinstance(data, dict):
        return None
    for key, name in (("data", "id"), ("models", "name")):
        items = data.get(key)
        if isinstance(items, list):
            # Names from the endpoint are outside text: escaped before anyone shows them.
            return [escape_line(str(m[name])) for m in items if isinstance(m, dict) and name in m]
    return None


@dataclass
class Prober:
    """A few GETs (and Ollama's `/api/show`) with the client's credentials and a short timeout."""

    api_key: str | None
    headers: Mapping[str, str]
    timeout: float = PROBE_TIMEOUT

    def _headers(self) -> dict[str, str]:
        sent = dict(self.headers)
        if self.api_key:
            sent.setdefault("Authorization", f"Bearer {self.api_key}")
        return sent

    async def json(self, url: str, body: Any = None, *, limit: int = _MAX_BODY) -> Any:
        """The JSON a URL answers with 200 (POSTed `body` when given), or None (any
        failure, any other answer, more than `limit` bytes)."""
        try:
            async with (
                httpx2.AsyncClient(
                    timeout=self.timeout, follow_redirects=False, headers=self._headers()
                ) as http,
                http.stream("GET" if body is None else "POST", url, json=body) as response,
            ):
                if response.status_code != 200:
                    return None
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > limit:  # read no further than the bound
                        return None
                return json.loads(data)
        except (httpx2.HTTPError, ValueError, OSError):
            return None

    async def models(self, base_url: str) -> list[str] | None:
        return model_ids(await self.json(with_path(base_url, "/models")))

    async def ollama_models(self, base_url: str) -> list[str] | None:
        return model_ids(await self.json(origin(base_url) + "/api/tags"))


def _model_fix(model: str, models: list[str] | None) -> tuple[Fix, ...]:
    if models is None or model in models:
        return ()
    return (Fix("model", choices=tuple(models), note=f"{model!r} is not among them"),)


async def diagnose(error: ModelError, base_url: str, model: str, prober: Prober) -> ModelError:
    """A `not_found` failure explained: the base URL to use instead, or the models there are."""
    if any(f.setting == "model" for f in error.fixes):  # the server said the model is missing
        models = await prober.models(base_url)
        if models is None:
            models = await prober.ollama_models(base_url)
        if not models:
            return error
        return ModelError(
            "not_found", error.summary, words=error.words, status=error.status,
            fixes=(Fix("model", choices=tuple(models)),),
        )  # fmt: skip
    fixed = fixed_url(base_url)
    if fixed is not None:
        models = await prober.models(fixed)
        if models is not None:
            return _wrong_url(error, base_url, fixed, _model_fix(model, models))
    tags = await prober.ollama_models(base_url)
    if tags is not None:
        ollama = origin(base_url) + "/v1"
        if ollama.rstrip("/") != base_url.rstrip("/"):
            return _wrong_url(error, base_url, ollama, _model_fix(model, tags), "Ollama")
        models = tags
    elif fixed is None:
        models = await prober.models(base_url)
    else:
        models = None
    if models:
        return error.with_fixes(*_model_fix(model, models))
    return error


def _wrong_url(
    error: ModelError, base_url: str, fixed: str, more: tuple[Fix, ...], who: str = "the API"
) -> ModelError:
    # Both URLs are shown without userinfo or query (a key may be there); the value to set
    # keeps only Azure's api-version, and the note asks to keep the rest.
    said = f" ({error.status})" if error.status else ""
    value = public_url(fixed, keep=("api-version",))
    note = f"{who} answers there"
    parts = urlsplit(fixed)
    if "@" in parts.netloc or any(k != "api-version" for k, _ in parse_qsl(parts.query, True)):
        note += "; keep the query and credentials your base URL has"
    return ModelError(
        "wrong_url",
        f"nothing answers chat requests at {public_url(base_url)}{said}, "
        f"but {who} answers at {public_url(fixed)}",
        words=error.words,
        status=error.status,
        fixes=(Fix("baseUrl", value, note=note), *more),
    )
