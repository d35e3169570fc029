"""The openai SDK's HTTP layer, adjusted to what real endpoints send.

- `mark_final_errors` applies the retry table (docs/endpoints.md#retries) to the
  SDK's own retries: an error that would fail the same way again (no credit, out of
  memory, context too long, no tool support) gets `x-should-retry: false`.
- `build_client` makes the SDK client: only a 307 or 308 to the endpoint's own
  origin is followed (`redirects.py`; a POST redirected by 301/302 arrives as a GET
  without its body, and the model would be blamed), a query in the base URL
  (Azure's `api-version`) is sent with every request, and the `headers` setting is
  added (Azure's `api-key`).
- The streamed reply itself is read from the raw response by `agent/provider/sse.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx2
import openai

from lantern.agent.failure import ModelError
from lantern.agent.provider import error_body
from lantern.agent.provider.redirects import MAX_HOPS, followed


async def mark_final_errors(response: httpx2.Response) -> None:
    """Tell the SDK not to retry what the retry table says cannot succeed.

    llama.cpp without --jinja answers 500 "tools param requires --jinja flag", Ollama
    500 "model requires more system memory" (each try reloads the model), OpenAI 429
    `insufficient_quota`: the same request would fail the same way after the back-off.
    """
    status = response.status_code
    if (status < 500 and status not in (408, 409, 429)) or "x-should-retry" in response.headers:
        return
    try:
        body = (await response.aread())[:20_000].decode("utf-8", errors="replace")
    except httpx2.HTTPError:
        return
    if not error_body.should_retry(status, body):
        response.headers["x-should-retry"] = "false"


def split_base_url(base_url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query, and the query's parameters (kept for every request)."""
    parts = urlsplit(base_url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), query


class SameOriginRedirects(openai.DefaultAsyncHttpxClient):
    """The SDK's HTTP client, following only `redirects.followed` redirects (never httpx's own
    following): the request is sent again as it was, headers and body included."""

    async def send(
        self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any
    ) -> httpx2.Response:
        kwargs["follow_redirects"] = False
        response = await super().send(request, stream=stream, **kwargs)
        for _ in range(MAX_HOPS):
            target = followed(
                str(request.url), response.status_code, response.headers.get("location")
            )
            if target is None:
                break
            try:
                body = request.content
            except httpx2.RequestNotRead:  # a streamed body cannot be sent twice
                break
            await response.aclose()
            request = httpx2.Request(
                request.method,
                target,
                headers=request.headers,
                content=body,
                extensions=request.extensions,
            )
            response = await super().send(request, stream=stream, **kwargs)
        return response


def build_client(
    *,
    base_url: str,
    api_key: str | None,
    headers: Mapping[str, str],
    timeout: float,
    max_retries: int,
) -> openai.AsyncOpenAI:
    bare, query = split_base_url(base_url)
    return openai.AsyncOpenAI(
        base_url=bare,
        # Local servers (Ollama, llama.cpp) need no key, but the SDK wants a string.
        api_key=api_key or "not-needed",
        timeout=openai.Timeout(timeout, connect=min(10.0, timeout)),
        max_retries=max_retries,
        default_headers=dict(headers),
        default_query=query or None,
        http_client=SameOriginRedirects(
            event_hooks={"response": [mark_final_errors]}, follow_redirects=False
        ),
    )


def request_headers(api_key: str | None, headers: Mapping[str, str]) -> dict[str, Any]:
    """Headers for each request: with the credential in the `headers` setting (Azure's
    `api-key`) and no API key, no made-up bearer token is sent beside it."""
    if api_key is not None or any(name.lower() == "authorization" for name in headers):
        return {}  # the key, or the setting's own Authorization (default headers win)
    return {"Authorization": openai.omit} if headers else {}


def content_type(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").lower()


async def read_body(response: httpx2.Response, limit: int = 1 << 20) -> str:
    raw = await response.aread()
    return raw[:limit].decode("utf-8", errors="replace")


async def read_json(response: httpx2.Response, hide: Callable[[str], str] = str) -> Any:
    """The reply's JSON; else a `not_api` failure with its words (`hide` hides credentials
    in the text before the words, which are cut short, are taken)."""
    text = await read_body(response)
    try:
        return json.loads(text)
    except ValueError:
        words = error_body.describe(hide(text))
        raise ModelError(
            "not_api", "the endpoint's reply was not the API's JSON", words=words
        ) from None
