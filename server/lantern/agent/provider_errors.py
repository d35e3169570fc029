"""Reading what a provider said when it failed, whatever shape its error body has.

Servers disagree on the shape: OpenAI nests ``{"error": {"message": ...}}``,
Ollama sends ``{"error": "text"}``, Gemini a JSON array of error objects,
FastAPI-based servers (vLLM, Mistral) ``{"detail": [{"loc": ..., "msg": ...}]}``,
Mistral puts that list inside ``message``, others send plain text. `describe`
turns any of them into one short line of the provider's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lantern.agent.reply import ModelError

_LIMIT = 300

# Phrases servers use when the request is longer than the model's window.
_CONTEXT = re.compile(
    r"context[_ ]length|maximum context|context size|context window|exceed_context"
    r"|too many tokens|prompt is too long|input is too long|reduce the length",
    re.IGNORECASE,
)

# Phrases servers use when the model or server cannot take the `tools` parameter at all:
# Ollama "... does not support tools"; vLLM '"auto" tool choice requires
# --enable-auto-tool-choice and --tool-call-parser to be set'; llama.cpp "tools param
# requires --jinja flag"; others "function calling is not supported/enabled".
_TOOLS_UNSUPPORTED = re.compile(
    r"(does not|doesn't|do not|not) support(s)? (tools|tool use|tool calling|tool calls"
    r"|function calling|functions)"
    r"|(tools?|tool use|tool calling|function calling|functions?) (is |are )?"
    r"not (supported|enabled)"
    r"|enable-auto-tool-choice|tool-call-parser|requires --jinja|tools param requires",
    re.IGNORECASE,
)


def describe(body: Any) -> str:
    """The provider's own words from an error body of any shape, on one short line."""
    words: list[str] = []
    _collect(body, words, depth=0)
    unique = list(dict.fromkeys(w.strip() for w in words if w and w.strip()))
    text = "; ".join(unique)
    text = " ".join(text.split())
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


def _collect(body: Any, words: list[str], depth: int) -> None:
    if depth > 6 or body is None:
        return
    if isinstance(body, str):
        stripped = body.strip()
        if stripped[:1] in "[{":
            try:
                _collect(json.loads(stripped), words, depth + 1)
                return
            except ValueError:
                pass
        words.append(stripped)
    elif isinstance(body, list):
        for item in body[:5]:
            _collect(item, words, depth + 1)
    elif isinstance(body, dict):
        for key in ("error", "message", "detail", "details"):
            if body.get(key):
                _collect(body[key], words, depth + 1)
                return
        if "msg" in body:  # a FastAPI/pydantic validation item
            loc = body.get("loc")
            where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
            words.append(f"{where}: {body['msg']}" if where else str(body["msg"]))
            return
        words.append(json.dumps(body, ensure_ascii=False, default=str))
    else:
        words.append(str(body))


def flat_text(body: Any) -> str:
    """Everything in the body as text, for matching names like ``stream_options``."""
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(body)


def is_context_error(body: Any, code: Any = None) -> bool:
    return bool(_CONTEXT.search(f"{code or ''} {flat_text(body)}"))


def is_tools_unsupported(body: Any) -> bool:
    return bool(_TOOLS_UNSUPPORTED.search(flat_text(body)))


def error_code(body: Any) -> Any:
    """The ``code`` (or ``status``) an error object carries, looking one level into ``error``."""
    if isinstance(body, list) and body:
        return error_code(body[0])
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    if isinstance(inner, dict):
        found = error_code(inner)
        if found is not None:
            return found
    return body.get("code") if body.get("code") is not None else body.get("status")


def is_transient(body: Any) -> bool:
    """Whether an error reported inside a stream is worth one more try.

    Numeric codes of 500 and up, names like "server_error" / "overloaded" /
    "unavailable", and errors with no code at all are transient; 4xx codes and
    request or context errors are not.
    """
    if is_context_error(body, error_code(body)) or is_tools_unsupported(body):
        return False
    code = error_code(body)
    kind = body.get("type") if isinstance(body, dict) else None
    if isinstance(code, int) or (isinstance(code, str) and code.isdigit()):
        return int(code) >= 500 or int(code) in (408, 429)
    label = f"{code or ''} {kind or ''}".lower()
    final = ("invalid", "bad_request", "not_found", "auth", "permission")
    return not any(w in label for w in final)


def tools_hint(words: str) -> str:
    lowered = words.lower()
    if "jinja" in lowered:
        server = "start llama-server with --jinja"
    elif "auto-tool-choice" in lowered or "tool-call-parser" in lowered:
        server = "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>"
    else:
        server = "pick a model with tool support"
    return f"set toolProtocol to auto or text to use Lantern's text tool protocol, or {server}"


def status_error(
    status: int,
    body: Any,
    *,
    where: str,
    model: str,
    tools_sent: bool,
    retry_after: str | None = None,
) -> ModelError:
    """The error a user can act on for an HTTP error status and the body that came with it."""
    words = describe(body).rstrip(". ")
    said = f": {words}" if words else ""
    if status in (401, 403):
        return ModelError(
            "auth",
            f"{where} rejected the API key ({status}{said}); set the right one with "
            "--api-key, LANTERN_API_KEY or 'Lantern: Set API Key'",
        )
    if status == 429:
        wait = f"retry after {retry_after} s" if retry_after else "wait a little and try again"
        return ModelError("rate_limited", f"{where} is rate limiting requests (429{said}); {wait}")
    if tools_sent and is_tools_unsupported(body):
        return ModelError(
            "tools_unsupported",
            f"{where} does not take tools with model {model!r} ({status}{said}); "
            + tools_hint(words),
        )
    if is_context_error(body, error_code(body)):
        return ModelError(
            "context_length",
            f"the conversation is longer than the model's context window ({status}{said}); "
            "start a new conversation or lower maxContextTokens",
        )
    if status == 404:
        return ModelError(
            "not_found",
            f"model {model!r} was not found at {where} (404{said}); pick another with "
            "--model or the 'model' setting (`lantern doctor` lists what the endpoint has)",
        )
    if status >= 500:
        what = f"{where} answered {status}" + (said or " with no explanation")
        return ModelError("server", f"{what}; the server failed: try again, or see its log")
    what = f"{where} answered {status}" + (said or " with no explanation")
    return ModelError(
        "bad_request",
        f"{what}; the endpoint refused the request: check the model name, the base URL "
        "and the server's settings",
    )


# Provider fields the client sends back on assistant messages (and their tool calls).
SENT_BACK = ("reasoning_content", "reasoning_details", "reasoning", "extra_content")


def rejected_fields(body: Any, messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """Fields we sent back that a 400/422 names: Groq answers "property 'reasoning' is
    unsupported", DeepSeek's older reasoner refused reasoning_content in the input, strict
    schemas say "extra inputs are not permitted". Only fields actually sent count."""
    text = flat_text(body)
    sent = {key for m in messages if m.get("role") == "assistant" for key in m}
    sent |= {
        key
        for m in messages
        if m.get("role") == "assistant"
        for call in (m.get("tool_calls") or ())
        if isinstance(call, Mapping)
        for key in call
    }
    return {f for f in SENT_BACK if f in sent and re.search(rf"\b{f}\b", text)}


def without_fields(messages: Sequence[dict[str, Any]], fields: set[str]) -> list[dict[str, Any]]:
    """The messages with those provider fields left off assistant messages and their calls."""
    if not fields:
        return list(messages)
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "assistant":
            out.append(message)
            continue
        kept = {k: v for k, v in message.items() if k not in fields}
        calls = kept.get("tool_calls")
        if isinstance(calls, list):
            kept["tool_calls"] = [
                {k: v for k, v in c.items() if k not in fields} if isinstance(c, dict) else c
                for c in calls
            ]
        out.append(kept)
    return out
