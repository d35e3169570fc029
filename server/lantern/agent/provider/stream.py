"""Folding streamed Chat Completions chunks into one `Reply`, whatever server sent them.

Tool calls arrive in many shapes: whole in one chunk; an id only in the first
delta and arguments in pieces (OpenAI, vLLM, llama.cpp); several calls all with
``index`` 0 and different ids (current Ollama); no ``index`` at all (older
Ollama, Gemini); later deltas whose id is ``"null"`` or ``""`` (Mistral,
Devstral); a fresh id on every piece of one call (Poolside). The rule here: a
delta continues the call it belongs to unless it brings a name together with a
new id, or a name for a call that already has a different one;
names are never concatenated, and missing or unusable ids are replaced with
9 letters and digits, a form every provider accepts back.

Provider fields that must go back on the next request (``reasoning_content``,
``reasoning``, ``reasoning_details``, a tool call's ``extra_content``) are kept
verbatim; reasoning is also passed on for display.

Once a reply's text, reasoning and calls pass ``MAX_REPLY_BYTES`` (1 MiB), `feed`
raises `ReplyTooLarge`, carrying what arrived as a reply cut off (``length``): an
endless stream ends there. `feed` says whether a chunk added anything; the stall
watchdog counts only those, so a stream of empty chunks stalls like a silent one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from lantern import model_json
from lantern.agent.protocol.think import ContentFilter
from lantern.agent.provider.classify import stream_error
from lantern.agent.provider.outcomes import too_large
from lantern.agent.reply import ModelError, Reply, ToolCall, Usage, new_call_id

__all__ = [
    "MAX_REPLY_BYTES",
    "ReplyAssembler",
    "ReplyTooLarge",
    "stream_error",
    "whole_reply_chunks",
]

MAX_REPLY_BYTES = 1 << 20  # text + reasoning + tool-call names and arguments of one reply

_UNUSABLE_IDS = {"", "null", "none", "undefined", "nil"}
# Fields a provider attaches to the assistant message / a tool call that it wants back.
_MESSAGE_TEXT_FIELDS = ("reasoning_content", "reasoning")
_MESSAGE_DICT_FIELDS = ("extra_content",)
_CALL_FIELDS = ("extra_content",)


def _usable_id(value: Any) -> str | None:
    if not isinstance(value, str) or value.strip().lower() in _UNUSABLE_IDS:
        return None
    return value


def _extras(obj: Any) -> dict[str, Any]:
    extra = getattr(obj, "model_extra", None)
    return extra if isinstance(extra, dict) else {}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class _Call:
    index: int | None
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class ReplyTooLarge(ModelError):
    """A reply that passed `MAX_REPLY_BYTES`: `reply` is what arrived, cut off."""

    def __init__(self, reply: Reply) -> None:
        why = too_large(MAX_REPLY_BYTES)
        super().__init__(why.kind, why.summary, fixes=why.fixes, retryable=False)
        self.reply = reply
        reply.finish_reason, reply.outcome = "length", self


class ReplyAssembler:
    """Feed it every chunk of one streamed reply, then call `finish`."""

    def __init__(
        self,
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
        *,
        hold_leading: bool = False,
    ) -> None:
        self._on_text = on_text
        self._on_reasoning = on_reasoning
        self._filter = ContentFilter(hold_leading=hold_leading)
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._texts: dict[str, list[str]] = {}
        self._details: list[Any] = []
        self._message_extra: dict[str, Any] = {}
        self._thoughts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.size = 0  # bytes of text, reasoning and calls so far (see MAX_REPLY_BYTES)

    def _grow(self, text: str) -> None:
        self.size += len(text.encode("utf-8", "surrogatepass"))

    # --- chunks ------------------------------------------------------------------------------

    def feed(self, chunk: Any) -> bool:
        """Take one chunk; whether it added to the reply (text, reasoning, a call, the
        finish reason or usage). Raises `ReplyTooLarge` past MAX_REPLY_BYTES."""
        before = (self.size, self.finish_reason, self.usage)
        self._feed(chunk)
        if self.size > MAX_REPLY_BYTES:
            raise ReplyTooLarge(self.finish())
        return (self.size, self.finish_reason, self.usage) != before

    def _feed(self, chunk: Any) -> None:
        if getattr(chunk, "object", None) == "error":
            # vLLM up to 0.3 (and servers copying it) write a failure mid-stream as a bare
            # ErrorResponse, `{"object": "error", "message": …, "code": 400}`, with no
            # "error" key for the SDK to raise on.
            raise stream_error({k: v for k, v in _extras(chunk).items() if v is not None})
        self._read_usage(chunk)
        for choice in getattr(chunk, "choices", None) or ():
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._read_reasoning(delta)
                self._read_content(getattr(delta, "content", None))
                calls = getattr(delta, "tool_calls", None)
                if isinstance(calls, dict):  # one call sent as an object, not in a list
                    calls = [ChoiceDeltaToolCall.construct(**calls)]
                for tc in calls or ():
                    self._read_call(tc)
                legacy = getattr(delta, "function_call", None)
                if legacy is not None:
                    # The pre-tools `function_call` delta (old vLLM/FastChat, some proxies):
                    # one call, no id, its arguments in pieces.
                    self._read_call(_Legacy(legacy))
            reason = getattr(choice, "finish_reason", None)
            if reason:
                if reason == "error":
                    self._choice_error(choice)
                self.finish_reason = reason

    def _read_content(self, content: Any) -> None:
        if isinstance(content, str):
            if content:
                self._grow(content)
                self._show(*self._filter.feed(content))
            return
        # Mistral's reasoning models stream content as a list of typed chunks:
        # {"type": "text", "text": ...} and {"type": "thinking", "thinking": [...]}.
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            if part.get("type") == "thinking":
                thought = _joined_text(part.get("thinking"))
                if thought:
                    self._grow(thought)
                    self._filter.stop_holding()
                    self._show("", thought)
            elif isinstance(part.get("text"), str) and part["text"]:
                self._grow(part["text"])
                self._show(*self._filter.feed(part["text"]))

    def _show(self, answer: str, thought: str) -> None:
        if answer:
            self._on_text(answer)
        if thought:
            self._thoughts.append(thought)
            if self._on_reasoning is not None:
                self._on_reasoning(thought)

    def _read_usage(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is None:
            # Groq reports usage under x_groq when stream_options is not honoured.
            groq = _extras(chunk).get("x_groq")
            usage = groq.get("usage") if isinstance(groq, dict) else None
        if usage is None:
            return
        fields = usage if isinstance(usage, dict) else vars(usage)
        prompt, completion = fields.get("prompt_tokens"), fields.get("completion_tokens")
        if isinstance(prompt, int) or isinstance(completion, int):
            self.usage = Usage(prompt or 0, completion or 0)

    def _read_reasoning(self, delta: Any) -> None:
        extra = _extras(delta)
        thought = ""
        for name in _MESSAGE_TEXT_FIELDS:
            value = extra.get(name)
            if isinstance(value, str) and value:
                self._texts.setdefault(name, []).append(value)
                self._grow(value)
                thought = thought or value  # servers sending both carry the same text
        details = extra.get("reasoning_details")
        if isinstance(details, list):
            for item in details:
                text = self._merge_detail(item)
                if not thought and text:
                    thought = text
        for name in _MESSAGE_DICT_FIELDS:
            value = extra.get(name)
            if isinstance(value, dict):
                _deep_merge(self._message_extra.setdefault(name, {}), value)
        if thought:
            self._filter.stop_holding()
            self._show("", thought)

    def _merge_detail(self, item: Any) -> str:
        """Pieces of one reasoning detail (same index and type) are joined, as streamed."""
        if not isinstance(item, dict):
            self._details.append(item)
            self._grow(_text(item))
            return ""
        for value in item.values():
            if isinstance(value, str):
                self._grow(value)
        text = item.get("text") or item.get("summary")
        last = self._details[-1] if self._details else None
        if (
            isinstance(last, dict)
            and "index" in item
            and last.get("index") == item.get("index")
            and last.get("type") == item.get("type")
        ):
            for key, value in item.items():
                if isinstance(value, str) and isinstance(last.get(key), str) and key in (
                    "text", "summary", "data",
                ):  # fmt: skip
                    last[key] += value
                elif value is not None:
                    last[key] = value
        else:
            self._details.append(dict(item))
        return text if isinstance(text, str) else ""

    def _read_call(self, tc: Any) -> None:
        index = getattr(tc, "index", None)
        index = index if isinstance(index, int) else None
        call_id = _usable_id(getattr(tc, "id", None))
        function = getattr(tc, "function", None)
        name = getattr(function, "name", None) if function is not None else None
        name = name if isinstance(name, str) and name else None
        arguments = getattr(function, "arguments", None) if function is not None else None
        call = self._target(index, call_id, name)
        if call_id and not call.id:
            call.id = call_id
        if name and not call.name:
            call.name = name
            self._grow(name)
        if arguments is not None and arguments != "":
            call.arguments.append(_text(arguments))
            self._grow(call.arguments[-1])
        for key in _CALL_FIELDS:
            value = _extras(tc).get(key)
            if isinstance(value, dict):
                _deep_merge(call.extra.setdefault(key, {}), value)

    def _target(self, index: int | None, call_id: str | None, name: str | None) -> _Call:
        """The call this delta belongs to, or a new one."""
        if index is not None and index in self._by_index:
            current = self._by_index[index]
            if not self._starts_new(current, call_id, name):
                return current
        elif index is None and self._calls:
            if call_id is not None:
                for known in self._calls:
                    # The same id and a name again once that call's arguments are whole
                    # JSON: a second call given a reused id (made unique at the end).
                    # Before that, a server repeating id and name on every piece.
                    if known.id == call_id and not (name is not None and _whole(known)):
                        return known
            current = self._calls[-1]
            repeated = name is not None and name == current.name and _whole(current)
            if not repeated and not self._starts_new(current, call_id, name):
                return current  # without an index, a name again after arguments is a new call
        call = _Call(index)
        self._calls.append(call)
        if index is not None:
            self._by_index[index] = call
        return call

    @staticmethod
    def _starts_new(current: _Call, call_id: str | None, name: str | None) -> bool:
        if call_id is not None and current.id is not None and call_id != current.id:
            # Index reused (Ollama) or no index (Gemini): a new id with a name is a new call.
            # A new id on a bare argument piece is a server minting ids per chunk.
            return name is not None or not current.name
        if call_id is not None and call_id == current.id:
            return False
        return name is not None and bool(current.name) and name != current.name

    def _choice_error(self, choice: Any) -> None:
        """OpenRouter ends a failed stream with finish_reason "error" and an error object."""
        body = _extras(choice).get("error") or "the provider ended the reply with an error"
        raise stream_error(body)

    # --- the end -----------------------------------------------------------------------------

    def finish(self) -> Reply:
        answer, thought = self._filter.finish()
        self._show(answer, thought)
        taken: set[str] = set()
        calls: list[ToolCall] = []
        for call in self._calls:
            if not call.name and not call.arguments:
                continue  # an empty delta, nothing the model asked for
            call_id = call.id if call.id and call.id not in taken else new_call_id(taken)
            taken.add(call_id)
            calls.append(ToolCall(call_id, call.name, "".join(call.arguments), call.extra))
        extra: dict[str, Any] = {k: "".join(v) for k, v in self._texts.items()}
        if self._details:
            extra["reasoning_details"] = self._details
        extra.update(self._message_extra)
        return Reply(
            content=self._filter.content,
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            reasoning="".join(self._thoughts),
            extra=extra,
        )


def _whole(call: _Call) -> bool:
    """Whether the call's arguments so far are a complete JSON value."""
    if not call.arguments:
        return False
    try:
        model_json.loads("".join(call.arguments))
    except ValueError:
        return False
    return True


class _Legacy:
    """A legacy `delta.function_call` read as the one tool call it stands for."""

    index = 0
    id = None

    def __init__(self, function: Any) -> None:
        self.function = function
        self.model_extra: dict[str, Any] = {}


def _joined_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_joined_text(v) for v in value)
    if isinstance(value, dict):
        return _joined_text(value.get("text"))
    return ""


def _deep_merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Later values win: a signature sent again replaces, never extends, the first."""
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        elif value is not None:
            into[key] = value


def whole_reply_chunks(data: Any) -> list[ChatCompletionChunk]:
    """A server that answered a streamed request with one JSON body: its error, or its reply
    as the single chunk a stream would have carried."""
    if isinstance(data, list) or not isinstance(data, dict) or data.get("error"):
        raise stream_error(data)
    choices = []
    for number, choice in enumerate(data.get("choices") or ()):
        if not isinstance(choice, dict):
            continue
        message = dict(choice.get("message") or {})
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(calls) if isinstance(call, dict)
            ]
        choices.append(
            {"index": number, "delta": message, "finish_reason": choice.get("finish_reason")}
        )
    if not choices:
        raise stream_error(data)
    return [ChatCompletionChunk.construct(**{**data, "choices": choices})]
