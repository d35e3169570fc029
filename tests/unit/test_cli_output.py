"""What `lantern ask` prints for each event and for the result (`cli_output`)."""

from __future__ import annotations

import io
import json
from dataclasses import replace

from lantern.agent.events import (
    AnswerDeltaEvent,
    Event,
    ProtocolStatus,
    ReasoningEvent,
    ThinkingStatus,
    ToolCallRecord,
    ToolEvent,
    tool_event,
)
from lantern.agent.loop import AskResult
from lantern.agent.provider.client import Usage
from lantern.agent.references import Reference
from lantern.cli.output import EventPrinter, print_json, print_text

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def feed(printer: EventPrinter, events: list[Event]) -> None:
    for event in events:
        printer(event)


def steps_with_reasoning() -> list[Event]:
    events: list[Event] = []
    for step in (1, 2):
        events.append(ThinkingStatus(step))
        events += [ReasoningEvent(f"secret plan {step}.{i}") for i in range(5)]
        events.append(AnswerDeltaEvent("Hi"))
    return events


def test_reasoning_is_one_thinking_line_per_step_and_never_its_text() -> None:
    err = io.StringIO()
    feed(EventPrinter(as_json=False, err=err), steps_with_reasoning())
    assert err.getvalue() == "thinking…\nthinking…\n"


def test_reasoning_line_is_dim_on_a_terminal() -> None:
    err = Tty()
    feed(EventPrinter(as_json=False, err=err), steps_with_reasoning()[:3])
    assert err.getvalue() == "\x1b[2mthinking…\x1b[0m\n"


def test_reasoning_prints_nothing_in_json_mode() -> None:
    err = io.StringIO()
    feed(EventPrinter(as_json=True, err=err), steps_with_reasoning())
    assert err.getvalue() == ""


def test_protocol_switch_is_said_once() -> None:
    err = io.StringIO()
    switch = ProtocolStatus(
        "text", "model 'm' does not take native tool calls here; using the text tool protocol"
    )
    for as_json in (False, True):
        err = io.StringIO()
        feed(EventPrinter(as_json=as_json, err=err), [switch, switch])
        assert err.getvalue() == f"lantern: {switch.message}\n"


def test_tool_lines_escape_what_the_model_sent() -> None:
    err = io.StringIO()
    printer = EventPrinter(as_json=False, err=err)
    arguments = {"path": f"src/{OSC52}\u2028x", "pattern": "\ud800" * 1000}
    record = ToolCallRecord("c1", f"read{OSC52}\n", arguments, bytes=10, code="unknown_tool")
    printer(tool_event(record, "error"))
    line = err.getvalue()
    assert line.count("\n") == 1 and line.endswith("\n")
    for char in ("\x1b", "\x07", "\u2028", "\ud800"):
        assert char not in line
    line.encode("utf-8")
    assert "read\\u001b]52;c;cm0gLXJmIH4=\\u0007\\n" in line
    assert "src/\\u001b]52" in line and "\\u2028x" in line


def test_tool_line_shows_the_summary_and_escapes_it_again() -> None:
    """The line is the loop's one-line summary; a summary that still held a control
    character (a caller other than the loop) is escaped here too."""
    err = io.StringIO()
    printer = EventPrinter(as_json=False, err=err)
    done = ToolEvent("c1", "read_file", {}, "", "done", bytes=1200, ms=3.0)
    printer(replace(done, summary="src/app.py · lines 1–400"))
    printer(replace(done, summary=f"a{OSC52}.py"))
    printer(replace(done, name="odd_tool", summary=""))
    first, second, third = err.getvalue().splitlines()
    assert first == "  read_file src/app.py · lines 1–400 … done · 1,200 B · 3 ms"
    assert "\x1b" not in second and "a\\u001b]52" in second
    assert third == "  odd_tool … done · 1,200 B · 3 ms"


def result(answer: str, usage: Usage, path: str = "src/app.py") -> AskResult:
    ref = Reference(
        path=path, start_line=1, end_line=2, verified=False, seen=False, span=(0, 1), uri=None
    )
    return AskResult("c1", answer, [ref], [], usage, "done", "m")


def test_text_output_strips_control_sequences() -> None:
    out, err = io.StringIO(), io.StringIO()
    answer = f"See{OSC52} src/app.py:1-2.\x1b[2J\x9b31m\rDone\ud800\r\nok\u202e"
    print_text(result(answer, Usage(10, 2), path=f"src/{OSC52}"), out=out, err=err)
    text = out.getvalue()
    for char in ("\x1b", "\x07", "\x9b", "\r", "\u202e", "\ud800"):
        assert char not in text
    assert text.startswith("See src/app.py:1-2.Done\ufffd\nok\n")
    assert "  src/\\u001b]52;c;cm0gLXJmIH4=\\u0007:1-2 (unverified)" in text


def test_token_counts_marked_when_estimated() -> None:
    for usage, shown in (
        (Usage(1200, 35), "lantern: 1,200 prompt + 35 completion tokens\n"),
        (Usage(1200, 35, estimated=True), "lantern: ~1,200 prompt + ~35 completion tokens\n"),
    ):
        out, err = io.StringIO(), io.StringIO()
        print_text(result("ok", usage), out=out, err=err)
        assert err.getvalue() == shown
        assert "tokens" not in out.getvalue()


def test_json_output_is_exact_and_terminal_safe() -> None:
    out = io.StringIO()
    answer = f"See{OSC52}\u2028\x85\ud800 é"
    print_json(result(answer, Usage(1, 1, estimated=True)), out=out)
    text = out.getvalue()
    for char in ("\x1b", "\x07", "\u2028", "\x85", "\ud800"):
        assert char not in text
    text.encode("utf-8")
    assert "é" in text  # non-ASCII text stays readable
    data = json.loads(text)
    assert data["answer"] == answer
    assert data["usage"] == {"promptTokens": 1, "completionTokens": 1, "estimated": True}
