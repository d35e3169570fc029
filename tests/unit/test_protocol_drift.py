"""The Python types of the wire and `vscode-extension/src/protocol.ts` say the same thing.

For every message the server sends (its dataclasses, as the one converter writes
them: `lantern.converter.sent_fields`) and every one a client sends (the attrs
params pygls structures), the TypeScript interface of the same message has the same
fields under the same camelCase names, and marks a field `?` exactly where the
server may leave it out (or, for what the server sends, a client may omit it). A
field the server always sends may be `?` in protocol.ts only where its line says an
older server did not send it. A field added, renamed or made optional on one side
only fails here.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import attrs
import pytest
from lantern.agent import events
from lantern.agent.failure import Detail, Fix
from lantern.agent.positions import Position, Range
from lantern.agent.provider.model_lists import LocalServer, ModelList
from lantern.agent.references import Reference
from lantern.agent.result import AskResult
from lantern.agent.tokens import Usage
from lantern.approvals.grants import Grant
from lantern.converter import sent_fields
from lantern.lsp import messages
from lantern.shapes import camel

PROTOCOL_TS = Path(__file__).resolve().parents[2] / "vscode-extension" / "src" / "protocol.ts"
OLDER = "older servers"  # a field the server always sends, optional for an older server

#: protocol.ts interface → the Python type(s) of that message; several: one interface
#: describes them all (a field in only some of them, or optional in one, is optional).
MESSAGES: dict[str, tuple[type, ...]] = {
    # server → client
    "AskResult": (AskResult,),
    "Reference": (Reference,),
    "Position": (Position,),
    "Range": (Range,),
    "ToolCall": (events.ToolCallRecord,),
    "Usage": (Usage,),
    "Detail": (Detail,),
    "Fix": (Fix,),
    "ResetResult": (messages.ResetResult,),
    "ServerInfo": (messages.InfoResult,),
    "GrantsResult": (messages.GrantsResult,),
    "Grant": (Grant,),
    "RevokeGrantResult": (messages.RevokeGrantResult,),
    "ModelList": (ModelList,),
    "LocalServersResult": (messages.LocalServersResult,),
    "LocalServer": (LocalServer,),
    "SuggestMentionsResult": (messages.SuggestMentionsResult,),
    "MentionSuggestion": (messages.MentionSuggestion,),
    "ApproveParams": (messages.ApproveParams,),
    "NavigateParams": (messages.NavigateParams,),
    "EventEnvelope": (messages.EventParams,),
    "ToolEvent": (events.ToolEvent,),
    "AnswerDeltaEvent": (events.AnswerDeltaEvent,),
    "ReasoningEvent": (events.ReasoningEvent,),
    "UsageEvent": (events.UsageEvent,),
    "ContextFill": (events.ContextFill,),
    "Compaction": (events.Compaction,),
    "StatusEvent": typing.get_args(events.Status),
    # client → server
    "AskParams": (messages.AskParams,),
    "AskContext": (messages.AskContext,),
    "MentionParam": (messages.MentionParam,),
    "SuggestMentionsParams": (messages.SuggestMentionsParams,),
    "MentionSymbol": (messages.MentionSymbol,),
    "EditorDiagnostic": (messages.EditorDiagnostic,),
    "HistoryTurn": (messages.HistoryTurn,),
    "ResetParams": (messages.ResetParams,),
    "GrantsParams": (messages.GrantsParams,),
    "RevokeGrantParams": (messages.RevokeGrantParams,),
    "ApproveResult": (messages.ApproveResult,),
}

Fields = dict[str, tuple[bool, str]]  # name → (optional, the rest of its line)
_FIELD = re.compile(r"^\s*(\w+)(\?)?\s*:\s*(.*)$")


def interfaces(text: str) -> dict[str, Fields]:
    """Each `export interface Name { … }` of `text`: its fields (those at its own depth)."""
    found: dict[str, Fields] = {}
    for match in re.finditer(r"export interface (\w+) \{", text):
        depth, at, fields = 1, match.end(), {}
        line_start = at
        while depth:
            char = text[at]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
            elif char == "\n":
                line = text[line_start:at].strip()
                field = _FIELD.match(line) if depth == 1 and line[:1] not in "/*" else None
                if field:
                    fields[field[1]] = (field[2] == "?", field[3])
                line_start = at + 1
            at += 1
        found[match[1]] = fields
    return found


def python_fields(kinds: tuple[type, ...]) -> dict[str, bool]:
    """name → may be absent, over one or several types of one message."""
    each = []
    for kind in kinds:
        if attrs.has(kind):  # what a client sends: a field with a default may be left out
            each.append({camel(a.name): a.default is not attrs.NOTHING for a in attrs.fields(kind)})
        else:
            each.append(sent_fields(kind))
    names = {name for fields in each for name in fields}
    return {name: any(fields.get(name, True) for fields in each) for name in names}


def drift(python: dict[str, bool], typescript: Fields) -> list[str]:
    problems = []
    for name in sorted(python.keys() - typescript.keys()):
        problems.append(f"{name} is sent but not in protocol.ts")
    for name in sorted(typescript.keys() - python.keys()):
        problems.append(f"{name} is in protocol.ts but not sent")
    for name in sorted(python.keys() & typescript.keys()):
        optional, (ts_optional, rest) = python[name], typescript[name]
        if optional and not ts_optional:
            problems.append(f"{name} may be absent: `{name}?` in protocol.ts")
        if ts_optional and not optional and OLDER not in rest:
            problems.append(f"{name} is always sent: `{name}` in protocol.ts")
    return problems


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_protocol_ts_matches_the_python_type(name: str) -> None:
    declared = interfaces(PROTOCOL_TS.read_text("utf-8"))
    assert name in declared, f"protocol.ts has no `export interface {name}`"
    assert drift(python_fields(MESSAGES[name]), declared[name]) == []


def test_every_message_type_is_held_against_protocol_ts() -> None:
    """A new message type of the server, or a new event, gets an interface too."""
    covered = {kind for kinds in MESSAGES.values() for kind in kinds}
    own = {
        value
        for value in vars(messages).values()
        if isinstance(value, type)
        and value.__module__ == messages.__name__
        and (attrs.has(value) or hasattr(value, "__dataclass_fields__"))
        and value is not messages.NoParams
    }
    assert own - covered == set()
    assert set(typing.get_args(events.Event)) - covered == set()


def test_drift_is_found_on_either_side() -> None:
    """The comparison fails on a field added on one side only, or optional on one side."""
    text = (
        "export interface T {\n  a: string;\n  b?: number; // x\n"
        "  c?: Z; // (absent from older servers)\n}\n"
    )
    ts = interfaces(text)["T"]
    assert drift({"a": False, "b": True, "c": False}, ts) == []
    assert drift({"a": False, "b": True, "c": False, "d": True}, ts) == [
        "d is sent but not in protocol.ts"
    ]
    assert drift({"a": False, "c": False}, ts) == ["b is in protocol.ts but not sent"]
    assert drift({"a": True, "b": False, "c": False}, ts) == [
        "a may be absent: `a?` in protocol.ts",
        "b is always sent: `b` in protocol.ts",
    ]
