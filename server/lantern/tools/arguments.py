"""What every tool's arguments share: the strict pydantic base, the JSON schema the model
sees, the model's argument text read once, errors as `field: problem`, and the values a
one-line summary shows.

The schema sent to the model is generated from the same pydantic model that checks a
call (`additionalProperties: false`), so what we advertise and what we accept cannot
drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lantern import model_json
from lantern.errors import ToolError
from lantern.escaping import for_log

SUMMARY_VALUE_CHARS = 200  # each argument in a summary is cut here (the line stays readable)


class ToolArgs(BaseModel):
    """A tool's arguments: closed (an unknown argument is an error), strict, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def no_nul(value: str | None) -> str | None:
    """ripgrep gets patterns and globs as command-line words, which cannot hold a NUL."""
    if value is not None and "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The parameters schema for a tool, compact and closed."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    schema["additionalProperties"] = False
    for prop in schema.get("properties", {}).values():
        # `X | None` renders as anyOf[X, null]; the model only needs to see X.
        options = prop.pop("anyOf", None)
        if options:
            prop.update(next(o for o in options if o.get("type") != "null"))
        if prop.get("default", 0) is None:
            del prop["default"]
    return schema


def describe_errors(error: ValidationError) -> str:
    """`path: field required; offset: input should be greater than or equal to 1`."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown argument"
        parts.append(f"{where}: {message[:1].lower()}{message[1:]}")
    return "; ".join(parts)


def parse_arguments(raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """The model's argument text as an object, or `invalid_arguments`."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = model_json.loads(raw)  # 100,000 `[` are invalid JSON, not a RecursionError
    except json.JSONDecodeError as exc:
        raise ToolError("invalid_arguments", f"arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ToolError("invalid_arguments", "arguments must be a JSON object")
    return value


def shown(value: object) -> str:
    """One argument as a summary shows it: cut, escaped, on one line."""
    return for_log(value, SUMMARY_VALUE_CHARS)


def whole(value: object, default: int) -> int:
    """A positive whole number the model sent, else what the tool would use."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return default


def in_glob(arguments: Mapping[str, Any]) -> str:
    """` (*.py)` when the call narrows by a glob, else nothing."""
    glob = arguments.get("glob")
    return f" ({shown(glob)})" if glob is not None else ""
