"""What `lantern ask` prints: tool activity and status on stderr, the answer on stdout.

Much printed here came, at least in part, from a model, a workspace or an
endpoint, so it is data: one-line items (tool names, arguments, paths, a
provider's words) are escaped onto one line, and the answer has terminal control
sequences removed (an OSC 52 sequence in an answer would write the user's
clipboard). Lantern's own messages keep their line breaks: a failure is its
headline, then one line per fix, worded for the command line (flags and
environment variables; `failure_lines`). `--json` prints one JSON document that
is always valid UTF-8 and leaves every string exactly as it was (escaped, never
altered).
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from lantern.agent.loop import AskResult
from lantern.escaping import cap, escape_line, for_terminal, json_text

#: Settings `lantern ask` takes as flags: flag, placeholder, environment variable.
_FLAGS: dict[str, tuple[str, str, str | None]] = {
    "baseUrl": ("--base-url", "URL", "LANTERN_BASE_URL"),
    "model": ("--model", "NAME", "LANTERN_MODEL"),
    "apiKey": ("--api-key", "KEY", "LANTERN_API_KEY"),
    "maxSteps": ("--max-steps", "N", None),
    "toolProtocol": ("--tool-protocol", "auto|text", "LANTERN_TOOL_PROTOCOL"),
}
_CHOICES_SHOWN = 12

Event = dict[str, Any]

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


def fix_text(fix: dict[str, Any]) -> str:
    """One fix (the `fixes` items of a failure's data) as a command-line user applies it."""
    setting, value, note = fix.get("setting"), fix.get("value"), fix.get("note", "")
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
    choices = [escape_line(str(c)) for c in fix.get("choices") or ()]
    if choices:
        more = len(choices) - _CHOICES_SHOWN
        listed = ", ".join(choices[:_CHOICES_SHOWN]) + (f" and {more} more" if more > 0 else "")
        text += f"; the endpoint has: {listed}"
    return f"{text} — {escape_line(str(note))}" if note else text


def failure_lines(detail: dict[str, Any]) -> list[str]:
    """A failure's data as a person reads it: what happened and the provider's words on the
    first line, then each fix on its own line (`fix:`, then `or:`)."""
    headline = str(detail.get("summary") or detail.get("message") or "")
    words = detail.get("providerMessage")
    lines = [f"{headline}: {escape_line(str(words))}" if words else headline]
    for number, fix in enumerate(detail.get("fixes") or ()):
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
        kind = event.get("kind")
        if kind == "tool":
            self._tool(event)
        elif kind == "reasoning":
            self._reasoning()
        elif kind == "status":
            self._status(event)

    def _print(self, line: str) -> None:
        print(line, file=self.err, flush=True)

    def _tool(self, event: Event) -> None:
        status = event.get("status")
        if status == "running" and "bytes" not in event:
            return
        name = one_line(event.get("name", ""), 80)
        # The loop escaped the summary already; escaping again keeps any caller's text safe.
        summary = one_line(event.get("summary", ""), 1000)
        line = f"  {name} {summary}".rstrip() + f" … {one_line(status)}"
        if event.get("code"):
            line += f" ({one_line(event['code'])})"
        if "bytes" in event:
            line += f" · {event['bytes']:,} B · {event.get('ms', 0):.0f} ms"
        wait = event.get("waitMs")
        if isinstance(wait, int | float) and wait > 0:  # time the prompt was open
            line += f" · {wait / 1000:.1f} s waiting for approval"
        self._print(line)

    def _reasoning(self) -> None:
        """At most one `thinking…` line per step; the reasoning itself is never printed."""
        if self.as_json or self._thought_in_step:
            return
        self._thought_in_step = True
        tty = getattr(self.err, "isatty", lambda: False)()
        self._print(f"{_DIM}thinking…{_RESET}" if tty else "thinking…")

    def _status(self, event: Event) -> None:
        status = event.get("status")
        message = event.get("message")
        if status == "thinking":
            self._thought_in_step = False
        elif status == "retrying":
            self._print(f"lantern: {one_line(message, 500)}; retrying")
        elif status == "protocol" and message and "protocol" not in self._said:
            self._said.add("protocol")
            self._print(f"lantern: {one_line(message, 500)}")
        elif status == "compacted" and message:
            self._print(f"lantern: {one_line(message, 500)}")
        elif status == "warning" and isinstance(event.get("detail"), dict):
            lines = failure_lines(event["detail"])
            self._print("\n".join([f"lantern: warning: {lines[0]}", *lines[1:]]))


def token_counts(usage: dict[str, Any]) -> str:
    """`1,200 prompt + 35 completion tokens`, each count marked `~` when estimated."""
    mark = "~" if usage.get("estimated") else ""
    prompt, completion = usage.get("promptTokens", 0), usage.get("completionTokens", 0)
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
    data = result.to_dict()
    usage, context = data.get("usage"), data.get("context")
    if isinstance(usage, dict) and (usage.get("promptTokens") or usage.get("completionTokens")):
        print(f"lantern: {token_counts(usage)}", file=err)
        if isinstance(context, dict) and context.get("used"):  # the model answered
            print(f"lantern: {context_line(context)}", file=err)


def context_line(context: dict[str, Any]) -> str:
    """`context window: 3,120 of 8,192 used (38%; Ollama /api/ps: the loaded model)`, and
    what happens next when the window is 80% full."""
    used, window = int(context["used"]), int(context["window"])
    share = used * 100 // window if window else 100
    source = one_line(str(context.get("source", "")), 200)
    line = f"context window: {used:,} of {window:,} used ({share}%; {source})"
    if share >= 80:
        line += "; earlier turns will be summarized when the window is full"
    return line


def print_json(result: AskResult, out: TextIO | None = None) -> None:
    print(json_text(result.to_dict()), file=out or sys.stdout)
