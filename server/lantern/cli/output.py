"""What `lantern ask` prints: tool activity and status on stderr, the answer on stdout.

Much printed here came, at least in part, from a model, a workspace or an
endpoint, so it is data: one-line items (tool names, arguments, paths, a
provider's words) are escaped onto one line, and the answer has terminal control
sequences removed (an OSC 52 sequence in an answer would write the user's
clipboard). Lantern's own messages keep their line breaks: a failure is its
headline, then one line per fix, worded for the command line (flags and
environment variables; `failure_lines`). `--json` prints one JSON document that
is always valid UTF-8 and leaves every string exactly as it was (escaped, never
altered): the `lantern/ask` result, written by the language server's own writer
(`lantern.converter.to_json`).
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from lantern.agent.events import (
    CompactedStatus,
    ContextFill,
    Event,
    ProtocolStatus,
    RetryingStatus,
    Status,
    ThinkingStatus,
    ToolEvent,
    WarningStatus,
)
from lantern.agent.failure import Detail, Fix
from lantern.agent.result import AskResult
from lantern.agent.tokens import Usage
from lantern.converter import to_json
from lantern.escaping import cap, escape_line, for_terminal, json_text
from lantern.shapes import tenths

#: Settings `lantern ask` takes as flags: flag, placeholder, environment variable.
_FLAGS: dict[str, tuple[str, str, str | None]] = {
    "baseUrl": ("--base-url", "URL", "LANTERN_BASE_URL"),
    "model": ("--model", "NAME", "LANTERN_MODEL"),
    "apiKey": ("--api-key", "KEY", "LANTERN_API_KEY"),
    "maxSteps": ("--max-steps", "N", None),
    "toolProtocol": ("--tool-protocol", "auto|text", "LANTERN_TOOL_PROTOCOL"),
}
_CHOICES_SHOWN = 12

ARG_CHARS = 200
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def one_line(value: object, limit: int = ARG_CHARS) -> str:
    """A value from a model or the disk, escaped and bounded for one line of output."""
    return escape_line(cap(value if isinstance(value, str) else repr(value), limit))


def say(text: str, err: TextIO | None = None) -> None:
    """Lantern's own message on stderr, its lines kept: `lantern: ` before the first."""
    print("lantern: " + for_terminal(text).rstrip("\n"), file=err or sys.stderr, flush=True)


def _flag_value(value: object) -> str:
    text = str(value)
    return escape_line(json.dumps(text) if not text or any(c.isspace() for c in text) else text)


def _toml_value(value: object) -> str:
    return escape_line(json.dumps(value, ensure_ascii=False))


def fix_text(fix: Fix) -> str:
    """One fix (the `fixes` items of a failure's data) as a command-line user applies it."""
    setting, value, note = fix.setting, fix.value, fix.note
    if not setting:
        return escape_line(str(note))
    if setting in _FLAGS:
        flag, placeholder, variable = _FLAGS[setting]
        shown = _flag_value(value) if value is not None else placeholder
        other = [f"{variable}" if variable else "", f"{setting} in config.toml"]
        text = f"{flag} {shown} (or {', or '.join(o for o in other if o)})"
    elif value is not None:
        text = f"{setting} = {_toml_value(value)} in config.toml"
    else:
        text = f"change {setting} in config.toml"
    choices = [escape_line(str(c)) for c in fix.choices]
    if choices:
        more = len(choices) - _CHOICES_SHOWN
        listed = ", ".join(choices[:_CHOICES_SHOWN]) + (f" and {more} more" if more > 0 else "")
        text += f"; the endpoint has: {listed}"
    return f"{text} — {escape_line(str(note))}" if note else text


def failure_lines(detail: Detail) -> list[str]:
    """A failure's data as a person reads it: what happened and the provider's words on the
    first line, then each fix on its own line (`fix:`, then `or:`)."""
    headline = detail.summary or detail.message
    words = detail.provider_message
    lines = [f"{headline}: {escape_line(words)}" if words else headline]
    for number, fix in enumerate(detail.fixes):
        lines.append(f"  {'fix' if number == 0 else ' or'}: {fix_text(fix)}")
    return lines


class EventPrinter:
    """Prints the events of one question on stderr, each kind as often as it is useful."""

    def __init__(self, *, as_json: bool, err: TextIO | None = None) -> None:
        self.as_json = as_json
        self.err = err or sys.stderr
        self._thought_in_step = False
        self._said: set[str] = set()

    def __call__(self, event: Event) -> None:
        if event.kind == "tool":
            self._tool(event)
        elif event.kind == "reasoning":
            self._reasoning()
        elif event.kind == "status":
            self._status(event)

    def _print(self, line: str) -> None:
        print(line, file=self.err, flush=True)

    def _tool(self, event: ToolEvent) -> None:
        status = event.status
        if status == "running" and event.bytes is None:
            return
        name = one_line(event.name, 80)
        # The loop escaped the summary already; escaping again keeps any caller's text safe.
        summary = one_line(event.summary, 1000)
        line = f"  {name} {summary}".rstrip() + f" … {one_line(status)}"
        if event.code:
            line += f" ({one_line(event.code)})"
        if event.bytes is not None:
            line += f" · {event.bytes:,} B · {tenths(event.ms or 0):.0f} ms"
        if event.wait_ms > 0:  # time the prompt was open
            line += f" · {tenths(event.wait_ms) / 1000:.1f} s waiting for approval"
        self._print(line)

    def _reasoning(self) -> None:
        """At most one `thinking…` line per step; the reasoning itself is never printed."""
        if self.as_json or self._thought_in_step:
            return
        self._thought_in_step = True
        tty = getattr(self.err, "isatty", lambda: False)()
        self._print(f"{_DIM}thinking…{_RESET}" if tty else "thinking…")

    def _status(self, event: Status) -> None:
        if isinstance(event, ThinkingStatus):
            self._thought_in_step = False
        elif isinstance(event, RetryingStatus):
            self._print(f"lantern: {one_line(event.message, 500)}; retrying")
        elif isinstance(event, ProtocolStatus) and "protocol" not in self._said:
            self._said.add("protocol")
            self._print(f"lantern: {one_line(event.message, 500)}")
        elif isinstance(event, CompactedStatus):
            self._print(f"lantern: {one_line(event.message, 500)}")
        elif isinstance(event, WarningStatus):
            lines = failure_lines(event.detail)
            self._print("\n".join([f"lantern: warning: {lines[0]}", *lines[1:]]))


def token_counts(usage: Usage) -> str:
    """`1,200 prompt + 35 completion tokens`, each count marked `~` when estimated."""
    mark = "~" if usage.estimated else ""
    prompt, completion = usage.prompt_tokens, usage.completion_tokens
    return f"{mark}{prompt:,} prompt + {mark}{completion:,} completion tokens"


def print_text(result: AskResult, out: TextIO | None = None, err: TextIO | None = None) -> None:
    """The answer and its references on stdout; the token counts on stderr."""
    out, err = out or sys.stdout, err or sys.stderr
    if result.answer:
        print(for_terminal(result.answer), file=out)
    if result.references:
        print("\nReferences:", file=out)
        for ref in result.references:
            marks = "verified" if ref.verified else "unverified"
            if ref.seen:
                marks += ", seen"
            lines = (
                str(ref.start_line)
                if ref.start_line == ref.end_line
                else f"{ref.start_line}-{ref.end_line}"
            )
            print(f"  {one_line(ref.path, 500)}:{lines} ({marks})", file=out)
    if result.usage.prompt_tokens or result.usage.completion_tokens:
        print(f"lantern: {token_counts(result.usage)}", file=err)
        if result.context is not None and result.context.used:  # the model answered
            print(f"lantern: {context_line(result.context)}", file=err)


def context_line(context: ContextFill) -> str:
    """`context window: 3,120 of 8,192 used (38%; Ollama /api/ps: the loaded model)`, and
    what happens next when the window is 80% full."""
    share = context.used * 100 // context.window if context.window else 100
    source = one_line(context.source, 200)
    line = f"context window: {context.used:,} of {context.window:,} used ({share}%; {source})"
    if context.warns:
        line += "; earlier turns will be summarized when the window is full"
    return line


def print_json(result: AskResult, out: TextIO | None = None) -> None:
    print(json_text(to_json(result)), file=out or sys.stdout)
