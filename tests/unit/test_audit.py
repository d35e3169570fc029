"""The audit log: one JSON line per tool call, never contents or paths."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from lantern.approvals.approver import (
    Approver,
    Decision,
    Fixed,
    Remembering,
    WorkspaceGrants,
)
from lantern.audit import AuditLog
from lantern.tools.base import ToolResult
from lantern.tools.registry import run_tool

from tests.conftest import ctx_for, write
from tests.descriptors import descriptors_left
from tests.prompts import Recorder

CANARY = "audit-canary-" + "5be1d0"


@pytest.fixture(autouse=True)
def app_and_env(ws: Path) -> None:
    """What every test here finds in `ws`: a source file and a `.env`, both with the canary."""
    write(ws, "src/app.py", f"label = '{CANARY}'\nprint(1)\n")
    write(ws, ".env", f"TOKEN={CANARY}\n")


@pytest.fixture
def audit(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "logs" / "audit.jsonl", workspace="ws", workspace_key="k")


def records(audit: AuditLog) -> list[dict[str, Any]]:
    lines = audit.path.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_one_line_per_call_with_every_field(
    ws: Path, audit: AuditLog, tmp_path: Path
) -> None:
    ctx = ctx_for(ws, conversation="conv-1")
    result = await run_tool("read_file", {"path": "src/app.py"}, ctx, audit)
    assert CANARY in result.content  # the model saw it; the log must not
    (record,) = records(audit)
    assert record["kind"] == "tool"
    assert record["time"]
    assert record["workspace"] == "ws"
    assert record["workspaceHash"] == "k"
    assert record["conversation"] == "conv-1"
    assert record["tool"] == "read_file"
    assert record["path"] == "src/app.py"
    assert record["decision"] == "auto"
    assert record["bytes"] == len(result.content.encode("utf-8")) == result.bytes
    assert record["sha256"] == sha(result.content)
    assert isinstance(record["ms"], int | float)


async def test_decisions(ws: Path, audit: AuditLog, tmp_path: Path) -> None:
    grants = WorkspaceGrants(tmp_path / "approvals.json")
    asking = Remembering(Recorder(), grants=grants)
    calls: list[tuple[Approver, str, dict[str, Any]]] = [
        (Fixed(Decision.ALLOW_ONCE), "list_files", {}),
        (asking, "read_file", {"path": "src/app.py"}),
        (asking, "search", {"pattern": "print", "path": "src"}),
        (Fixed(Decision.DENY), "read_file", {"path": "src/app.py"}),
        (Fixed(Decision.TIMEOUT), "search", {"pattern": "x"}),
        (Fixed(Decision.ALLOW_ONCE), "read_file", {"path": ".env"}),
        (Fixed(Decision.ALLOW_ONCE), "search", {"pattern": "x", "path": ".env"}),
        (Fixed(Decision.ALLOW_ONCE), "read_file", {"path": "missing.py"}),
        (Remembering(Recorder(), grants=grants, mode="workspace"), "list_files", {}),
    ]
    results: list[ToolResult] = []
    for approvals, tool, args in calls:
        results.append(await run_tool(tool, args, ctx_for(ws, approvals), audit))
    got = records(audit)
    assert [(r["tool"], r["path"], r["decision"]) for r in got] == [
        ("list_files", ".", "auto"),
        ("read_file", "src/app.py", "user"),
        ("search", "src", "user"),
        ("read_file", "src/app.py", "denied"),
        ("search", ".", "denied"),
        ("read_file", ".env", "refused:sensitive_path"),
        ("search", ".env", "refused:sensitive_path"),
        ("read_file", "missing.py", "refused:not_found"),
        ("list_files", ".", "auto"),
    ]
    for record, result in zip(got, results, strict=True):
        assert record["bytes"] == result.bytes
        assert record["sha256"] == sha(result.content)


async def test_bad_calls_are_logged_without_unsafe_paths(
    ws: Path, audit: AuditLog, tmp_path: Path
) -> None:
    ctx = ctx_for(ws)
    outside = str(tmp_path / "elsewhere" / "x.txt")
    await run_tool("read_file", {"path": outside}, ctx, audit)
    await run_tool("read_file", {"path": "../ws/src/app.py"}, ctx, audit)
    await run_tool("read_file", "{not json", ctx, audit)
    await run_tool("write_file", {"path": "x"}, ctx, audit)
    await run_tool("search", {"pattern": "("}, ctx, audit)
    got = records(audit)
    assert [(r["tool"], r["path"], r["decision"]) for r in got] == [
        ("read_file", None, "refused:absolute_path"),
        ("read_file", None, "refused:outside_workspace"),
        ("read_file", None, "refused:invalid_arguments"),
        ("write_file", None, "refused:unknown_tool"),
        ("search", ".", "refused:invalid_arguments"),
    ]
    text = audit.path.read_text("utf-8")
    assert str(tmp_path) not in text
    assert "elsewhere" not in text


async def test_log_never_holds_contents_or_absolute_paths(
    ws: Path, audit: AuditLog, tmp_path: Path
) -> None:
    ctx = ctx_for(ws)
    for tool, args in [
        ("read_file", {"path": "src/app.py"}),
        ("search", {"pattern": "label"}),
        ("list_files", {"path": "src"}),
        ("read_file", {"path": ".env"}),
    ]:
        result = await run_tool(tool, args, ctx, audit)
        assert result.bytes > 0
    text = audit.path.read_text("utf-8")
    assert CANARY not in text
    assert "label = " not in text
    assert "print(1)" not in text
    assert str(ws) not in text
    assert str(tmp_path) not in text
    for record in records(audit):
        assert record["path"] is None or not record["path"].startswith("/")


async def test_concurrent_calls_each_write_a_whole_line(ws: Path, audit: AuditLog) -> None:
    ctx = ctx_for(ws)
    await asyncio.gather(
        *(run_tool("read_file", {"path": "src/app.py"}, ctx, audit) for _ in range(20))
    )
    got = records(audit)
    assert len(got) == 20
    assert {r["path"] for r in got} == {"src/app.py"}


def test_log_file_is_private(audit: AuditLog) -> None:
    audit.tool_call(
        conversation="c", tool="list_files", path=".", decision="auto", content="x", ms=1.0
    )
    assert audit.path.stat().st_mode & 0o077 == 0


def test_model_request_line(audit: AuditLog) -> None:
    audit.model_request(
        conversation="c",
        model="m",
        prompt_tokens=10,
        completion_tokens=5,
        bytes_sent=123,
        outcome="ok",
        ms=12.5,
    )
    (record,) = records(audit)
    assert record["kind"] == "model"
    assert record["promptTokens"] == 10
    assert record["completionTokens"] == 5
    assert record["bytes"] == 123
    assert record["workspaceHash"] == "k"


# --- model-chosen strings are data ---------------------------------------------------------


def raw_lines(audit: AuditLog) -> list[str]:
    """The log as bytes → strict UTF-8, split on newlines only."""
    return audit.path.read_bytes().decode("utf-8").split("\n")[:-1]


async def test_lone_surrogates_from_the_model_never_crash_a_write(
    ws: Path, audit: AuditLog
) -> None:
    ctx = ctx_for(ws, conversation="conv-\ud800")
    unknown = await run_tool("\ud800", {"\ud800": "\udfff"}, ctx, audit)
    assert unknown.code == "unknown_tool"
    unknown.content.encode("utf-8")  # the message the model gets back encodes too
    bad_key = await run_tool("read_file", {"\ud800": 1, "path": "src/app.py"}, ctx, audit)
    bad_path = await run_tool("read_file", {"path": "src/\ud800.py"}, ctx, audit)
    assert bad_key.is_error and bad_path.is_error
    audit.tool_call(
        conversation="c", tool="t", path="p\udc80", decision="auto", content="\ud83d", ms=1
    )
    audit.model_request(
        conversation="c",
        model="m\ud800",
        prompt_tokens=1,
        completion_tokens=1,
        bytes_sent=1,
        outcome="ok",
        ms=1,
    )
    lines = raw_lines(audit)
    assert len(lines) == 5
    got = [json.loads(line) for line in lines]
    assert got[0]["tool"] == "\\ud800" and got[0]["conversation"] == "conv-\\ud800"
    assert got[3]["path"] == "p\\udc80"
    assert got[3]["sha256"] == hashlib.sha256("\ud83d".encode("utf-8", "surrogatepass")).hexdigest()
    assert got[4]["model"] == "m\\ud800"


async def test_model_chosen_strings_are_capped(ws: Path, audit: AuditLog) -> None:
    ctx = ctx_for(ws)
    await run_tool("t" * 60_000, {}, ctx, audit)
    file_text = "return total / count; " * 150  # a file's text passed as a path
    result = await run_tool("read_file", {"path": file_text}, ctx, audit)
    assert result.code == "not_found"
    lines = raw_lines(audit)
    assert len(lines) == 2 and all(len(line) < 1_000 for line in lines)
    tool, path = json.loads(lines[0])["tool"], json.loads(lines[1])["path"]
    assert tool == "t" * 200 + "…(60,000 chars)"
    assert path == file_text[:200] + f"…({len(file_text):,} chars)"


async def test_controls_in_model_chosen_strings_are_escaped(ws: Path, audit: AuditLog) -> None:
    ctx = ctx_for(ws)
    name = 'x\n{"kind":"tool","tool":"read_file"}\r\u2028\x85\x1b[2J'
    await run_tool(name, {}, ctx, audit)
    (line,) = raw_lines(audit)
    for char in ("\r", "\u2028", "\x85", "\x1b"):
        assert char not in line
    assert json.loads(line)["tool"] == (
        'x\\n{"kind":"tool","tool":"read_file"}\\r\\u2028\\u0085\\u001b[2J'
    )


async def test_records_are_written_with_no_descriptor_left(ws: Path, audit: AuditLog) -> None:
    """The log stays open: a call that fails because the process is out of descriptors
    is still recorded (before, every record opened the file anew and the write failed)."""
    audit.check()
    ctx = ctx_for(ws, conversation="conv-1")
    with descriptors_left(0):
        result = await run_tool("read_file", {"path": "src/app.py"}, ctx, audit)
        audit.model_request(
            conversation="conv-1",
            model="m",
            prompt_tokens=1,
            completion_tokens=1,
            bytes_sent=1,
            outcome="done",
            ms=1.0,
        )
    assert result.code == "io_error" and "Too many open files" in result.content
    tool, model = records(audit)
    assert tool["tool"] == "read_file" and tool["decision"] == "refused:io_error"
    assert model["kind"] == "model"


@pytest.mark.parametrize("how", ["moved", "removed"])
async def test_a_rotated_log_is_reopened(ws: Path, audit: AuditLog, how: str) -> None:
    """Moved away (logrotate) or removed: the next record starts a new file at the path,
    and a moved file keeps what was written before the move."""
    ctx = ctx_for(ws, conversation="conv-1")
    await run_tool("read_file", {"path": "src/app.py"}, ctx, audit)
    old = audit.path.with_name("audit.jsonl.1")
    if how == "moved":
        audit.path.rename(old)
    else:
        audit.path.unlink()
    await run_tool("list_files", {}, ctx, audit)
    assert [r["tool"] for r in records(audit)] == ["list_files"]
    if how == "moved":
        assert [json.loads(line)["tool"] for line in old.read_text("utf-8").splitlines()] == [
            "read_file"
        ]
    assert oct(audit.path.stat().st_mode & 0o777) == oct(0o600)
