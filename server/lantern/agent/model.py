"""The model client: Chat Completions with tools, streamed, over any OpenAI-compatible URL.

Tool calls are assembled from stream deltas by index, so several calls in one
reply work. Usage is asked for in the stream (`stream_options`); an endpoint
that rejects the option is asked again without it, and one that sends no
usage is fine. Every failure becomes a `ModelError` whose message says what
to do about it. A stream that stalls or is cut is retried once, never hangs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import openai

log = logging.getLogger(__name__)

ErrorKind = Literal[
    "auth", "not_found", "unreachable", "rate_limited", "context_length", "timeout",
    "stream", "bad_request", "server",
]  # fmt: skip


class ModelError(Exception):
    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model wrote it


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage | None) -> None:
        if other is not None:
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _retry_after(exc: openai.APIStatusError) -> str:
    value = exc.response.headers.get("retry-after")
    return f"; retry after {value} s" if value else "; wait a little and try again"


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if isinstance(message, str):
            return message[:300]
    return str(exc.message)[:300]


def _is_context_error(exc: openai.APIStatusError) -> bool:
    text = f"{exc.code or ''} {_detail(exc)}".lower()
    return "context_length" in text or "maximum context" in text or "too many tokens" in text


class ModelClient:
    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        request_timeout: float = 120.0,
        max_retries: int = 2,
        stall_timeout: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.request_timeout = request_timeout
        # A stream that sends nothing for this long is treated as stalled.
        self.stall_timeout = stall_timeout or min(request_timeout, 60.0)
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            # Local servers (Ollama, llama.cpp) need no key, but the SDK wants a string.
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(request_timeout, connect=min(10.0, request_timeout)),
            max_retries=max_retries,
        )
        self._usage_option = True

    async def close(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        on_retry: Callable[[str], None] | None = None,
    ) -> Reply:
        """One model turn; a stream cut or stalled midway is tried once more."""
        try:
            async with asyncio.timeout(self.request_timeout):
                try:
                    return await self._stream(messages, tools, on_text)
                except ModelError as exc:
                    if exc.kind != "stream":
                        raise
                    log.warning("model stream failed (%s); retrying once", exc.message)
                    if on_retry is not None:
                        on_retry(exc.message)
                    return await self._stream(messages, tools, on_text)
        except TimeoutError:
            raise ModelError(
                "timeout",
                f"the model did not finish within {self.request_timeout:g} s "
                "(requestTimeoutSeconds)",
            ) from None

    async def _create(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None
    ) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(messages), "stream": True}
        if tools:
            kwargs["tools"] = list(tools)
        if self._usage_option:
            kwargs["stream_options"] = {"include_usage": True}
        try:
            return await self._client.chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if self._usage_option and "stream_options" in _detail(exc):
                log.info("endpoint rejects stream_options; asking without usage")
                self._usage_option = False
                return await self._create(messages, tools)
            raise

    async def _stream(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        on_text: Callable[[str], None],
    ) -> Reply:
        try:
            stream = await self._create(messages, tools)
        except openai.APIError as exc:
            raise self._translate(exc) from None
        reply = Reply()
        text: list[str] = []
        calls: dict[int, _Partial] = {}
        loop = asyncio.get_running_loop()
        try:
            # One watchdog for the whole stream, pushed back on every chunk.
            async with asyncio.timeout(self.stall_timeout) as watchdog:
                async for chunk in stream:
                    watchdog.reschedule(loop.time() + self.stall_timeout)
                    self._absorb(chunk, reply, text, calls, on_text)
        except openai.APIConnectionError as exc:  # the SDK wraps transport errors mid-stream
            raise ModelError(
                "stream", f"the model's stream broke off ({type(exc.__cause__ or exc).__name__})"
            ) from None
        except openai.APIError as exc:
            raise self._translate(exc) from None
        except TimeoutError:
            raise ModelError(
                "stream", f"the model's stream stalled for {self.stall_timeout:g} s"
            ) from None
        except Exception as exc:  # httpx transport errors surface raw mid-stream
            raise ModelError(
                "stream", f"the model's stream broke off ({type(exc).__name__})"
            ) from None
        finally:
            await stream.close()
        if reply.finish_reason is None:
            raise ModelError("stream", "the model's stream ended before the reply was complete")
        reply.content = "".join(text)
        reply.tool_calls = [
            ToolCall(p.id or f"call_{i}", p.name, "".join(p.arguments))
            for i, p in sorted(calls.items())
        ]
        return reply

    @staticmethod
    def _absorb(
        chunk: Any,
        reply: Reply,
        text: list[str],
        calls: dict[int, _Partial],
        on_text: Callable[[str], None],
    ) -> None:
        """Fold one stream chunk into the reply: text, tool-call pieces by index, usage."""
        if chunk.usage is not None:
            reply.usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is not None and delta.content:
                text.append(delta.content)
                on_text(delta.content)
            for tc in (delta.tool_calls if delta is not None else None) or ():
                part = calls.setdefault(tc.index, _Partial())
                if tc.id:
                    part.id = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        part.name += tc.function.name
                    if tc.function.arguments:
                        part.arguments.append(tc.function.arguments)
            if choice.finish_reason:
                reply.finish_reason = choice.finish_reason

    def _translate(self, exc: openai.APIError) -> ModelError:
        where = self.base_url
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(
                "timeout",
                f"no answer from {where} within {self.request_timeout:g} s (requestTimeoutSeconds)",
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(
                "unreachable",
                f"cannot reach the model endpoint {where}; is the server running and the "
                "URL right? (set it with --base-url or LANTERN_BASE_URL)",
            )
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return ModelError(
                "auth",
                f"{where} rejected the API key ({exc.status_code}); set the right one with "
                "--api-key, LANTERN_API_KEY or 'Lantern: Set API Key'",
            )
        if isinstance(exc, openai.NotFoundError):
            return ModelError(
                "not_found",
                f"model {self.model!r} was not found at {where} (404); pick another with "
                "--model or the 'model' setting (`lantern doctor` lists what the endpoint has)",
            )
        if isinstance(exc, openai.RateLimitError):
            return ModelError(
                "rate_limited", f"{where} is rate limiting requests (429){_retry_after(exc)}"
            )
        if isinstance(exc, openai.APIStatusError):
            if _is_context_error(exc):
                return ModelError(
                    "context_length",
                    "the conversation is longer than the model's context window; start a new "
                    "conversation or lower maxContextTokens",
                )
            kind: ErrorKind = "bad_request" if exc.status_code < 500 else "server"
            return ModelError(kind, f"{where} answered {exc.status_code}: {_detail(exc)}")
        return ModelError("stream", f"the model's reply could not be read ({type(exc).__name__})")
