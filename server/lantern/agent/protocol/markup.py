"""What is call markup: tool calls a model wrote as text, and how they are read.

The one answer, for the whole of Lantern: `MARKERS` lists where call markup
starts. The stream filter (`think`) hides a reply from the first marker on, and
`parse` reads every one of them, or says why it could not; so markup the user
was not shown never comes back as an answer either. `has_markup` says whether a
reply holds any.

The shapes read: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` (the
text protocol's own; Hermes/Qwen blocks with JSON or Qwen3-Coder's
``<function=…><parameter=…>``; also opened with attributes, or fenced as
```` ```tool_call ```` / ```` ```tool ````), Mistral ``[TOOL_CALLS][{…}]`` and
``[TOOL_CALLS]name[ARGS]{…}``, Llama ``<|python_tag|>{…}`` and
``<function=name>{…}</function>``, gpt-oss harmony, DeepSeek and Kimi call
tokens (`native_tokens`), a reply that is only a (fenced) JSON call or a pythonic
`[name(key=value)]` list, inside code fences or with prose around. It never
guesses: a call without an explicit tool name is reported, not run.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lantern import model_json
from lantern.agent.protocol import native_tokens
from lantern.agent.reply import ToolCall, new_call_id

_OPEN, _CLOSE = native_tokens.OPEN, native_tokens.CLOSE
_OPEN_WITH_ATTRIBUTES = "<tool_call "  # `<tool_call …>`: the body starts after its ">"
_FENCED = "```tool_call"  # the rest of the fence's first line is its label (`json`)
_FENCED_SHORT = "```tool\n"
_MISTRAL = "[TOOL_CALLS]"
_PYTHON_TAG = "<|python_tag|>"  # Llama 3.1+: JSON calls ({"name", "parameters"}) after it
_FUNCTION = "<function="  # Llama 3.1 `<function=name>{…}</function>`, bare Qwen3-Coder XML
_BLOCKS = {_OPEN: _CLOSE, _OPEN_WITH_ATTRIBUTES: _CLOSE, _FENCED: "```", _FENCED_SHORT: "```"}
# Where call markup starts: the stream filter hides from here, `parse` reads from here.
MARKERS: tuple[str, ...] = (
    *_BLOCKS, _MISTRAL, _PYTHON_TAG, _FUNCTION, *native_tokens.MARKERS,
)  # fmt: skip
_MAX_CALL_CHARS = 100_000  # a literal_eval fallback never sees more than this
_FENCE_HEAD = re.compile(r"[\w-]*+[ \t]*+\n?")  # after ```: the label, up to the body
_FENCE_LABEL = re.compile(r"[\w \t-]*\n?")
# Mistral's `[TOOL_CALLS]name[ARGS]{…}`, and with the call's id: `name[CALL_ID]id[ARGS]{…}`.
_NAME = re.compile(r"\s*+([A-Za-z_][\w.-]*+)\s*+(?:\[CALL_ID\]\s*+\w++\s*+)?(?:\[ARGS\])?\s*+")
_JSON_FUNCTION = re.compile(r"<function=([A-Za-z_][\w.-]*+)\s*+>?\s*+\{")
# A name runs to `>`; it holds no `<`, so a failed try stops at the next tag.
_XML_FUNCTION = re.compile(r"<function=([^<>\s]++)>(.*?)(?:</function>|$)", re.S)
_XML_PARAMETER = re.compile(r"<parameter=([^<>\s]++)>\n?")
_EMPTY_FENCE = re.compile(r"```[\w-]*+\s*+```")


def has_markup(text: str) -> bool:
    """Whether `text` holds tool calls written as text."""
    return (
        any(marker in text for marker in MARKERS)
        or native_tokens.has_calls(text)
        or bool(_whole_reply_calls(text))
    )


def _whole_reply_calls(text: str) -> list[ToolCall]:
    """A reply that is nothing but a JSON call (or a list of them), fenced or not.

    Llama 3.x writes calls as bare `{"name": …, "parameters": {…}}` and many models
    wrap the same in a ```json fence when a server's parser misses them. Only an
    explicit name with an arguments object counts; any prose around it and it is an
    answer that happens to show JSON.
    """
    body = _unfence(text).strip()
    if not body.startswith(("{", "[")) or len(body) > _MAX_CALL_CHARS:
        return []
    try:
        value = model_json.loads(body)
    except json.JSONDecodeError:
        return _pythonic_calls(body)
    items = value if isinstance(value, list) and value else [value]
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return []
        arguments = item.get("arguments", item.get("parameters"))
        if set(item) - {"name", "arguments", "parameters", "id", "type"} or not isinstance(
            arguments, dict | str
        ):
            return []
    try:
        return _from_object(value)
    except ValueError:
        return []


@dataclass
class TextCalls:
    """What a reply written for the text protocol holds."""

    prose: str  # the reply without any call markup
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # markup that could not be read, and why


def _load(text: str) -> Any:
    """JSON, or, tolerantly, a Python-style literal (single quotes, True/None)."""
    text = text.strip()
    try:
        return model_json.loads(text)
    except json.JSONDecodeError:
        if len(text) > _MAX_CALL_CHARS:
            raise
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise json.JSONDecodeError("not a JSON object", text, 0) from None


def _unfence(text: str) -> str:
    """The inside of a code fence that wraps the whole of `text`, else `text`."""
    body = text.strip()
    if not body.startswith("```"):
        return text
    at = _FENCE_HEAD.match(body, 3).end()  # type: ignore[union-attr]  # always matches
    close = body.find("```", at)
    if close < 0:
        return text
    inside = body[at:close].rstrip(" \t")  # the fence's own line break and indentation
    return inside[:-1] if inside.endswith("\n") else inside


def _parameters(body: str) -> list[tuple[str, str]]:
    """The `<parameter=name>value</parameter>` pairs of a Qwen3-Coder call, in order:
    each value runs to the first `</parameter>` after it (one line break trimmed at
    each end); one scan that advances, so unclosed tags cost nothing more."""
    pairs: list[tuple[str, str]] = []
    at = body.find("<parameter=")
    while at >= 0:
        head = _XML_PARAMETER.match(body, at)
        if head is None:
            at = body.find("<parameter=", at + 1)
            continue
        close = body.find("</parameter>", head.end())
        if close < 0:
            break  # no later tag is closed either
        value = body[head.end() : close]
        pairs.append((head.group(1), value[:-1] if value.endswith("\n") else value))
        at = body.find("<parameter=", close + len("</parameter>"))
    return pairs


def _call(name: Any, arguments: Any) -> ToolCall:
    """A parsed call; ValueError when the name is missing or the arguments are unusable."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("the call names no tool")
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = _load(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            raise ValueError(f"the arguments of {name.strip()[:80]!r} are not JSON") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"the arguments of {name.strip()[:80]!r} are not a JSON object")
    return ToolCall(new_call_id(), name.strip(), json.dumps(arguments, ensure_ascii=False))


def _from_object(value: Any) -> list[ToolCall]:
    """Calls from `{"name", "arguments"}` (or a list of them; `parameters` accepted)."""
    items = value if isinstance(value, list) else [value]
    calls: list[ToolCall] = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("a call is not a JSON object")
        if isinstance(item.get("function"), dict):  # {"function": {"name", "arguments"}}
            item = item["function"]
        arguments = item.get("arguments", item.get("parameters"))
        calls.append(_call(item.get("name"), arguments))
    return calls


def _parse_block(body: str) -> list[ToolCall]:
    """The calls inside one ``<tool_call>`` block."""
    body = _unfence(body).strip()
    function = _XML_FUNCTION.search(body)
    if function is not None and not body.startswith(("{", "[")):
        arguments: dict[str, Any] = {}
        for key, raw in _parameters(function.group(2)):
            try:
                arguments[key] = model_json.loads(raw)
            except json.JSONDecodeError:
                arguments[key] = raw
        return [_call(function.group(1), arguments)]
    try:
        return _from_object(_load(body))
    except json.JSONDecodeError:
        pass
    try:  # a whole JSON call followed by stray text (an unclosed block, a remark)
        value, _ = model_json.raw_decode(body)
    except json.JSONDecodeError:
        raise ValueError("the call is not valid JSON") from None
    return _from_object(value)


def _parse_mistral(text: str, start: int) -> tuple[list[ToolCall], int]:
    """Calls after one ``[TOOL_CALLS]`` at `start`; returns them and where they end."""
    at = start + len(_MISTRAL)
    while at < len(text) and text[at].isspace():
        at += 1
    if text.startswith(("[", "{"), at):  # [TOOL_CALLS][{"name": …, "arguments": …}]
        try:
            value, end = model_json.raw_decode(text, at)
        except json.JSONDecodeError:
            raise ValueError("the call after [TOOL_CALLS] is not valid JSON") from None
        return _from_object(value), end
    name = _NAME.match(text, at)  # [TOOL_CALLS]name[ARGS]{…} or [TOOL_CALLS]name{…}
    if name is None or not text.startswith("{", name.end()):
        raise ValueError("[TOOL_CALLS] is not followed by a tool name and JSON arguments")
    try:
        arguments, end = model_json.raw_decode(text, name.end())
    except json.JSONDecodeError:
        raise ValueError(f"the arguments of {name.group(1)[:80]!r} are not valid JSON") from None
    return [_call(name.group(1), arguments)], end


def _pythonic_calls(body: str) -> list[ToolCall]:
    """Llama 3.2/4's pythonic calls, `[read_file(path="a.py"), …]`, as a whole reply.

    Read with `ast`, never evaluated: only a list of calls by plain name with keyword
    arguments whose values are literals counts.
    """
    if not body.endswith("]"):
        return []
    try:
        tree = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    if not isinstance(tree, ast.List) or not tree.elts:
        return []
    calls: list[ToolCall] = []
    for node in tree.elts:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return []
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return []
            try:
                arguments[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return []
        calls.append(_call(node.func.id, arguments))
    return calls


def _parse_python_tag(text: str, start: int) -> tuple[list[ToolCall], int]:
    """Llama's JSON calls after ``<|python_tag|>``, `;`-separated; and where they end."""
    at = start + len(_PYTHON_TAG)
    calls: list[ToolCall] = []
    while True:
        while at < len(text) and (text[at].isspace() or text[at] == ";"):
            at += 1
        if not text.startswith("{", at):
            break
        try:
            value, at = model_json.raw_decode(text, at)
        except json.JSONDecodeError:
            raise ValueError("the call after <|python_tag|> is not valid JSON") from None
        calls.extend(_from_object(value))
    if not calls:
        raise ValueError("<|python_tag|> is not followed by a JSON call")
    return calls, at


def _parse_function(text: str, start: int) -> tuple[list[ToolCall], int]:
    """``<function=name>{json}</function>`` (Llama 3.x also drops the ``>``:
    ``<function=name{json}</function>``) or ``<function=name><parameter=…>…``."""
    close = text.find("</function>", start)
    end = len(text) if close < 0 else close + len("</function>")
    json_form = _JSON_FUNCTION.match(text, start, end)
    if json_form is not None:
        name = json_form.group(1)
        try:
            arguments, _ = model_json.raw_decode(text[json_form.end() - 1 : end])
        except json.JSONDecodeError:
            raise ValueError(f"the arguments of {name[:80]!r} are not JSON") from None
        return [_call(name, arguments)], end
    if _XML_FUNCTION.match(text, start, end) is None:
        raise ValueError("<function= is not followed by a tool name")
    return _parse_block(text[start:end]), end


class _Unreadable(ValueError):
    """Markup that could not be read; `resume` is where reading goes on."""

    def __init__(self, why: str, resume: int) -> None:
        super().__init__(why)
        self.resume = resume


def _block(text: str, start: int, marker: str) -> tuple[str, int]:
    """The body of the call block `marker` opens at `start`, and where the block ends."""
    at = start + len(marker)
    if marker == _OPEN_WITH_ATTRIBUTES:
        tag_end = text.find(">", at)
        at = len(text) if tag_end < 0 else tag_end + 1
    elif marker == _FENCED:
        at = _FENCE_LABEL.match(text, at).end()  # type: ignore[union-attr]  # always matches
    close = text.find(_BLOCKS[marker], at)
    if close < 0:
        return text[at:], len(text)
    return text[at:close], close + len(_BLOCKS[marker])


_Reader = Callable[[str, int], tuple[list[ToolCall], int]]
_READERS: dict[str, _Reader] = {
    _MISTRAL: _parse_mistral,
    _PYTHON_TAG: _parse_python_tag,
    _FUNCTION: _parse_function,
}


def _read(text: str, start: int, marker: str) -> tuple[list[ToolCall], int]:
    """The calls of the markup `marker` opens at `start`, and where it ends."""
    if marker in _BLOCKS:
        body, end = _block(text, start, marker)
        try:
            return _parse_block(body), end
        except ValueError as exc:
            raise _Unreadable(str(exc), end) from None
    reader = _READERS.get(marker)
    try:
        if reader is None:  # a model's own call tokens `native_tokens` could not turn into calls
            raise ValueError(f"no readable call follows {marker.strip()!r}")
        return reader(text, start)
    except ValueError as exc:  # unreadable: nothing after it can be trusted as prose
        raise _Unreadable(str(exc), len(text)) from None


def _next_marker(text: str, at: int, seen: dict[str, int]) -> tuple[int, str]:
    """Where the first marker at or after `at` starts, and which; (len(text), "") if none.

    `seen` keeps where each marker was found last (-1: nowhere after), so each marker's
    search only moves forward: thousands of blocks cost one pass over the text."""
    first, found = len(text), ""
    for marker in MARKERS:
        index = seen.get(marker, at)
        if 0 <= index < at or marker not in seen:
            index = seen[marker] = text.find(marker, at)
        if 0 <= index < first or (index == first and len(marker) > len(found)):
            first, found = index, marker
    return first, found


def parse(text: str) -> TextCalls:
    """The calls a reply wrote as text, its prose without them, and what could not be read."""
    whole = _whole_reply_calls(text)
    if whole:
        return TextCalls("", whole, [])
    text = native_tokens.as_blocks(text)
    calls: list[ToolCall] = []
    errors: list[str] = []
    prose: list[str] = []
    at = 0
    seen: dict[str, int] = {}
    while at < len(text):
        start, marker = _next_marker(text, at, seen)
        prose.append(text[at:start])
        if not marker:
            break
        try:
            found, at = _read(text, start, marker)
            calls.extend(found)
        except _Unreadable as exc:
            errors.append(str(exc))
            at = exc.resume
    return TextCalls(_clean_prose("".join(prose)), calls, errors)


def strip_markup(text: str) -> str:
    """`text` without any call markup, for a reply that must not run calls."""
    return parse(text).prose


def prose(text: str) -> str:
    """A reply fit to show: without its call markup, or as it came when it has none."""
    return parse(text).prose if has_markup(text) else text


def _clean_prose(text: str) -> str:
    """Drop code fences the markup left empty, and the blank lines around it."""
    text = _EMPTY_FENCE.sub("", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()
