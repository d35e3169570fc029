"""The tools the model may call, their schemas, and the one way to run them.

Each tool is defined whole in its own module (its `TOOL`); this lists them, and loads a
tool's module when the tool is first asked for (`lantern tool read_file` loads no code
engine, the agent loads all six for their schemas). `run_tool`
never raises for anything the model or the disk can cause: bad JSON, bad arguments, an
unknown tool or any refusal becomes an `is_error` result with a stable code. Every call
is written to the audit log. On a platform the jail does not cover (`platform_gate.py`)
every call, whatever its name or arguments, is refused with `unsupported_platform`
before anything else.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from lantern.audit import AuditLog
from lantern.errors import ToolError
from lantern.escaping import cap, escape_line
from lantern.platform_gate import require_supported
from lantern.tools.arguments import describe_errors, parse_arguments, shown
from lantern.tools.base import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

NAMES = ("read_file", "list_files", "search", "outline", "find_symbol", "find_references")


@functools.cache
def _load(name: str) -> Tool:
    """The `TOOL` of the module that defines tool `name` (one of NAMES), imported now."""
    match name:
        case "read_file":
            from lantern.tools import read_file

            return read_file.TOOL
        case "list_files":
            from lantern.tools import list_files

            return list_files.TOOL
        case "search":
            from lantern.tools import search

            return search.TOOL
        case "outline":
            from lantern.tools import outline

            return outline.TOOL
        case "find_symbol":
            from lantern.tools import find_symbol

            return find_symbol.TOOL
        case "find_references":
            from lantern.tools import find_references

            return find_references.TOOL
    raise KeyError(name)


class _Tools(Mapping[str, Tool]):
    """The tools by name, in NAMES' order; each module is imported on first use."""

    def __getitem__(self, name: str) -> Tool:
        if name not in NAMES:  # checked first: `_load` keeps what it was asked for
            raise KeyError(name)
        return _load(name)

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def __contains__(self, name: object) -> bool:
        return name in NAMES


TOOLS: Mapping[str, Tool] = _Tools()


@functools.cache
def tool_specs() -> tuple[dict[str, Any], ...]:
    """The OpenAI `tools` entries, made once: each is a pydantic JSON schema, whose making
    costs about a millisecond a question otherwise."""
    return tuple(t.spec() for t in TOOLS.values())


def summarize(name: str, arguments: object) -> str:
    """A call in one line for people: `src/app.py · lines 1–400`, `/retry/ in src (*.py)`.

    Every `tool` event carries it as `summary`, so the CLI's activity lines, the editor's
    progress and the extension's panel read the same. Each value the model sent is cut
    and escaped onto one line; arguments that are not an object read
    `(malformed arguments)`.
    """
    if not isinstance(arguments, Mapping):
        return "(malformed arguments)"
    tool = TOOLS.get(name)
    if tool is not None:
        return tool.summarize(arguments)
    return shown(arguments["path"]) if "path" in arguments else ""


def _refused_path(arguments: Mapping[str, Any], ctx: ToolContext) -> str | None:
    """The audit path of a refused call: the requested path in its checked, relative form.

    None when the path has no valid shape (absolute, `..`, not a string…), so an
    absolute path never reaches the log.
    """
    raw = arguments.get("path", ".")
    try:
        targets = ctx.workspace.targets(raw, file=False)
    except ToolError:
        return None
    return "." if len(targets) > 1 else targets[0].rel


def _escaped(message: str) -> str:
    """A refusal's text with each line escaped: it may repeat the model's own argument,
    whose bidi or control characters must not reorder or split what the model reads."""
    return "\n".join(escape_line(line) for line in message.split("\n"))


async def run_tool(
    name: str,
    raw: str | Mapping[str, Any] | None,
    ctx: ToolContext,
    audit: AuditLog | None = None,
) -> ToolResult:
    started = time.perf_counter()
    arguments: dict[str, Any] | None = None
    try:
        require_supported()  # native Windows: every call is `unsupported_platform`
        tool = TOOLS.get(name)
        if tool is None:
            known = ", ".join(TOOLS)
            named = escape_line(cap(name, 80))
            raise ToolError("unknown_tool", f"there is no tool named '{named}'; tools: {known}")
        arguments = parse_arguments(raw)
        try:
            args = tool.args.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError("invalid_arguments", describe_errors(exc)) from None
        result = await tool.run(args, ctx)
    except ToolError as exc:
        decision = (
            "denied"
            if exc.code in ("denied_by_user", "approval_timeout")
            else f"refused:{exc.code}"
        )
        result = ToolResult(_escaped(exc.message), is_error=True, code=exc.code, decision=decision)
        if arguments is not None:
            result.path = _refused_path(arguments, ctx)
    except OSError as exc:
        log.warning("tool %s failed: %s", escape_line(cap(name, 80)), exc.strerror)
        result = ToolResult(
            f"could not complete {name}: {exc.strerror or 'I/O error'}",
            is_error=True,
            code="io_error",
            decision="refused:io_error",
        )
    if audit is not None:
        audit.tool_call(
            conversation=ctx.conversation_id,
            tool=name,
            path=result.path,
            decision=result.decision or "auto",
            content=result.content,
            ms=(time.perf_counter() - started) * 1000,
            source=result.source,
        )
    return result
