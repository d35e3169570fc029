"""What a `--conversation-file` may hold, checked before anything in it is used.

The file is Lantern's own (`Conversation.to_json`), but it lies on disk where anything
may have written it, so nothing in it is trusted. `parsed` reads its text and `checked`
its JSON; each raises ValueError, in one line that quotes nothing of the file, unless:

- the JSON nests at most `MAX_DEPTH` levels (a 100,000-deep file is refused, not a
  crash) and is an object of version `FILE_VERSION` with a string `id`, a list of
  `messages` and, where present, a string `workspace` and a map of strings `answered`;
- each message is an object with a role Lantern writes: `user` and `tool` messages hold
  text and nothing else (a tool message also its call's id), an `assistant` message
  holds text or null, well-formed `tool_calls`, and the provider's own fields. A
  `system` message, or any other role, is refused: the system prompt is Lantern's own,
  sent fresh with every request.

What `instructions` hold is project instructions, repository text: each entry that is
not exactly a frame Lantern wrote is framed whole (`instruction_frame.reframed`).
"""

from __future__ import annotations

import json
from typing import Any

FILE_VERSION = 1
MAX_DEPTH = 32  # levels of JSON nesting: Lantern writes at most six
MAX_ID_CHARS = 200

_ROLES = "user, assistant and tool"


def parsed(text: str) -> dict[str, Any]:
    """The file's JSON, checked (see the module docstring)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError(f"its JSON nests more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON (line {exc.lineno}, column {exc.colno})") from None
    return checked(data)


def _depth(value: object) -> int:
    """How deep `value` nests (a scalar is 0), walked without recursion; it stops
    counting past `MAX_DEPTH`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level) for child in children)
    return deepest


def checked(data: object) -> dict[str, Any]:
    """`data` when it has the shape of a conversation file; else ValueError."""
    if not isinstance(data, dict) or data.get("version") != FILE_VERSION:
        raise ValueError("not a Lantern conversation file")
    if _depth(data) > MAX_DEPTH:
        raise ValueError(f"its JSON nests more than {MAX_DEPTH} levels deep")
    conversation_id = data.get("id")
    if not isinstance(conversation_id, str) or not 0 < len(conversation_id) <= MAX_ID_CHARS:
        raise ValueError("its id is missing or not a short string")
    if not isinstance(data.get("workspace", ""), str | None):
        raise ValueError("its workspace is not a string")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ValueError("its messages are not a list")
    for index, message in enumerate(messages):
        _check_message(index, message)
    answered = data.get("answered") or {}
    if not isinstance(answered, dict) or not all(isinstance(v, str) for v in answered.values()):
        raise ValueError("its answered calls are not a map of strings")
    return data


def _check_message(index: int, message: object) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise ValueError(f"{where} is not an object")
    role = message.get("role")
    if role not in ("user", "assistant", "tool"):
        raise ValueError(f"{where} has a role Lantern does not write (only {_ROLES})")
    content = message.get("content")
    if role == "assistant":
        if content is not None and not isinstance(content, str):
            raise ValueError(f"{where}: an assistant's content is not text")
        _check_calls(where, message.get("tool_calls"))
        return
    allowed = {"role", "content"} | ({"tool_call_id"} if role == "tool" else set())
    if not isinstance(content, str):
        raise ValueError(f"{where}: a {role} message's content is not text")
    if set(message) - allowed:
        raise ValueError(f"{where}: a {role} message has fields Lantern does not write")
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise ValueError(f"{where}: a tool result names no call")


def _check_calls(where: str, calls: object) -> None:
    if calls is None:
        return
    if not isinstance(calls, list):
        raise ValueError(f"{where}: its tool calls are not a list")
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("id"), str)
            or call.get("type", "function") != "function"
            or not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments"), str)
        ):
            raise ValueError(f"{where}: a tool call is not {{id, function: {{name, arguments}}}}")
