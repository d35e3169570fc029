"""Locations a language server names, checked before anything is shown: the answer's
shape (`lsp/navigator.checked_answer`), the read path for each file
(`tools/navigation/located.locate`), and `find_references` with a navigator that answers,
times out or is refused. Every refused file holds a canary that must never be shown."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lantern.approvals.approver import Decision, Remembering, WorkspaceGrants
from lantern.audit import AuditLog
from lantern.lsp.navigator import MAX_LOCATIONS, MAX_SOURCE_CHARS, checked_answer
from lantern.tools.navigation.located import TOO_LARGE, locate
from lantern.tools.navigator import NavAnswer, NavigationTimeout, NavLocation
from lantern.tools.registry import run_tool
from lantern.workspace.text import MAX_FILE_BYTES

from tests.conftest import call, ctx_for, write
from tests.prompts import Recorder

SHAPES = (
    "class Circle:\n    def area(self):\n        return 3\n\n\n"
    "class Square:\n    def area(self):\n        return 4\n"
)
USES = "round_one = Circle().area()\nsquare_one = Square().area()\n"


def span(line: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 2}}


# ------------------------------------------------------------------ the answer's shape


def test_a_good_answer_is_taken_field_by_field() -> None:
    answer = checked_answer(
        {"source": "Pylance", "locations": [{"uri": "file:///w/a.py", "range": span(3)}]}
    )
    assert answer == NavAnswer("Pylance", [NavLocation("/w/a.py", 3)])


@pytest.mark.parametrize("result", [None, [], "x", 5, {"locations": "x"}, {"locations": {}}])
def test_what_is_no_object_with_a_list_is_no_answer(result: Any) -> None:
    assert checked_answer(result) is None


@pytest.mark.parametrize(
    "entry",
    [
        "file:///w/a.py",
        {"uri": 5, "range": span(1)},
        {"uri": "file:///w/a.py"},
        {"uri": "file:///w/a.py", "range": {"start": {"line": -1, "character": 0}}},
        {"uri": "file:///w/a.py", "range": {"start": {"line": True, "character": 0}, "end": {}}},
        {"uri": "file:///w/a.py", "range": {"start": span(4)["start"], "end": span(2)["end"]}},
        {"uri": "file:///" + "a" * 5000, "range": span(1)},
    ],
)
def test_a_malformed_entry_is_counted_not_used(entry: Any) -> None:
    answer = checked_answer({"locations": [entry]})
    assert answer is not None and answer.locations == [] and answer.malformed == 1


def test_only_file_uris_become_paths() -> None:
    answer = checked_answer(
        {"locations": [{"uri": u, "range": span(0)} for u in ("http://h/a.py", "untitled:1")]}
    )
    assert answer is not None and [loc.path for loc in answer.locations] == [None, None]


def test_a_million_locations_are_bounded() -> None:
    entry = {"uri": "file:///w/a.py", "range": span(0)}
    answer = checked_answer({"source": "s", "locations": [entry] * 1_000_000})
    assert answer is not None
    assert len(answer.locations) == MAX_LOCATIONS
    assert answer.over == 1_000_000 - MAX_LOCATIONS


def test_a_missing_or_odd_source_reads_client() -> None:
    assert checked_answer({"source": 5}) == NavAnswer("client")
    # never cut before it is redacted: whole within the bound, not taken beyond it
    assert checked_answer({"source": "x" * 500}) == NavAnswer("x" * 500)
    assert checked_answer({"source": "x" * (MAX_SOURCE_CHARS + 1)}) == NavAnswer("client")


# ------------------------------------------------------------------ the read path


@pytest.fixture
def canaries(ws: Path, tmp_path: Path) -> dict[str, Path]:
    write(ws, "src/uses.py", USES)
    write(ws, ".gitignore", "dist/\n")
    files = {
        "outside": write(tmp_path / "out", "secret.py", "CANARY_OUTSIDE\n"),
        "ignored": write(ws, "dist/bundle.py", "CANARY_DIST\n"),
        "denied": write(ws, ".env", "CANARY_ENV\n"),
        "big": write(ws, "src/big.py", "CANARY_BIG\n" + "x" * (MAX_FILE_BYTES + 1)),
    }
    linked = write(tmp_path / "out", "linked.py", "CANARY_LINK\n")
    (ws / "src" / "link.py").symlink_to(linked)
    files["link"] = ws / "src" / "link.py"
    os.mkfifo(ws / "src" / "pipe.py")
    files["fifo"] = ws / "src" / "pipe.py"
    return files


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("outside", "outside the workspace"),
        ("ignored", "in ignored files"),
        ("denied", "in files the name policy refuses"),
        ("big", TOO_LARGE),
        ("link", "behind symbolic links"),
        ("fifo", "in things that are not regular files"),
    ],
)
async def test_each_refused_file_is_counted_and_never_read(
    ws: Path, canaries: dict[str, Path], kind: str, reason: str
) -> None:
    ctx = ctx_for(ws)
    answer = NavAnswer("s", [NavLocation(str(canaries[kind]), 0)])
    located = await locate(ctx, ctx.workspace.targets(".", file=False), answer)
    assert located.files == []
    assert dict(located.dropped) == {reason: 1}
    assert "CANARY" not in "".join(located.notes("."))


async def test_a_line_past_the_end_is_dropped_and_a_good_one_kept(
    ws: Path, canaries: dict[str, Path]
) -> None:
    ctx = ctx_for(ws)
    uses = str(ws / "src" / "uses.py")
    answer = NavAnswer("s", [NavLocation(uses, 1), NavLocation(uses, 99), NavLocation(None, 0)])
    located = await locate(ctx, ctx.workspace.targets(".", file=False), answer)
    [file] = located.files
    assert (file.path, file.lines) == ("src/uses.py", {2})
    assert dict(located.dropped) == {"past the end of their file": 1, "not in file: URIs": 1}


async def test_a_file_outside_the_folder_looked_in_is_not_shown(
    ws: Path, canaries: dict[str, Path]
) -> None:
    write(ws, "lib/other.py", "CANARY_LIB\n")
    ctx = ctx_for(ws)
    answer = NavAnswer("s", [NavLocation(str(ws / "lib" / "other.py"), 0)])
    located = await locate(ctx, ctx.workspace.targets("src", file=False), answer)
    assert located.files == []
    assert located.notes("src") == ["[1 more location(s) outside src, not shown]"]


# ------------------------------------------------------------------ the tool


class Scripted:
    """A `Navigator` with a scripted answer (or a timeout); records what it was asked."""

    timeout_s = 5.0

    def __init__(self, answer: NavAnswer | Exception | None, ops: tuple[str, ...]) -> None:
        self.answer = answer
        self.ops = ops
        self.asked: list[tuple[str, str, int, int]] = []

    def offers(self, op: str) -> bool:
        return op in self.ops

    async def navigate(
        self, op: str, path: str, line: int, column: int, line_text: str
    ) -> NavAnswer | None:
        self.asked.append((op, path, line, column))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def shapes(ws: Path) -> Path:
    write(ws, "src/shapes.py", SHAPES)
    write(ws, "src/uses.py", USES)
    return ws


async def test_the_member_asked_from_is_the_member_named(shapes: Path) -> None:
    uses = str(shapes / "src" / "uses.py")
    navigator = Scripted(NavAnswer("LS", [NavLocation(uses, 0)]), ("references",))
    ctx = replace(ctx_for(shapes), navigator=navigator)
    result = await call(ctx, "find_references", name="Square.area")
    assert navigator.asked == [("references", str(shapes / "src" / "shapes.py"), 7, 8)]
    assert result.content.splitlines() == [
        "[untrusted uses of 'Square.area' under .]",
        "[language server: LS]",
        "src/uses.py:1: round_one = Circle().area()",
    ]
    assert result.source == "LS"


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        (NavigationTimeout(), "[syntax only: the language server did not answer in 5 s]"),
        (None, "[syntax only: no language server answered]"),
        (NavAnswer("LS"), "[syntax only: no language server answered]"),
    ],
)
async def test_no_answer_is_the_engine_s_answer_with_a_note(
    shapes: Path, answer: NavAnswer | Exception | None, note: str
) -> None:
    plain = await call(ctx_for(shapes), "find_references", name="Square.area")
    ctx = replace(ctx_for(shapes), navigator=Scripted(answer, ("references",)))
    noted = await call(ctx, "find_references", name="Square.area")
    lines = plain.content.splitlines()
    assert noted.content.splitlines() == [lines[0], note, *lines[1:]]
    assert noted.source is None


async def test_a_navigator_without_the_op_changes_nothing(shapes: Path) -> None:
    plain = await call(ctx_for(shapes), "find_references", name="Square.area")
    navigator = Scripted(NavAnswer("LS", []), ("hover",))
    ctx = replace(ctx_for(shapes), navigator=navigator)
    assert (await call(ctx, "find_references", name="Square.area")).content == plain.content
    assert navigator.asked == []


async def test_a_denied_lookup_asks_no_language_server(shapes: Path, tmp_path: Path) -> None:
    grants = WorkspaceGrants(tmp_path / "data" / "approvals.json")
    navigator = Scripted(NavAnswer("LS", []), ("references",))
    approvals = Remembering(Recorder(Decision.DENY), grants=grants)
    ctx = replace(ctx_for(shapes, approvals), navigator=navigator)
    result = await call(ctx, "find_references", name="Square.area")
    assert result.code == "denied_by_user"
    assert navigator.asked == []


async def test_the_folder_grant_covers_the_files_shown(shapes: Path, tmp_path: Path) -> None:
    grants = WorkspaceGrants(tmp_path / "data" / "approvals.json")
    uses = str(shapes / "src" / "uses.py")
    inner = Recorder(Decision.ALLOW_ONCE)
    navigator = Scripted(NavAnswer("LS", [NavLocation(uses, 1)]), ("references",))
    ctx = replace(ctx_for(shapes, Remembering(inner, grants=grants)), navigator=navigator)
    result = await call(ctx, "find_references", name="Square.area", path="src")
    assert "src/uses.py:2: square_one = Square().area()" in result.content
    assert [r.message() for r in inner.requests] == [
        "Lantern wants to find uses of `Square.area` in src"
    ]


async def test_the_audit_log_names_the_language_server(shapes: Path, tmp_path: Path) -> None:
    audit = AuditLog(workspace="w", workspace_key="k", path=tmp_path / "audit.jsonl")
    uses = str(shapes / "src" / "uses.py")
    navigator = Scripted(NavAnswer("Py\nlance", [NavLocation(uses, 1)]), ("references",))
    ctx = replace(ctx_for(shapes), navigator=navigator)
    await run_tool("find_references", {"name": "Square.area"}, ctx, audit)
    await run_tool("find_symbol", {"name": "Square.area"}, ctx, audit)
    lines = (tmp_path / "audit.jsonl").read_text("utf-8").splitlines()
    found, plain = (json.loads(line) for line in lines)
    assert found["tool"] == "find_references" and found["source"] == "Py\\nlance"
    assert "source" not in plain


TOKEN_CANARY = "ghp_" + "Zq7Xk29LmPqRw8ZaBcDeFgHiJkLmNoPqRsTu"


async def test_a_source_is_redacted_before_it_is_cut(shapes: Path, tmp_path: Path) -> None:
    """A token that straddles the 60 characters shown of `source` is still recognised:
    not one character of it reaches the model or the audit log."""
    uses = str(shapes / "src" / "uses.py")
    source = "language server " + "x" * 23 + " " + TOKEN_CANARY
    client = {"source": source, "locations": [{"uri": Path(uses).as_uri(), "range": span(1)}]}
    answer = checked_answer(client)
    assert answer is not None
    audit = AuditLog(workspace="w", workspace_key="k", path=tmp_path / "audit.jsonl")
    ctx = replace(ctx_for(shapes), navigator=Scripted(answer, ("references",)))
    result = await run_tool("find_references", {"name": "Square.area"}, ctx, audit)
    header = result.content.splitlines()[1]
    assert header.startswith("[language server: language server xxx") and "REDACTED" in header
    logged = (tmp_path / "audit.jsonl").read_text("utf-8")
    for shown in (result.content, logged):
        assert TOKEN_CANARY[4:10] not in shown and "ghp_Zq" not in shown


async def test_a_bare_name_asks_from_each_definition_and_shows_them_together(
    shapes: Path,
) -> None:
    uses = str(shapes / "src" / "uses.py")
    navigator = Scripted(NavAnswer("LS", [NavLocation(uses, 0)]), ("references",))
    ctx = replace(ctx_for(shapes), navigator=navigator)
    result = await call(ctx, "find_references", name="area")
    shapes_py = str(shapes / "src" / "shapes.py")
    assert sorted(navigator.asked) == [
        ("references", shapes_py, 2, 8),
        ("references", shapes_py, 7, 8),
    ]
    assert result.content.splitlines()[1:] == [
        "[language server: LS]",
        "src/uses.py:1: round_one = Circle().area()",
    ]
