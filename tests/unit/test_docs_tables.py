"""The reference tables in docs/ say what the code does.

docs/settings.md's settings table (one row per setting: name, default, …) must list
exactly the settings of `lantern.settings.Settings`, each once, with its default;
docs/agent-loop.md's limits table (setting and what it limits, default, stop reason)
must name real settings with their defaults, and real stop reasons, and list every
setting the loop reads (found in its source) that is a limit.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from lantern.agent.loop import StopReason
from lantern.settings.model import Settings, setting_names
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
#: What the loop reads of its settings that is not a limit on a question.
NOT_LIMITS = {"toolProtocol", "projectInstructions"}
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
