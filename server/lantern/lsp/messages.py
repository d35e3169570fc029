"""Lantern's own LSP methods as types: what a client sends, and what the server sends.

pygls 2 structures a message with the type its protocol's `get_message_type(method)`
returns (and a reply to the server's own request with `get_result_type(method)`);
a method it does not know arrives as a generic object. `LanternProtocol`
(`protocol.py`) maps each method below to its message type, so a handler gets
typed params (`AskParams`, …) and returns a typed result. The shapes are in
docs/protocol.md#requests, and in `vscode-extension/src/protocol.ts`
(`tests/unit/test_protocol_drift.py` holds the two together).

What a client sends is attrs types, structured by lsprotocol's converter
(camelCase names, unknown fields ignored, so a client may add fields) plus strict
leaf hooks for these types only: cattrs would turn `5` into `"5"` for a `str`
field, and a string is iterable, so `"turns"` would be read as a list. A value of
the wrong kind raises `ParamError`, which `protocol.invalid_params` turns into
the -32602 message a client sees (`question must be a non-empty string`,
`history[0].answer must be a string`). Every string a client sends has its lone
surrogates replaced (it could not be encoded for the model or the file system).

What the server sends is dataclasses, written by the one converter's rule
(`lantern.converter`, registered on the same converter): the `lantern/ask`
result is the agent's own `AskResult`, `lantern/models` the `ModelList`, and the
wrappers below hold the session's values (`Grant`, `LocalServer`) as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override
from lsprotocol import types
from pygls.protocol import default_converter

from lantern import converter as lantern_converter
from lantern.agent.positions import Position, Range
from lantern.approvals.grants import Grant
from lantern.escaping import replace_surrogates
from lantern.shapes import INLINE, OPTIONAL, camel
from lantern.workspace.suggestions import MAX_SYMBOLS

if TYPE_CHECKING:  # the agent side, loaded on first use (`session.load_agent_side`)
    from lantern.agent.events import Event
    from lantern.agent.provider.model_lists import LocalServer

ASK = "lantern/ask"
RESET = "lantern/resetConversation"
INFO = "lantern/info"  # lets an editor show the version, the model and the audit log
GRANTS = "lantern/grants"
REVOKE_GRANT = "lantern/revokeGrant"
MODELS = "lantern/models"
LOCAL_SERVERS = "lantern/localServers"
SUGGEST_MENTIONS = "lantern/suggestMentions"  # the completion list of `@` in a question box
APPROVE = "lantern/approve"  # server → client
NAVIGATE = "lantern/navigate"  # server → client
EVENT = "lantern/event"  # server → client notification

_ID: Any = int | str  # a JSON-RPC id


class ParamError(ValueError):
    """A value of the wrong kind: the message says what it must be (`a string`)."""


# ----------------------------------------------------------------- params (client → server)


@attrs.define
class NoParams:
    """Params of a method that takes none; whatever a client sends is ignored."""


@attrs.define
class HistoryTurn:
    question: str
    answer: str


@attrs.define
class EditorDiagnostic:
    """One of the active file's problems, as LSP's `Diagnostic` (other fields ignored)."""

    range: types.Range
    message: str
    severity: int | None = attrs.field(default=None, metadata={"severity": True})
    source: str | None = None


@attrs.define
class AskContext:
    """The editor's state: the active file, the selection (`range`), the visible lines,
    the file's problems."""

    uri: str
    range: types.Range | None = None
    visible_range: types.Range | None = None
    diagnostics: list[EditorDiagnostic] | None = None


@attrs.define
class MentionParam:
    """A file or folder the user named with the question (`@file`, `@folder` in a question
    box): `range`, some of a file's lines (a symbol's)."""

    uri: str
    range: types.Range | None = None


@attrs.define
class AskParams:
    question: str = attrs.field(metadata={"non_empty": True})
    conversation_id: str | None = None
    context: AskContext | None = None
    history: list[HistoryTurn] | None = None
    mentions: list[MentionParam] | None = None
    work_done_token: str | int | None = None


@attrs.define
class MentionSymbol:
    """One of the client's workspace symbols for the query, its file to be checked."""

    name: str
    uri: str
    range: types.Range
    kind: str | None = None
    container_name: str | None = None


@attrs.define
class SuggestMentionsParams:
    query: str
    #: only the first `MAX_SYMBOLS` are looked at (or structured)
    symbols: list[MentionSymbol] | None = attrs.field(default=None, metadata={"first": MAX_SYMBOLS})


@attrs.define
class ResetParams:
    conversation_id: str


@attrs.define
class GrantsParams:
    conversation_id: str | None = None


@attrs.define
class RevokeGrantParams:
    id: str


# ----------------------------------------------------------------- results (server → client)


@dataclass(frozen=True)
class ResetResult:
    reset: bool


@dataclass(frozen=True)
class InfoResult:
    version: str
    model: str | None
    audit_log: str
    read_max_lines: int  # the most lines one read_file call shows


@dataclass(frozen=True)
class GrantsResult:
    grants: list[Grant]


@dataclass(frozen=True)
class RevokeGrantResult:
    revoked: bool


@dataclass(frozen=True)
class LocalServersResult:
    servers: list[LocalServer]


@dataclass(frozen=True)
class MentionSuggestion:
    """One item of `@`'s completion list; `refused`: why it cannot be mentioned."""

    kind: str  # "file", "folder" or "symbol"
    label: str
    uri: str
    detail: str | None = field(default=None, metadata=OPTIONAL)  # a symbol's `path:line`
    range: Range | None = field(default=None, metadata=OPTIONAL)  # a symbol's, as given
    refused: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class SuggestMentionsResult:
    items: list[MentionSuggestion]


# ----------------------------------------------------------------- server → client


@dataclass(frozen=True)
class ApproveParams:
    conversation_id: str | None
    call_id: str | None
    tool: str
    message: str
    path: str
    folder: bool
    actions: list[str]
    timeout_seconds: float
    pattern: str | None = field(default=None, metadata=OPTIONAL)
    start_line: int | None = field(default=None, metadata=OPTIONAL)
    end_line: int | None = field(default=None, metadata=OPTIONAL)
    size: int | None = field(default=None, metadata=OPTIONAL)


@attrs.define
class ApproveResult:
    action: str | None = None


@dataclass(frozen=True)
class NavigateParams:
    """`lantern/navigate` (docs/protocol.md#navigation); its result is checked field by
    field by `navigator.py` (untrusted), so pygls hands it over as plain JSON."""

    op: str
    uri: str | None = field(default=None, metadata=OPTIONAL)
    position: Position | None = field(default=None, metadata=OPTIONAL)
    query: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class EventParams:
    """`lantern/event`: the envelope, and one event's fields (`kind`, …) beside it."""

    conversation_id: str | None
    request_id: str | int | None
    event: Event = field(metadata=INLINE)


def _message(name: str, params: Any, *, request: bool, optional: bool = False) -> type:
    """The JSON-RPC message class pygls builds or structures for one method."""
    fields: dict[str, Any] = {}
    if request:
        fields["id"] = attrs.field(type=_ID)
    fields["method"] = attrs.field(type=str)
    fields["jsonrpc"] = attrs.field(type=str)
    fields["params"] = (
        attrs.field(type=params | None, default=None) if optional else attrs.field(type=params)
    )
    return attrs.make_class(name, fields)


def _response(name: str, result: Any) -> type:
    return attrs.make_class(
        name,
        {
            "id": attrs.field(type=_ID),
            "jsonrpc": attrs.field(type=str),
            "result": attrs.field(type=result | None, default=None),
        },
    )


#: method → the type pygls structures an incoming message as, or builds an outgoing one from.
MESSAGE_TYPES: dict[str, type] = {
    ASK: _message("AskRequest", AskParams, request=True),
    RESET: _message("ResetRequest", ResetParams, request=True),
    INFO: _message("InfoRequest", NoParams, request=True, optional=True),
    GRANTS: _message("GrantsRequest", GrantsParams, request=True, optional=True),
    REVOKE_GRANT: _message("RevokeGrantRequest", RevokeGrantParams, request=True),
    MODELS: _message("ModelsRequest", NoParams, request=True, optional=True),
    LOCAL_SERVERS: _message("LocalServersRequest", NoParams, request=True, optional=True),
    SUGGEST_MENTIONS: _message("SuggestMentionsRequest", SuggestMentionsParams, request=True),
    APPROVE: _message("ApproveRequest", ApproveParams, request=True),
    NAVIGATE: _message("NavigateRequest", NavigateParams, request=True),
    EVENT: _message("EventNotification", EventParams, request=False),
}
#: method → the type of the client's reply to a request the server sends.
RESULT_TYPES: dict[str, type] = {
    APPROVE: _response("ApproveResponse", ApproveResult),
    NAVIGATE: _response("NavigateResponse", Any),  # plain JSON: checked in navigator.py
}

_OWN_TYPES = {
    NoParams,
    HistoryTurn,
    EditorDiagnostic,
    AskContext,
    AskParams,
    ResetParams,
    GrantsParams,
    RevokeGrantParams,
    MentionSymbol,
    SuggestMentionsParams,
    ApproveResult,
}


# ----------------------------------------------------------------- strict hooks


def _text(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise ParamError("a string")
    return str(replace_surrogates(value))


def _optional_text(value: Any, _: Any) -> str | None:
    return None if value is None else _text(value, _)


def _non_empty_text(value: Any, _: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ParamError("a non-empty string")
    return _text(value, _)


def _token(value: Any, _: Any) -> str | int | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ParamError("a string or an integer")


def _severity(value: Any, _: Any) -> int | None:
    if value is None or (type(value) is int and 1 <= value <= 4):
        return value
    raise ParamError("1, 2, 3 or 4 (error, warning, information, hint)")


def _list_of(
    converter: cattrs.Converter, item: Any, first: int | None = None
) -> Callable[[Any, Any], Any]:
    """A strict hook for a list of `item`; `first`: only that many are kept, the rest are
    dropped before they are structured."""

    def hook(value: Any, _: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ParamError("a list")
        return converter.structure(value[:first], list[item])

    return hook


def _strict_hook(converter: cattrs.Converter, attribute: attrs.Attribute[Any]) -> Any:
    kind = attribute.type
    if attribute.metadata.get("non_empty"):
        return _non_empty_text
    if attribute.metadata.get("severity"):
        return _severity
    simple: dict[Any, Callable[[Any, Any], Any]] = {
        str: _text,
        str | None: _optional_text,
        str | int | None: _token,
    }
    if kind in simple:
        return simple[kind]
    lists = (
        (list[HistoryTurn], HistoryTurn),
        (list[EditorDiagnostic], EditorDiagnostic),
        (list[MentionSymbol], MentionSymbol),
    )
    first = attribute.metadata.get("first")
    for listed, item in lists:
        if kind == listed:
            return _list_of(converter, item, first)
        if kind == listed | None:
            strict = _list_of(converter, item, first)
            return lambda value, _: None if value is None else strict(value, _)
    return None  # nested attrs types and lsprotocol's: the converter's own hook


def _structure_own(converter: cattrs.Converter) -> Callable[[type], Any]:
    def factory(cls: type) -> Any:
        attrs.resolve_types(cls)
        overrides: dict[str, Any] = {
            a.name: override(rename=camel(a.name), struct_hook=_strict_hook(converter, a))
            for a in attrs.fields(cls)
        }
        return make_dict_structure_fn(cls, converter, **overrides)

    return factory


@functools.cache
def converter() -> cattrs.Converter:
    """pygls's converter (lsprotocol's hooks) with strict hooks for what a client sends and
    the one rule for what Lantern sends (`lantern.converter`); one for the process, the
    server's `converter_factory`."""
    made: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    made.register_structure_hook_factory(lambda cls: cls in _OWN_TYPES, _structure_own(made))
    return lantern_converter.register(made)
