"""The openai SDK's HTTP layer, adjusted to what real endpoints send.

- `ErrorFieldDecoder` reads llama.cpp's `error:` SSE line and a named `event: error`
  as the error they are, and notes whether `data: [DONE]` was read.
- `mark_final_errors` applies the retry table (docs/endpoints.md#retries) to the
  SDK's own retries: an error that would fail the same way again (no credit, out of
  memory, context too long, no tool support) gets `x-should-retry: false`.
- `build_client` makes the SDK client: redirects are never followed (a POST
  redirected by 301/302 arrives as a GET without its body, and the model would be
  blamed), a query in the base URL (Azure's `api-version`) is sent with every
  request, and the `headers` setting is added (Azure's `api-key`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx2
import openai
from openai._streaming import ServerSentEvent, SSEDecoder

from lantern.agent import provider_errors
from lantern.agent.failure import ModelError


class ErrorFieldDecoder(SSEDecoder):
    """Reads llama.cpp's `error: {...}` SSE line as an error event.

    Some llama.cpp builds write a failure after the 200 header (the prompt
    exceeding the context size) as an `error:` field, which SSE readers
    ignore; the provider's words would be lost and the doomed request sent
    again. It is turned into the `data: {"error": ...}` form the SDK raises.

    Likewise a server that names the event (`event: error`) and sends the error
    object bare in its `data:` line: the SDK would read it as a chunk and drop it.
    """

    _in_error_event = False
    done = False  # `data: [DONE]` was read: the server says the reply is complete

    def decode(self, line: str) -> ServerSentEvent | None:
        if not line:
            self._in_error_event = False
        elif line.startswith("data:") and line[5:].strip() == "[DONE]":
            self.done = True
        elif line.startswith("event:"):
            self._in_error_event = line[len("event:") :].strip() == "error"
        elif line.startswith("error:") or (self._in_error_event and line.startswith("data:")):
            value = line.partition(":")[2].strip()
            try:
                error: Any = json.loads(value)
            except ValueError:
                error = value
            error = error.get("error", error) if isinstance(error, dict) else error
            line = "data: " + json.dumps({"error": error or "the server reported an error"})
        return super().decode(line)


class _OpenAI(openai.AsyncOpenAI):
    def _make_sse_decoder(self) -> SSEDecoder:
        return ErrorFieldDecoder()


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
    if not provider_errors.should_retry(status, body):
        response.headers["x-should-retry"] = "false"


def split_base_url(base_url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query, and the query's parameters (kept for every request)."""
    parts = urlsplit(base_url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), query


def build_client(
    *,
    base_url: str,
    api_key: str | None,
    headers: Mapping[str, str],
    timeout: float,
    max_retries: int,
) -> openai.AsyncOpenAI:
    bare, query = split_base_url(base_url)
    return _OpenAI(
        base_url=bare,
        # Local servers (Ollama, llama.cpp) need no key, but the SDK wants a string.
        api_key=api_key or "not-needed",
        timeout=openai.Timeout(timeout, connect=min(10.0, timeout)),
        max_retries=max_retries,
        default_headers=dict(headers),
        default_query=query or None,
        http_client=openai.DefaultAsyncHttpxClient(
            event_hooks={"response": [mark_final_errors]}, follow_redirects=False
        ),
    )


def request_headers(api_key: str | None, headers: Mapping[str, str]) -> dict[str, Any]:
    """Headers for each request: with the credential in the `headers` setting (Azure's
    `api-key`) and no API key, no made-up bearer token is sent beside it."""
    return {"Authorization": openai.omit} if api_key is None and headers else {}


def said_done(stream: Any) -> bool:
    """Whether the stream's SSE reader read `data: [DONE]`."""
    decoder = getattr(stream, "_decoder", None)
    return isinstance(decoder, ErrorFieldDecoder) and decoder.done


def content_type(stream: Any) -> str:
    response = getattr(stream, "response", None)
    kind = response.headers.get("content-type", "") if response is not None else ""
    return kind.lower() if isinstance(kind, str) else ""


async def read_body(stream: Any, limit: int = 1 << 20) -> str:
    raw = await stream.response.aread()
    return str(raw[:limit].decode("utf-8", errors="replace"))


async def read_json(stream: Any) -> Any:
    text = await read_body(stream)
    try:
        return json.loads(text)
    except ValueError:
        words = provider_errors.describe(text)
        raise ModelError(
            "not_api", "the endpoint's reply was not the API's JSON", words=words
        ) from None
