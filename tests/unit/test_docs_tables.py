"""The reference tables in docs/ say what the code does.

docs/settings.md's settings table (one row per setting: name, default, …) must list
exactly the settings of `lantern.settings.Settings`, each once, with its default;
docs/agent-loop.md's limits table (setting and what it limits, default, stop reason)
must name real settings with their defaults, and real stop reasons, and list every
setting the loop reads (found in its source) that is a limit; docs/tools.md's error codes
must be exactly a tool error's codes; docs/protocol.md's method tables must list exactly the
methods the language server handles and the `lantern/…` ones it sends, each with its kind.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, get_args

import attrs
import pytest
from lantern.agent.loop import StopReason
from lantern.errors import ErrorCode
from lantern.lsp.messages import MESSAGE_TYPES
from lantern.lsp.server import build_server
from lantern.settings.model import Settings, setting_names
from lsprotocol import types
from pydantic.alias_generators import to_camel

DOCS = Path(__file__).resolve().parents[2] / "docs"
_TICKED = re.compile(r"`([^`]+)`")


def table(markdown: str, heading: str, first_column: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table under `heading` whose header row
    starts with `first_column`."""
    section = markdown.split(f"\n{heading}\n", 1)[1]
    rows: list[list[str]] = []
    for line in section.splitlines():
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not rows and cells[0] != first_column:
            continue
        rows.append(cells)
    assert len(rows) > 2, f"no table starting with {first_column!r} under {heading!r}"
    _header, rule, *body = rows
    assert set(rule) == {"---"}, rule
    return body


def default_of(name: str) -> Any:
    """The settings model's default for a dotted setting name, as JSON would show it."""
    value: Any = Settings().model_dump(mode="json", by_alias=True)
    for part in name.split("."):
        value = value[part]
    return value


def documented(cell: str) -> Any:
    """A default as the docs write it: `none`, a number (`32,000`, `256 KiB`) or a
    JSON or plain value in backticks."""
    if cell == "none":
        return None
    size = re.fullmatch(r"([\d,]+) (KiB|MiB)", cell)
    if size:
        return int(size.group(1).replace(",", "")) * {"KiB": 1024, "MiB": 1 << 20}[size.group(2)]
    text = cell.strip("`").replace(",", "") if re.fullmatch(r"`?[\d,.]+`?", cell) else cell
    ticked = _TICKED.fullmatch(text)
    text = ticked.group(1) if ticked else text
    try:
        return json.loads(text)
    except ValueError:
        return text


def test_settings_table_lists_every_setting_with_its_default() -> None:
    rows = table((DOCS / "settings.md").read_text("utf-8"), "## Reference", "Setting")
    names = []
    for name_cell, default_cell, *_ in rows:
        ticked = _TICKED.fullmatch(name_cell)
        assert ticked, f"the setting's name is not in backticks: {name_cell!r}"
        name = ticked.group(1)
        names.append(name)
        if name in setting_names():
            assert documented(default_cell) == default_of(name), name
    assert len(names) == len(set(names)), "a setting listed twice"
    assert sorted(names) == sorted(setting_names())


LIMITS = {
    "maxSteps",
    "maxToolOutputBytes",
    "questionTimeoutSeconds",
    "maxContextTokens",
    "maxOutputTokens",
}
#: What the loop reads of its settings that is not a limit on a question (the window's
#: lookup sends the client's `headers`).
NOT_LIMITS = {"toolProtocol", "projectInstructions", "headers"}
AGENT = Path(__file__).resolve().parents[2] / "server" / "lantern" / "agent"


def settings_the_loop_reads() -> set[str]:
    """Every `settings.<name>` and `….settings.<name>` in the loop's modules, as the
    setting's camelCase name."""
    names: set[str] = set()
    for module in ("loop.py", "model_side.py", "tool_round.py", "provider/window.py"):
        tree = ast.parse((AGENT / module).read_text("utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            base = node.value
            if (isinstance(base, ast.Attribute) and base.attr == "settings") or (
                isinstance(base, ast.Name) and base.id == "settings"
            ):
                names.add(to_camel(node.attr))
    return names


def limit_rows() -> list[tuple[str, str, str]]:
    rows = table((DOCS / "agent-loop.md").read_text("utf-8"), "## Limits", "limit")
    out = []
    for limit, default, stop in rows:
        ticked = _TICKED.match(limit)
        assert ticked, f"a limit row that names no setting: {limit!r}"
        out.append((ticked.group(1), default, stop))
    return out


@pytest.mark.parametrize(("name", "default", "stop"), limit_rows(), ids=lambda v: str(v)[:24])
def test_limits_table_matches_the_code(name: str, default: str, stop: str) -> None:
    assert name in setting_names()
    assert documented(default) == default_of(name)
    reasons = _TICKED.findall(stop)
    assert reasons or "dropped" in stop, f"{name}: no stop reason in {stop!r}"
    assert set(reasons) <= set(get_args(StopReason)), reasons


def test_limits_table_covers_the_loops_limits() -> None:
    assert {name for name, _, _ in limit_rows()} >= LIMITS
    assert settings_the_loop_reads() == LIMITS | NOT_LIMITS


def test_tool_error_codes_table_lists_every_code() -> None:
    rows = table((DOCS / "tools.md").read_text("utf-8"), "## Error codes", "code")
    codes = []
    for code_cell, _meaning in rows:
        ticked = _TICKED.fullmatch(code_cell)
        assert ticked, f"the code is not in backticks: {code_cell!r}"
        codes.append(ticked.group(1))
    assert len(codes) == len(set(codes)), "a code listed twice"
    assert sorted(codes) == sorted(get_args(ErrorCode))


def method_rows(heading: str) -> dict[str, str]:
    """docs/protocol.md's table under `heading`: each method with its kind, each once."""
    rows = table((DOCS / "protocol.md").read_text("utf-8"), heading, "Method")
    methods: dict[str, str] = {}
    for method_cell, kind, _what in rows:
        ticked = _TICKED.fullmatch(method_cell)
        assert ticked, f"the method's name is not in backticks: {method_cell!r}"
        assert ticked.group(1) not in methods, f"{ticked.group(1)} listed twice"
        methods[ticked.group(1)] = kind
    return methods


def kind_of(method: str) -> str:
    """Whether `method` is a request or a notification: Lantern's own by the message type
    its server reads and writes, an LSP method by lsprotocol's."""
    if method in MESSAGE_TYPES:
        has_id = "id" in attrs.fields_dict(MESSAGE_TYPES[method])
        return "request" if has_id else "notification"
    _message, response, _params, _options = types.METHOD_TO_TYPES[method]
    return "notification" if response is None else "request"


def test_protocol_lists_every_method_the_server_answers() -> None:
    server = build_server()
    registered = set(server.protocol.fm.features)
    # `shutdown` and `exit` are registered when the server starts serving stdio; pygls
    # answers them (and the others it knows) before that too.
    answered = registered | set(server.protocol.fm.builtin_features)
    rows = method_rows("### The server answers")
    no_row = sorted(registered - set(rows))
    assert not no_row, f"methods the server answers with no row: {no_row}"
    not_answered = sorted(set(rows) - answered)
    assert not not_answered, f"rows naming methods the server does not answer: {not_answered}"
    for method, kind in rows.items():
        assert kind == kind_of(method), method


def test_protocol_lists_every_method_the_server_sends() -> None:
    answered = set(build_server().protocol.fm.features)
    rows = method_rows("### The server sends")
    own = {method for method in rows if method.startswith("lantern/")}
    assert own == set(MESSAGE_TYPES) - answered
    for method, kind in rows.items():
        assert kind == kind_of(method), method
        if method not in own:
            assert types.message_direction(method) in ("serverToClient", "both"), method
