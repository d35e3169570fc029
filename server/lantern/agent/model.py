"""The model client: Chat Completions with tools, streamed, over any OpenAI-compatible URL.

The stream is folded into a `Reply` by `stream.ReplyAssembler`, which copes with
the tool-call, reasoning and usage shapes real servers send. Usage is asked for
in the stream (`stream_options`); an endpoint that rejects the option (400 or
422) is asked again without it, and when no usage arrives it is estimated.
Every failure becomes a `ModelError` carrying the provider's own words and
what to do. A stream that stalls, is cut, or reports a transient error is
retried once; deterministic errors (context size, invalid request) never are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import replace
from typing import Any

import httpx2
import openai
from openai._streaming import ServerSentEvent, SSEDecoder

from lantern.agent import provider_errors
from lantern.agent.reply import ChatTurn, ErrorKind, ModelError, Reply, ToolCall, Usage
from lantern.agent.stream import ReplyAssembler, stream_error, whole_reply_chunks
from lantern.escaping import replace_surrogates

__all__ = ["ErrorKind", "ModelClient", "ModelError", "Reply", "ToolCall", "Usage"]

log = logging.getLogger(__name__)

# Models whose chat template may open a <think> block in the prompt, so the reply can
# start with bare reasoning ended by a lone </think>: hold the reply's start back.
# Not coder/instruct variants: those never think, and their answers should stream at once.
_REASONING_MODELS = re.compile(r"deepseek-r1|(^|[-_:/])r1([-_:.]|$)|qwq|qwen3|think|reason", re.I)
_NON_REASONING = re.compile(r"coder|instruct", re.I)


class _ErrorFieldDecoder(SSEDecoder):
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
        return _ErrorFieldDecoder()


async def _mark_final_errors(response: httpx2.Response) -> None:
    """Tell the SDK not to retry a 5xx that says the server takes no tools.

    llama.cpp without --jinja answers 500 "tools param requires --jinja flag": the
    same request would fail the same way, and the text-protocol fallback would wait
    out the SDK's retries and back-off first.
    """
    if response.status_code < 500 or "x-should-retry" in response.headers:
        return
    try:
        body = (await response.aread())[:20_000].decode("utf-8", errors="replace")
    except httpx2.HTTPError:
        return
    if provider_errors.is_tools_unsupported(body):
        response.headers["x-should-retry"] = "false"


def estimate_tokens(text: str) -> int:
    """About four characters per token: enough to show a figure when none is sent."""
    return (len(text) + 3) // 4


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
        self._client = _OpenAI(
            base_url=self.base_url,
            # Local servers (Ollama, llama.cpp) need no key, but the SDK wants a string.
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(request_timeout, connect=min(10.0, request_timeout)),
            max_retries=max_retries,
            http_client=openai.DefaultAsyncHttpxClient(
                event_hooks={"response": [_mark_final_errors]}
            ),
        )
        self._usage_option = True
        self._dropped_fields: set[str] = set()
        self._hold_leading = bool(
            _REASONING_MODELS.search(model) and not _NON_REASONING.search(model)
        )

    @property
    def stream_options_accepted(self) -> bool:
        """False once the endpoint refused `stream_options` (usage is then estimated)."""
        return self._usage_option

    async def close(self) -> None:
        await self._client.close()

    async def complete(self, turn: ChatTurn) -> Reply:
        """One model turn; a stream cut, stalled or failing transiently is tried once more."""
        try:
            async with asyncio.timeout(self.request_timeout):
                try:
                    return await self._stream(turn)
                except ModelError as exc:
                    if not exc.retryable:
                        raise
                    # A caller given on_retry shows the retry itself: log it only for others.
                    level = logging.INFO if turn.on_retry is not None else logging.WARNING
                    log.log(level, "model stream failed (%s); retrying once", exc.message)
                    if turn.on_retry is not None:
                        turn.on_retry(exc.message)
                    return await self._stream(turn)
        except TimeoutError:
            raise ModelError(
                "timeout",
                f"the model did not finish within {self.request_timeout:g} s "
                "(requestTimeoutSeconds)",
            ) from None

    async def _create(self, request: ChatTurn) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            # A name or text the model made up may hold a lone surrogate: no UTF-8 for it.
            "messages": replace_surrogates(
                provider_errors.without_fields(request.messages, self._dropped_fields)
            ),
            "stream": True,
        }
        if request.tools:
            kwargs["tools"] = list(request.tools)
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if self._usage_option:
            kwargs["stream_options"] = {"include_usage": True}
        try:
            return await self._client.chat.completions.create(**kwargs)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if self._usage_option and _rejects_stream_options(exc):
                log.info("endpoint rejects stream_options; asking without usage")
                self._usage_option = False
                return await self._create(request)
            if request.tool_choice is not None and "tool_choice" in provider_errors.flat_text(
                exc.body
            ):
                # A server that takes tools but not this tool_choice: ask without tools.
                log.info("endpoint rejects tool_choice; asking without tools")
                return await self._create(replace(request, tools=None, tool_choice=None))
            refused = provider_errors.rejected_fields(exc.body, kwargs["messages"])
            if refused:
                # A field another provider wants back is refused here: leave it off from now on.
                log.info("endpoint refuses %s on assistant messages; leaving it off", refused)
                self._dropped_fields |= refused
                return await self._create(request)
            raise

    async def _stream(self, request: ChatTurn) -> Reply:
        try:
            stream = await self._create(request)
        except openai.APIError as exc:
            written = _failed_generation(exc.body)
            if written is not None:
                return self._written_reply(request, written)
            raise self._translate(exc, tools_sent=bool(request.tools)) from None
        assembler = self._assembler(request)
        loop = asyncio.get_running_loop()
        try:
            # One watchdog for the whole stream, pushed back on every chunk.
            async with asyncio.timeout(self.stall_timeout) as watchdog:
                if _is_json(stream):  # the server ignored stream=True or sent only an error
                    for chunk in whole_reply_chunks(await _read_json(stream)):
                        assembler.feed(chunk)
                else:
                    async for chunk in stream:
                        watchdog.reschedule(loop.time() + self.stall_timeout)
                        assembler.feed(chunk)
        except ModelError:
            raise
        except openai.APIConnectionError as exc:  # the SDK wraps transport errors mid-stream
            raise ModelError(
                "stream", f"the model's stream broke off ({type(exc.__cause__ or exc).__name__})"
            ) from None
        except openai.APIStatusError as exc:
            raise self._translate(exc, tools_sent=bool(request.tools)) from None
        except openai.APIError as exc:  # an error object inside a 200 stream
            written = _failed_generation(exc.body)
            if written is not None:
                return self._written_reply(request, written)
            raise stream_error(exc.body if exc.body is not None else exc.message) from None
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
        reply = assembler.finish()
        if reply.finish_reason is None:
            # Some servers never set finish_reason; `[DONE]` after a reply still ends it.
            # Without either, the stream was cut short.
            said = reply.content or reply.tool_calls or reply.reasoning
            if not (said and _said_done(stream)):
                raise ModelError("stream", "the model's stream ended before the reply was complete")
            reply.finish_reason = "stop"
        if reply.usage is None:
            reply.usage = _estimate(request, reply)
        return reply

    def _assembler(self, request: ChatTurn) -> ReplyAssembler:
        return ReplyAssembler(
            request.on_text, request.on_reasoning, hold_leading=self._hold_leading
        )

    def _written_reply(self, request: ChatTurn, text: str) -> Reply:
        """A reply made of text the server refused to turn into tool calls, read as content
        so that calls written in it run through the text protocol (or it is the answer)."""
        assembler = self._assembler(request)
        message = {"role": "assistant", "content": text}
        for chunk in whole_reply_chunks(
            {"choices": [{"message": message, "finish_reason": "stop"}]}
        ):
            assembler.feed(chunk)
        reply = assembler.finish()
        reply.usage = _estimate(request, reply)
        return reply

    def _translate(self, exc: openai.APIError, *, tools_sent: bool) -> ModelError:
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
        if isinstance(exc, openai.APIStatusError):
            return provider_errors.status_error(
                exc.status_code,
                exc.body,
                where=where,
                model=self.model,
                tools_sent=tools_sent,
                retry_after=exc.response.headers.get("retry-after"),
            )
        return stream_error(exc.body if exc.body is not None else exc.message)


def _said_done(stream: Any) -> bool:
    """Whether the stream's SSE reader read `data: [DONE]`."""
    decoder = getattr(stream, "_decoder", None)
    return isinstance(decoder, _ErrorFieldDecoder) and decoder.done


def _is_json(stream: Any) -> bool:
    response = getattr(stream, "response", None)
    kind = response.headers.get("content-type", "") if response is not None else ""
    return isinstance(kind, str) and kind.startswith("application/json")


async def _read_json(stream: Any) -> Any:
    raw = await stream.response.aread()
    try:
        return json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", errors="replace")
        raise ModelError("stream", f"the model's reply was not readable: {text[:200]}") from None


def _failed_generation(body: Any) -> str | None:
    """What the model wrote when Groq refused it as a tool call (400 `tool_use_failed`).

    Groq answers a call it cannot parse with an error carrying the model's own text in
    `failed_generation`; that text is the reply, not a reason to stop the question.
    """
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") != "tool_use_failed":
        return None
    written = error.get("failed_generation")
    return written if isinstance(written, str) and written.strip() else None


def _rejects_stream_options(exc: openai.APIStatusError) -> bool:
    """A 400/422 naming the option, or a bare 422 (a strict schema refusing unknown keys)."""
    if "stream_options" in provider_errors.flat_text(exc.body):
        return True
    return exc.status_code == 422 and not exc.body


def _estimate(request: ChatTurn, reply: Reply) -> Usage:
    sent = json.dumps(list(request.messages), ensure_ascii=False)
    if request.tools:
        sent += json.dumps(list(request.tools), ensure_ascii=False)
    received = reply.content + reply.reasoning
    received += "".join(c.name + c.arguments for c in reply.tool_calls)
    return Usage(estimate_tokens(sent), estimate_tokens(received), estimated=True)
