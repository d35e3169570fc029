"""Reading what a provider said when it failed, whatever shape its error body has.

Servers disagree on the shape: OpenAI nests ``{"error": {"message": ...}}``,
Ollama sends ``{"error": "text"}``, Gemini a JSON array of error objects,
FastAPI-based servers (vLLM, Mistral) ``{"detail": [{"loc": ..., "msg": ...}]}``,
Mistral puts that list inside ``message``, TGI ``{"error": {"message", "http_status_code"}}``
inside its stream, proxies and captive portals a web page, others plain text.
`describe` turns any of them into one short, escaped line of the provider's words.
The predicates here sort failures for `classify` and for the retry table
(`should_retry`, docs/endpoints.md#retries).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lantern.escaping import escape_line

_LIMIT = 300

# Phrases servers use when the request is longer than the model's window: OpenAI/vLLM
# "maximum context length", llama.cpp "exceeds the available context size", TGI
# "`inputs` must have less than 4096 tokens", Gemini "The input token count (…) exceeds
# the maximum number of tokens allowed".
_CONTEXT = re.compile(
    r"context[_ ]length|maximum context|context size|context window|exceed_context"
    r"|too many tokens|prompt is too long|input is too long|reduce the length"
    r"|must have less than \d+ tokens|input token count|exceeds the maximum number of tokens"
    r"|must be <= \d+",
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

# A model server that cannot load the model: Ollama "model requires more system memory
# (5.8 GiB) than is available (4.7 GiB)", PyTorch servers "CUDA out of memory".
_OUT_OF_MEMORY = re.compile(
    r"requires more system memory|out of memory|not enough memory|insufficient memory"
    r"|unable to allocate|failed to allocate",
    re.IGNORECASE,
)

# The account has no credit: OpenAI's `insufficient_quota` (a 429 that waiting never
# fixes), OpenRouter's 402 "requires more credits", DeepSeek's 402 "Insufficient Balance".
_QUOTA = re.compile(
    r"insufficient_quota|requires more credits|insufficient balance|insufficient credits"
    r"|credit balance is too low",
    re.IGNORECASE,
)

# The route is not there (a base URL without /v1): Ollama's gin router "404 page not
# found", FastAPI/Starlette {"detail":"Not Found"}, LM Studio "Unexpected endpoint or
# method. (POST /chat/completions)", Express "Cannot POST /chat/completions",
# llama.cpp "File Not Found", OpenAI "Invalid URL (POST /chat/completions)".
_ROUTE_MISSING = re.compile(
    r"^(404:? )?(page )?not found\.?$|^404 page not found$|^file not found$"
    r"|unexpected endpoint or method|^cannot post |^method not allowed$|no route|unknown url"
    r"|^invalid url \(",
    re.IGNORECASE,
)

# The model is not there: OpenAI `model_not_found`, Ollama 'model "x" not found, try
# pulling it first', vLLM "The model `x` does not exist.".
_MODEL_MISSING = re.compile(
    r"model_not_found|model.{0,120}(not found|does not exist|not exist|unknown|no such)"
    r"|(unknown|no such|invalid) model|deploymentnotfound",
    re.IGNORECASE,
)

# A web page is read by plain scans, each moving forward only: linear in the page, whatever
# it holds (a lazy regex over thousands of unclosed `<script>` takes quadratic time).
_PAGE_CAP = 256 * 1024  # characters of a page looked at; its words are cut far shorter
_HIDDEN = ("script", "style", "head")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def describe(body: Any) -> str:
    """The provider's own words from an error body of any shape, on one short escaped line.

    A web page is reduced to its title and text."""
    if is_html(body):
        title, text = page_text(str(body))
        if title and text.startswith(title):  # nginx: the title again as the heading
            rest = text[len(title) :].strip()
            return _line(f"{title} ({rest})" if rest else title)
        return _line(f"{title}: {text}" if title and text else title or text)
    words: list[str] = []
    _collect(body, words, depth=0)
    unique = list(dict.fromkeys(w.strip() for w in words if w and w.strip()))
    return _line("; ".join(unique))


def _line(text: str) -> str:
    text = " ".join(text.split())
    return escape_line(text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…")


def is_html(body: Any) -> bool:
    """Whether a body is a web page (a proxy's, a captive portal's), not an API's answer."""
    if not isinstance(body, str):
        return False
    start = body.lstrip()[:200].lower()
    return start.startswith(("<!doctype html", "<html", "<head", "<body", "<?xml", "<h1"))


def page_text(page: str) -> tuple[str, str]:
    """A web page's title and its visible text, whitespace collapsed (both may be empty)."""
    page = page[:_PAGE_CAP]
    low = page.translate(_ASCII_LOWER)  # tag names matched in any case, indexes unchanged
    title = ""
    opened = low.find("<title")
    start = low.find(">", opened) + 1 if opened >= 0 else 0
    end = low.find("</title>", start) if start else -1
    if end >= 0:
        title = " ".join(html.unescape(_without_tags(page[start:end])).split())
    text = " ".join(html.unescape(_without_tags(_without_hidden(page, low))).split())
    return title, text


def _without_hidden(page: str, low: str) -> str:
    """`page` less its `<script>`, `<style>` and `<head>` elements, each up to its closing tag
    (`</script >` too). An unclosed script or style hides the rest of the page, as in a
    browser; an unclosed `<head>` (its end tag is optional) hides nothing."""
    kept: list[str] = []
    done = 0  # the page up to here is kept or dropped
    ahead = dict.fromkeys(_HIDDEN, -1)  # each name's next opening tag found so far
    while True:
        for name in _HIDDEN:
            if ahead[name] < done:
                ahead[name] = _opening(low, name, done)
        name = min(_HIDDEN, key=ahead.__getitem__)
        at = ahead[name]
        if at == len(low):
            break
        closing = _closing_end(low, name, at + 1 + len(name))
        if closing < 0 and name == "head":
            ahead[name] = len(low)  # no later <head> has a closing tag either
            continue
        kept += (page[done:at], " ")
        done = len(low) if closing < 0 else closing
    kept.append(page[done:])
    return "".join(kept)


def _opening(low: str, name: str, start: int) -> int:
    """Where the next `<name` tag begins (not `<header`), or the page's length."""
    at = low.find("<" + name, start)
    while at >= 0:
        after = at + 1 + len(name)
        if after == len(low) or not (low[after].isalnum() or low[after] == "_"):
            return at
        at = low.find("<" + name, at + 1)
    return len(low)


def _closing_end(low: str, name: str, start: int) -> int:
    """Where the first `</name>` (blanks allowed before `>`) at `start` or later ends; -1."""
    at = low.find("</" + name, start)
    while at >= 0:
        after = at + 2 + len(name)
        while after < len(low) and low[after].isspace():
            after += 1
        if after < len(low) and low[after] == ">":
            return after + 1
        at = low.find("</" + name, after)
    return -1


def _without_tags(text: str) -> str:
    """Each `<…>` replaced by a space; a `<` that no `>` follows is left as it is."""
    kept: list[str] = []
    done = 0
    while (opened := text.find("<", done)) >= 0 and (closed := text.find(">", opened)) >= 0:
        kept += (text[done:opened], " ")
        done = closed + 1
    kept.append(text[done:])
    return "".join(kept)


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


def is_out_of_memory(body: Any) -> bool:
    return bool(_OUT_OF_MEMORY.search(flat_text(body)))


def is_quota(status: int | None, body: Any) -> bool:
    """No credit left: asking again, however late, gets the same answer."""
    return status == 402 or bool(_QUOTA.search(flat_text(body)))


def is_route_missing(words: str) -> bool:
    """Words a server says for a path it does not serve (not for a missing model)."""
    return bool(_ROUTE_MISSING.search(words.strip()))


def is_model_missing(body: Any) -> bool:
    return bool(_MODEL_MISSING.search(flat_text(body)))


def error_code(body: Any) -> Any:
    """The ``code`` (or ``status``, TGI's ``http_status_code``) an error object carries,
    looking one level into ``error``."""
    if isinstance(body, list) and body:
        return error_code(body[0])
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    if isinstance(inner, dict):
        found = error_code(inner)
        if found is not None:
            return found
    for key in ("code", "status", "http_status_code"):
        if body.get(key) is not None:
            return body[key]
    return None


def status_code(code: Any) -> int | None:
    """An error code that is an HTTP status (`400`, `"500"`), as a number."""
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return int(code) if isinstance(code, str) and code.isdigit() else None


def is_final(status: int | None, body: Any) -> bool:
    """A failure that fails the same way when asked again (docs/endpoints.md#retries)."""
    return (
        is_quota(status, body)
        or is_out_of_memory(body)
        or is_context_error(body, error_code(body))
        or is_tools_unsupported(body)
    )


def should_retry(status: int, body: Any) -> bool:
    """The retry table for an HTTP error status: rate limits, timeouts, 5xx (503 loading,
    gateway errors) are worth another try, unless the body says it cannot succeed."""
    if status not in (408, 409, 429) and status < 500:
        return False
    return not is_final(status, body)


def is_transient(body: Any) -> bool:
    """Whether an error reported inside a stream is worth one more try.

    Numeric codes of 500 and up, names like "server_error" / "overloaded" /
    "unavailable", and errors with no code at all are transient; 4xx codes, quota,
    memory and request or context errors are not.
    """
    code = error_code(body)
    status = status_code(code)
    if is_final(status, body):
        return False
    kind = body.get("type") if isinstance(body, dict) else None
    if status is not None:
        return status >= 500 or status in (408, 429)
    label = f"{code or ''} {kind or ''}".lower()
    final = ("invalid", "bad_request", "not_found", "auth", "permission", "validation")
    return not any(w in label for w in final)


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
