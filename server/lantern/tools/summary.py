"""A tool call in one line for people: `src/app.py · lines 1–400`, `/retry/ in src (*.py)`.

The loop puts it in every `tool` event as `summary`; the CLI's activity lines,
the editor's progress notification and the extension's answer panel all show
it after the tool's name, so one call reads the same everywhere. Each value the
model sent is cut and escaped onto one line, so a summary never carries a
control character, a line break or a wall of text.
"""

from __future__ import annotations

from lantern.escaping import for_log
from lantern.workspace.text import MAX_LINES

VALUE_CHARS = 200  # each argument is cut here (the whole line stays readable)


def _value(value: object) -> str:
    return for_log(value, VALUE_CHARS)


def _whole(value: object, default: int) -> int:
    """A positive whole number the model sent, else what the tool would use."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return default


def summarize(name: str, arguments: object) -> str:
    """What the call `name(arguments)` asks for; arguments not parsed as a JSON object
    read `(malformed arguments)`. A read's window is what the tool shows at most."""
    if not isinstance(arguments, dict):
        return "(malformed arguments)"
    path = _value(arguments.get("path", "."))
    glob = arguments.get("glob")
    in_glob = f" ({_value(glob)})" if glob is not None else ""
    if name == "read_file":
        first = _whole(arguments.get("offset"), 1)
        count = min(_whole(arguments.get("limit"), MAX_LINES), MAX_LINES)
        return f"{path} · lines {first}–{first + count - 1}"
    if name == "search":
        return f"/{_value(arguments.get('pattern', ''))}/ in {path}{in_glob}"
    if name == "list_files":
        return f"{path}{in_glob}"
    return _value(arguments["path"]) if "path" in arguments else ""
