"""What `lantern ask` prints: tool activity and status on stderr, the answer on stdout.

Everything printed here came, at least in part, from a model or a workspace,
so it is data: one-line items (tool names, arguments, paths, messages) are
escaped onto one line, and the answer has terminal control sequences removed
(an OSC 52 sequence in an answer would write the user's clipboard). `--json`
prints one JSON document that is always valid UTF-8 and leaves every string
exactly as it was (escaped, never altered).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from lantern.agent.loop import AskResult
from lantern.escaping import cap, escape_line, for_terminal, json_text

Event = dict[str, Any]

ARG_CHARS = 200
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def one_line(value: object, limit: int = ARG_CHARS) -> str:
    """A value from a model or the disk, escaped and bounded for one line of output."""
    return escape_line(cap(value if isinstance(value, str) else repr(value), limit))


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
    usage = result.to_dict().get("usage")
    if isinstance(usage, dict) and (usage.get("promptTokens") or usage.get("completionTokens")):
        print(f"lantern: {token_counts(usage)}", file=err)


def print_json(result: AskResult, out: TextIO | None = None) -> None:
    print(json_text(result.to_dict()), file=out or sys.stdout)
