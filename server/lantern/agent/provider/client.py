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
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletionChunk

from lantern.agent.provider import error_body
from lantern.agent.provider.classify import context_fixes, guess_server, status_error, stream_error
from lantern.agent.provider.diagnose import Prober, diagnose
from lantern.agent.provider.http import (
    build_client,
    content_type,
    read_body,
    read_json,
    request_headers,
)
from lantern.agent.provider.key_header import credentials
from lantern.agent.provider.outcomes import cut_short
from lantern.agent.provider.secrets_out import ScrubbingAssembler, Secrets
from lantern.agent.provider.sse import EventStream, StreamedError
from lantern.agent.provider.stream import ReplyAssembler, whole_reply_chunks
from lantern.agent.reply import ChatTurn, ErrorKind, Fix, ModelError, Reply, ToolCall, Usage
from lantern.agent.tokens import estimate_tokens, message_tokens
from lantern.escaping import public_url, replace_surrogates

__all__ = ["ErrorKind", "ModelClient", "ModelError", "Reply", "ToolCall", "Usage"]

log = logging.getLogger(__name__)

# Models whose chat template may open a <think> block in the prompt, so the reply can
# start with bare reasoning ended by a lone </think>: hold the reply's start back.
# Not coder/instruct variants: those never think, and their answers should stream at once.
_REASONING_MODELS = re.compile(r"deepseek-r1|(^|[-_:/])r1([-_:.]|$)|qwq|qwen3|think|reason", re.I)
_NON_REASONING = re.compile(r"coder|instruct", re.I)
# No server's context window is smaller (Ollama's oldest default): a prompt below it
# cannot have been cut, whatever the endpoint counts.
_SMALLEST_WINDOW = 2048


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
        headers: Mapping[str, str] | None = None,
        max_output_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        api_key, headers = credentials(self.base_url, api_key, headers or {})
        self.request_timeout = request_timeout
        # A stream that sends nothing for this long is treated as stalled.
        self.stall_timeout = stall_timeout or min(request_timeout, 60.0)
        self.max_output_tokens = max_output_tokens
        self.server = guess_server(self.base_url)
        # OpenAI's reasoning models refuse `max_tokens`; most other servers know only it.
        self._token_param = (
            "max_completion_tokens" if self.server in ("openai", "azure") else "max_tokens"
        )
        self._client = build_client(
            base_url=self.base_url,
            api_key=api_key,
            headers=headers,
            timeout=request_timeout,
            max_retries=max_retries,
        )
        self._prober = Prober(api_key, headers)
        # Whatever the endpoint says back may echo them: hidden before any text leaves.
        self._secrets = Secrets.of(api_key=api_key, base_url=self.base_url, headers=headers)
        self._extra_headers = request_headers(api_key, headers)
        self._usage_option = True
        self._dropped_fields: set[str] = set()
        self._hold_leading = bool(
            _REASONING_MODELS.search(model) and not _NON_REASONING.search(model)
        )

    @property
    def stream_options_accepted(self) -> bool:
        """False once the endpoint refused `stream_options` (usage is then estimated)."""
        return self._usage_option

    @property
    def where(self) -> str:
        """The base URL as messages show it: without its query or userinfo (a key may be there)."""
        return public_url(self.base_url)

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
                f"the model did not finish within {self.request_timeout:g} s",
                fixes=(Fix("requestTimeoutSeconds", note="a slow or busy server may need more"),),
            ) from None
        except ModelError as exc:
            raise self._secrets.error(await self._explain(exc)) from None

    async def _explain(self, exc: ModelError) -> ModelError:
        """What only this endpoint can add: its context knob, the URL that answers, its models."""
        if exc.kind == "context_length":
            server = guess_server(self.base_url, exc.words)
            known = {f.note for f in exc.fixes}
            extra = [f for f in context_fixes(server) if f.note not in known]
            return exc.with_fixes(*extra) if extra else exc
        if exc.kind == "not_found":
            return await diagnose(exc, self.base_url, self.model, self._prober)
        return exc

    async def _open(self, request: ChatTurn, stack: AsyncExitStack) -> httpx2.Response:
        """Send the request; its response, unread, closed with `stack`."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            # A name or text the model made up may hold a lone surrogate: no UTF-8 for it.
            "messages": replace_surrogates(
                error_body.without_fields(request.messages, self._dropped_fields)
            ),
            "stream": True,
        }
        if self._extra_headers:
            kwargs["extra_headers"] = self._extra_headers
        if request.tools:
            kwargs["tools"] = list(request.tools)
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if self._usage_option:
            kwargs["stream_options"] = {"include_usage": True}
        if self.max_output_tokens is not None:
            kwargs[self._token_param] = self.max_output_tokens
        create = self._client.chat.completions.with_streaming_response.create
        try:
            opened: openai.AsyncAPIResponse[Any] = await stack.enter_async_context(create(**kwargs))
            return opened.http_response
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if self._usage_option and _rejects_stream_options(exc):
                log.info("endpoint rejects stream_options; asking without usage")
                self._usage_option = False
                return await self._open(request, stack)
            if self.max_output_tokens is not None and _rejects_param(exc, self._token_param):
                other = {"max_tokens": "max_completion_tokens"}.get(self._token_param, "max_tokens")
                log.info("endpoint refuses %s; sending %s", self._token_param, other)
                self._token_param = other
                return await self._open(request, stack)
            if request.tool_choice is not None and "tool_choice" in error_body.flat_text(exc.body):
                # A server that takes tools but not this tool_choice: ask without tools.
                log.info("endpoint rejects tool_choice; asking without tools")
                return await self._open(replace(request, tools=None, tool_choice=None), stack)
            refused = error_body.rejected_fields(exc.body, kwargs["messages"])
            if refused:
                # A field another provider wants back is refused here: leave it off from now on.
                log.info("endpoint refuses %s on assistant messages; leaving it off", refused)
                self._dropped_fields |= refused
                return await self._open(request, stack)
            raise

    async def _stream(self, request: ChatTurn) -> Reply:
        """One try; its failure with no credential in it (the retry's log and event show it)."""
        try:
            return await self._stream_once(request)
        except ModelError as exc:
            raise self._secrets.error(exc) from None

    async def _stream_once(self, request: ChatTurn) -> Reply:
        async with AsyncExitStack() as stack:
            try:
                response = await self._open(request, stack)
            except openai.APIError as exc:
                written = _failed_generation(exc.body)
                if written is not None:
                    return self._written_reply(request, written)
                raise self._translate(exc, tools_sent=bool(request.tools)) from None
            assembler = self._assembler(request)
            events = EventStream(response.aiter_bytes())
            try:
                await self._read(response, events, assembler)
            except StreamedError as exc:  # an error object inside a 200 stream
                written = _failed_generation(exc.body)
                if written is not None:
                    return self._written_reply(request, written)
                raise stream_error(self._secrets.scrub_value(exc.body)) from None
        return self._finish(request, assembler, said_done=events.done)

    async def _read(
        self, response: httpx2.Response, events: EventStream, assembler: ReplyAssembler
    ) -> None:
        """Feed the reply's chunks to `assembler`, with a watchdog on the stream."""
        kind = content_type(response)
        loop = asyncio.get_running_loop()
        try:
            # One watchdog for the whole stream, pushed back on every chunk.
            async with asyncio.timeout(self.stall_timeout) as watchdog:
                if kind.startswith("application/json"):
                    # The server ignored stream=True or sent only an error.
                    for chunk in whole_reply_chunks(await read_json(response, self._secrets.scrub)):
                        assembler.feed(chunk)
                elif kind.startswith(("text/html", "application/xhtml")):
                    page = self._secrets.scrub(await read_body(response))
                    raise _web_page(page, self.where)
                else:
                    async for data in events:
                        if assembler.feed(_chunk(data)):  # empty chunks are no progress
                            watchdog.reschedule(loop.time() + self.stall_timeout)
        except (ModelError, StreamedError):
            raise
        except TimeoutError:
            raise ModelError(
                "stream", f"the model's stream stalled for {self.stall_timeout:g} s"
            ) from None
        except Exception as exc:  # transport errors and bytes that are not SSE's JSON
            raise ModelError(
                "stream", f"the model's stream broke off ({type(exc).__name__})"
            ) from None

    def _finish(self, request: ChatTurn, assembler: ReplyAssembler, *, said_done: bool) -> Reply:
        reply = assembler.finish()
        if reply.finish_reason is None:
            # Some servers never set finish_reason; `[DONE]` after a reply still ends it.
            # Without either, the stream was cut short.
            said = reply.content or reply.tool_calls or reply.reasoning
            if not (said and said_done):
                raise ModelError("stream", "the model's stream ended before the reply was complete")
            reply.finish_reason = "stop"
        if reply.finish_reason in ("length", "content_filter"):
            reply.outcome = cut_short(
                reply.finish_reason, max_output_tokens=self.max_output_tokens, server=self.server
            )
        estimate = _estimate(request, reply)
        if reply.usage is None:
            reply.usage = estimate
        else:
            reply.warning = self._cut_prompt(reply.usage, estimate)
        return reply

    def _cut_prompt(self, usage: Usage, estimate: Usage) -> ModelError | None:
        """The endpoint counted under half of what was sent: it cut the prompt to fit its
        context window (Ollama does so silently), so the model never saw part of it."""
        counted, sent = usage.prompt_tokens, estimate.prompt_tokens
        if sent < _SMALLEST_WINDOW or not 0 < counted < sent // 2:
            return None
        return ModelError(
            "context_length",
            f"the endpoint counted {counted:,} prompt tokens, but Lantern sent about {sent:,}: "
            "the server cut the conversation to fit its context window, so the model did not "
            "see all of what was read",
            fixes=context_fixes(self.server, truncated_prompt=True),
        )

    def _assembler(self, request: ChatTurn) -> ReplyAssembler:
        """An assembler that hides the endpoint's credentials in what the reply says."""
        return ScrubbingAssembler(
            self._secrets, request.on_text, request.on_reasoning, hold_leading=self._hold_leading
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
        where = self.where
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(
                "timeout",
                f"no answer from {where} within {self.request_timeout:g} s",
                fixes=(Fix("requestTimeoutSeconds", note="a slow or busy server may need more"),),
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(
                "unreachable",
                f"cannot reach the model endpoint {where}",
                fixes=(Fix("baseUrl", note="is the server running, and is this its address?"),),
            )
        if isinstance(exc, openai.APIStatusError):
            headers = exc.response.headers
            location = headers.get("location")
            return status_error(
                exc.status_code,
                # Scrubbed before its words are taken: they are cut short, a key with them.
                self._secrets.scrub_value(exc.body),
                where=where,
                model=self.model,
                tools_sent=tools_sent,
                retry_after=headers.get("retry-after"),
                location=None if location is None else self._secrets.scrub(location),
            )
        said = exc.body if exc.body is not None else exc.message
        return stream_error(self._secrets.scrub_value(said))


def _chunk(data: Any) -> Any:
    """An event's JSON as the SDK's chunk type (unvalidated: servers vary), as the SDK's
    own stream would give it."""
    return ChatCompletionChunk.construct(**data) if isinstance(data, dict) else data


def _web_page(page: str, where: str) -> ModelError:
    return ModelError(
        "not_api",
        f"something between you and the endpoint answered with a web page, not the API ({where})",
        words=error_body.describe(page),
        fixes=(Fix("baseUrl", note="check the address, and any proxy or network login page"),),
    )


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
    if "stream_options" in error_body.flat_text(exc.body):
        return True
    return exc.status_code == 422 and not exc.body


def _rejects_param(exc: openai.APIStatusError, name: str) -> bool:
    """A 400/422 refusing the output-limit parameter by name ("Unsupported parameter:
    'max_tokens' … Use 'max_completion_tokens' instead", "extra inputs are not permitted")."""
    text = error_body.flat_text(exc.body)
    return name in text and bool(
        re.search(
            r"unsupported|not supported|unrecognized|unknown|extra|not permitted|instead",
            text,
            re.I,
        )
    )


def _estimate(request: ChatTurn, reply: Reply) -> Usage:
    sent = message_tokens(request.messages)
    if request.tools:
        sent += estimate_tokens(json.dumps(list(request.tools), ensure_ascii=False))
    received = reply.content + reply.reasoning
    received += "".join(c.name + c.arguments for c in reply.tool_calls)
    return Usage(sent, estimate_tokens(received), estimated=True)
