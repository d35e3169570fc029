"""Lines as editors count them: `\\r\\n`, `\\n` and a lone `\\r` each end a line.

VS Code (and the LSP's positions) number a file `x\\r\\ny\\rz\\r\\nw` as four lines, `x`,
`y`, `z`, `w`. read_file's numbers and windows, search hits (ripgrep itself counts `\\n`
only) and the answer's `path:N` references must all name the line the editor shows as N.
Every file here is a real file on disk, read through the tools.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest
from lantern.agent.conversation import SeenLines
from lantern.agent.references import Reference, resolve_references
from lantern.approvals.approver import ApprovalRequest, Decision, Outcome, PromptObserver
from lantern.converter import to_json
from lantern.tools.base import ToolContext, ToolResult

from tests.conftest import ctx_for, numbered, run

# What an editor shows for MIXED: line 5 is the empty line between `\r` and `\r\n`.
MIXED = b"one\r\ntwo\rthree\nfour\r\r\nsix\rseven\r"
MIXED_LINES = ["one", "two", "three", "four", "", "six", "seven"]
SECRET = "Zq8vT2" + "mK9pLx4Rw"  # random enough for the assignment rule
CANARY = "LANTERN_CANARY_" + "c4e1d9"


def hits(result: ToolResult, name: str) -> list[tuple[int, str]]:
    """The `name:N: text` rows of a search result."""
    assert not result.is_error, result.content
    found = re.findall(rf"^{re.escape(name)}:(\d+): (.*)$", result.content, re.MULTILINE)
    return [(int(n), text) for n, text in found]


def references(answer: str, ctx: ToolContext, seen: SeenLines | None = None) -> list[Reference]:
    return resolve_references(answer, ctx.workspace, seen or SeenLines())


# --- read_file ---------------------------------------------------------------------------


async def test_read_file_numbers_lines_as_an_editor_does(ctx: ToolContext, ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(MIXED)
    result = await run(ctx, "read_file", {"path": "mixed.txt"})
    assert not result.is_error, result.content
    assert "lines 1–7 of 7]" in result.content.splitlines()[0]
    assert numbered(result.content) == list(enumerate(MIXED_LINES, start=1))
    assert "\r" not in result.content and "\\r" not in result.content
    assert [(s.start, s.end) for s in result.seen] == [(1, 7)]


@pytest.mark.parametrize("offset", [2, 3, 4, 5, 6])
async def test_a_window_starts_and_ends_on_editor_lines(
    ctx: ToolContext, ws: Path, offset: int
) -> None:
    (ws / "mixed.txt").write_bytes(MIXED)
    result = await run(ctx, "read_file", {"path": "mixed.txt", "offset": offset, "limit": 2})
    assert not result.is_error, result.content
    assert numbered(result.content) == [
        (offset, MIXED_LINES[offset - 1]),
        (offset + 1, MIXED_LINES[offset]),
    ]
    assert [(s.path, s.start, s.end) for s in result.seen] == [("mixed.txt", offset, offset + 1)]
    if offset + 1 < 7:
        assert f"call read_file with offset={offset + 2} to continue" in result.content


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"x\r\ny\rz\r\nw", ["x", "y", "z", "w"]),
        (b"a\rb\r", ["a", "b"]),  # a lone CR at the end ends the last line, adds none
        (b"a\rb", ["a", "b"]),
        (b"a\r\r\nb\r\r", ["a", "", "b", ""]),
        (b"\r\r", ["", ""]),
        (codecs.BOM_UTF8 + b"a\rb\r\nc", ["a", "b", "c"]),
    ],
)
async def test_line_ends_at_the_edges(
    ctx: ToolContext, ws: Path, data: bytes, lines: list[str]
) -> None:
    (ws / "f.txt").write_bytes(data)
    result = await run(ctx, "read_file", {"path": "f.txt"})
    assert numbered(result.content) == list(enumerate(lines, start=1)), result.content
    assert f"of {len(lines)}]" in result.content
    last = len(lines)
    refs = references(f"f.txt:{last} f.txt:{last + 1}", ctx)
    assert [r.verified for r in refs] == [True, False]


async def test_utf16_lines_end_at_a_lone_cr_too(ctx: ToolContext, ws: Path) -> None:
    (ws / "wide.txt").write_bytes("é\rb\r\nc\rneedle\n".encode("utf-16"))
    result = await run(ctx, "read_file", {"path": "wide.txt", "offset": 2})
    assert numbered(result.content) == [(2, "b"), (3, "c"), (4, "needle")]
    assert hits(await run(ctx, "search", {"pattern": "needle"}), "wide.txt") == [(4, "needle")]
    assert [r.verified for r in references("wide.txt:4 wide.txt:5", ctx)] == [True, False]


class _Recording:
    """An approver that allows everything and keeps the text of each prompt."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        self.prompts.append(request.message())
        return Outcome(Decision.ALLOW_ONCE, "user")


async def test_the_lines_a_prompt_names_are_the_lines_shown(ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(MIXED)
    approver = _Recording()
    ctx = ctx_for(ws, approver)
    result = await run(ctx, "read_file", {"path": "mixed.txt", "offset": 3, "limit": 2})
    assert approver.prompts == [f"Lantern wants to read mixed.txt (lines 3–4, {len(MIXED)} B)"]
    assert numbered(result.content) == [(3, "three"), (4, "four")]


# --- a line end at the 64 KiB boundary the readers count in -------------------------------


def _boundary_file(end: str) -> tuple[bytes, list[str], int]:
    """Lines ended by a lone CR, LF or CRLF in turn, with `end` starting at byte 65535
    (a CRLF cut by the 64 KiB chunk boundary, a CR just before it); the editor's lines,
    and the number of the line that `end` closes."""
    lines: list[str] = []
    data = bytearray()
    ends = ["\r", "\n", "\r\n"]
    while len(data) < 65_400:
        text = f"line {len(lines) + 1} " + "." * (len(lines) % 23)
        lines.append(text)
        data += (text + ends[len(lines) % 3]).encode()
    text = "pad " + "," * (65_535 - len(data) - 4)
    lines.append(text)
    data += (text + end).encode()
    at = len(lines)
    if end == "\r\r\n":
        lines.append("")
    for i in range(40):
        lines.append(f"after {i}")
        data += (f"after {i}" + ends[i % 3]).encode()
    assert data[65_535] == 13
    return bytes(data), lines, at


@pytest.mark.parametrize("end", ["\r\n", "\r", "\r\r\n"])
async def test_a_line_end_on_the_64k_boundary(ctx: ToolContext, ws: Path, end: str) -> None:
    data, lines, at = _boundary_file(end)
    (ws / "edge.txt").write_bytes(data)
    whole = await run(ctx, "read_file", {"path": "edge.txt", "offset": at - 200})
    assert f"of {len(lines)}]" in whole.content
    shown = numbered(whole.content)
    assert shown == [(n, lines[n - 1]) for n in range(at - 200, len(lines) + 1)]
    for offset in (at - 1, at, at + 1, at + 2):
        result = await run(ctx, "read_file", {"path": "edge.txt", "offset": offset, "limit": 3})
        assert numbered(result.content) == [(n, lines[n - 1]) for n in range(offset, offset + 3)]
    found = hits(await run(ctx, "search", {"pattern": "after 0|pad ,"}), "edge.txt")
    assert [n for n, _ in found] == [at, lines.index("after 0") + 1]
    refs = references(f"edge.txt:{at} edge.txt:{at + 1} edge.txt:{len(lines) + 1}", ctx)
    assert [(r.verified, r.end_width.utf8) for r in refs] == [
        (True, len(lines[at - 1])),
        (True, len(lines[at])),
        (False, 0),
    ]


# --- search ------------------------------------------------------------------------------


async def test_search_hits_name_the_editor_line_and_show_only_it(
    ctx: ToolContext, ws: Path
) -> None:
    (ws / "a.txt").write_bytes(b"x\r\ny\rz\r\nw\n")
    found = hits(await run(ctx, "search", {"pattern": "[zw]"}), "a.txt")
    assert found == [(3, "z"), (4, "w")]
    result = await run(ctx, "search", {"pattern": "z", "path": "a.txt"})  # rg reads stdin
    assert hits(result, "a.txt") == [(3, "z")]
    assert [(s.path, s.start, s.end) for s in result.seen] == [("a.txt", 3, 3)]


async def test_a_match_across_a_lone_cr_is_no_hit(ctx: ToolContext, ws: Path) -> None:
    """Lines that share one of ripgrep's lines are searched again one by one (so a match
    from a secret on the line above cannot reach the next): a match must lie on one."""
    (ws / "a.txt").write_bytes(b"x\r\nfirst\rsecond half\rthird\nlast\n")
    result = await run(ctx, "search", {"pattern": "first.second"})  # `.` matches the CR
    assert hits(result, "a.txt") == []
    assert hits(await run(ctx, "search", {"pattern": "half.th|last|^th"}), "a.txt") == [
        (4, "third"),
        (5, "last"),
    ]
    result = await run(ctx, "search", {"pattern": "second"})
    assert hits(result, "a.txt") == [(3, "second half")]
    assert [(s.start, s.end) for s in result.seen] == [(3, 3)]


async def test_search_after_many_lone_crs_and_invalid_utf8(ctx: ToolContext, ws: Path) -> None:
    """rg's line 3 starts on editor line 9 here; its text holds an invalid byte, so rg
    reports it as base64 bytes, and the match sits after two more lone CRs."""
    data = b"a\rb\rc\r\nd\re\rf\ng\rcaf\xe9\rneedle\r\n"
    (ws / "b.txt").write_bytes(data)
    result = await run(ctx, "search", {"pattern": "needle|^d|f$"})
    assert hits(result, "b.txt") == [(4, "d"), (6, "f"), (9, "needle")]
    shown = await run(ctx, "read_file", {"path": "b.txt", "offset": 8})
    assert numbered(shown.content) == [(8, "caf�"), (9, "needle")]


async def test_a_secret_after_lone_crs_is_redacted(ctx: ToolContext, ws: Path) -> None:
    data = f'a = 1\rb = 2\rAPI_KEY="{SECRET}"\rc = 3\r'.encode()
    (ws / "conf.py").write_bytes(data)
    for args in ({"path": "conf.py"}, {"path": "conf.py", "offset": 3, "limit": 1}):
        result = await run(ctx, "read_file", args)
        assert SECRET not in result.content
        assert (3, 'API_KEY="[REDACTED:assignment]"') in numbered(result.content)
        assert result.redactions == 1
    searched = await run(ctx, "search", {"pattern": "API_KEY"})
    assert SECRET not in searched.content
    assert hits(searched, "conf.py") == [(3, 'API_KEY="[REDACTED:assignment]"')]
    assert searched.redactions == 1


async def test_a_yaml_value_far_below_its_key_in_a_cr_file_is_redacted(
    ctx: ToolContext, ws: Path
) -> None:
    """More indented lines than the context walk covers, in a file whose lines end in a
    lone CR (classic Mac): the key must still be found above the window."""
    body = "".join(f"    {CANARY}{i}\r" for i in range(600))
    (ws / "big.yaml").write_bytes(f"root:\r  api_key: >\r{body}".encode())
    result = await run(ctx, "read_file", {"path": "big.yaml", "offset": 500, "limit": 3})
    assert CANARY not in result.content
    assert numbered(result.content) == [(n, "    [REDACTED:assignment]") for n in (500, 501, 502)]
    searched = await run(ctx, "search", {"pattern": f"{CANARY}497"})
    assert searched.content == f"[no matches for '{CANARY}497' under .]"  # inside the secret


# --- references --------------------------------------------------------------------------


async def test_references_name_the_line_an_editor_shows(ctx: ToolContext, ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(MIXED)
    read = await run(ctx, "read_file", {"path": "mixed.txt", "offset": 6, "limit": 1})
    seen = SeenLines()
    seen.add_all(read.seen)
    refs = references("mixed.txt:6 mixed.txt:3 mixed.txt:7 mixed.txt:8", ctx, seen)
    assert [(r.end_line, r.verified, r.seen, r.end_width.utf16) for r in refs] == [
        (6, True, True, len("six")),
        (3, True, False, len("three")),
        (7, True, False, len("seven")),
        (8, False, False, 0),
    ]
    assert to_json(refs[0])["range"] == {
        "start": {"line": 5, "character": 0},
        "end": {"line": 5, "character": 3},
    }
