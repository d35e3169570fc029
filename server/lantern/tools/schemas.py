"""Tool arguments: one pydantic model per tool, and the JSON schema the model sees.

The schema sent to the model is generated from these same models
(`additionalProperties: false`), so what we advertise and what we accept
cannot drift apart. Validation errors read `field: problem`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lantern.workspace.text import MAX_LINES

LIST_DEFAULT_RESULTS = 200
LIST_MAX_RESULTS = 2000
SEARCH_DEFAULT_RESULTS = 50
SEARCH_MAX_RESULTS = 500


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _no_nul(value: str | None) -> str | None:
    """ripgrep gets patterns and globs as command-line words, which cannot hold a NUL."""
    if value is not None and "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


class ReadFileArgs(_Args):
    path: str = Field(description="Workspace-relative path of the file, e.g. src/app.py.")
    offset: int = Field(1, ge=1, description="1-based number of the first line to read.")
    limit: int = Field(
        MAX_LINES,
        ge=1,
        description=f"Number of lines to read (at most {MAX_LINES} and 32 KiB are returned).",
    )


class ListFilesArgs(_Args):
    path: str = Field(".", description="Workspace-relative folder to list; '.' is the root.")
    glob: str | None = Field(
        None,
        max_length=512,
        description="Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'.",
    )
    max_results: int = Field(
        LIST_DEFAULT_RESULTS,
        ge=1,
        description=f"At most this many files (up to {LIST_MAX_RESULTS}).",
    )

    _check_glob = field_validator("glob")(_no_nul)


class SearchArgs(_Args):
    pattern: str = Field(
        min_length=1, max_length=1000, description="Regular expression (ripgrep syntax)."
    )
    path: str = Field(".", description="Workspace-relative folder or file to search in.")
    glob: str | None = Field(
        None, max_length=512, description="Only files matching this glob, e.g. '*.py'."
    )
    case_sensitive: bool = Field(
        False, description="Match case exactly; by default matching ignores case."
    )
    max_results: int = Field(
        SEARCH_DEFAULT_RESULTS,
        ge=1,
        description=f"At most this many matching lines (up to {SEARCH_MAX_RESULTS}).",
    )

    _check_pattern_glob = field_validator("pattern", "glob")(_no_nul)


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
