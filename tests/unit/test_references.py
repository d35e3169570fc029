"""Tests for lantern.agent.references: finding citations, checking them, SeenLines."""

from __future__ import annotations

import codecs
import json
import multiprocessing
import os
import random
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.conversation import Conversation, SeenLines
from lantern.agent.loop import Agent
from lantern.agent.provider.client import ModelClient
from lantern.agent.references import (
    MAX_CITATIONS,
    Reference,
    check_references,
    find_citations,
    resolve_references,
)
from lantern.approvals.approver import Decision, Fixed
from lantern.converter import to_json
from lantern.tools.base import SeenSpan, ToolContext
from lantern.workspace.roots import Workspace

from tests.conftest import run, write
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

APP = "".join(f"line {n}\n" for n in range(1, 31))  # 30 lines, "line 30" is 7 chars


@pytest.fixture(autouse=True)
def sources(ws: Path, tmp_path: Path) -> None:
    """What every test here finds in `ws` (and a file next to it, outside)."""
    write(ws, "src/app.py", APP)
    write(ws, "src/short.py", "one\ntwo\nthree")  # no final newline
    write(ws, ".env", "TOKEN=x\n")
    write(ws, ".env.example", "TOKEN=\n")
    write(tmp_path, "outside.txt", "secret\n")


def resolve(answer: str, where: Path | Workspace, seen: SeenLines | None = None) -> list[Reference]:
    """The references in `answer`, checked in `where` (a folder, or a whole workspace)."""
    workspace = where if isinstance(where, Workspace) else Workspace([where])
    return resolve_references(answer, workspace, seen or SeenLines())


def one(answer: str, where: Path | Workspace, seen: SeenLines | None = None) -> Reference:
    refs = resolve(answer, where, seen)
    assert len(refs) == 1, refs
    return refs[0]


# --- finding ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "text", "path", "start", "end"),
    [
        ("The handler is src/app.py:12 here.", "src/app.py:12", "src/app.py", 12, 12),
        ("See `src/app.py:12` for it.", "src/app.py:12", "src/app.py", 12, 12),
        ("It parses (src/app.py:12-20).", "src/app.py:12-20", "src/app.py", 12, 20),
        ("see src/app.py:3", "src/app.py:3", "src/app.py", 3, 3),
        ("It ends in src/app.py:3.", "src/app.py:3", "src/app.py", 3, 3),
        ("At src/app.py:3, then", "src/app.py:3", "src/app.py", 3, 3),
        ("Here src/app.py:3: the loop", "src/app.py:3", "src/app.py", 3, 3),
        ("Lines src/app.py:12–20 do it", "src/app.py:12–20", "src/app.py", 12, 20),
        ("Lines src/app.py:12—20 do it", "src/app.py:12—20", "src/app.py", 12, 20),
        ("Lines src/app.py:L12-L20 do it", "src/app.py:L12-L20", "src/app.py", 12, 20),
        ("Line src/app.py:L7 does it", "src/app.py:L7", "src/app.py", 7, 7),
        ("GitHub src/app.py#L12-L20 style", "src/app.py#L12-L20", "src/app.py", 12, 20),
        ("GitHub src/app.py#L12 style", "src/app.py#L12", "src/app.py", 12, 12),
        ("Column src/app.py:12:5 here", "src/app.py:12:5", "src/app.py", 12, 12),
        ("Reversed src/app.py:20-12 here", "src/app.py:20-12", "src/app.py", 12, 20),
        ("A [link](src/app.py:12) here", "src/app.py:12", "src/app.py", 12, 12),
        ("A [src/app.py:12](src/app.py#L12) here", "src/app.py:12", "src/app.py", 12, 12),
        ("A [app.py](src/app.py#L4-L6) here", "src/app.py#L4-L6", "src/app.py", 4, 6),
        ("**src/app.py:3**", "src/app.py:3", "src/app.py", 3, 3),
        ("Relative ./src/app.py:3 too", "./src/app.py:3", "./src/app.py", 3, 3),
        ("Unicode docs/über_文件.md:3 too", "docs/über_文件.md:3", "docs/über_文件.md", 3, 3),
        ("Scoped @types/node+x/index.d.ts:9", "@types/node+x/index.d.ts:9", None, 9, 9),
        ("Dotfile .env:1 here", ".env:1", ".env", 1, 1),
        ("Makefile-like a/Makefile:2 here", "a/Makefile:2", "a/Makefile", 2, 2),
    ],
)
def test_citation_forms(answer: str, text: str, path: str | None, start: int, end: int) -> None:
    found = find_citations(answer)
    assert len(found) == 1, found
    got_path, got_start, got_end, span = found[0]
    assert answer[span[0] : span[1]] == text
    assert got_path == (path if path is not None else text.rsplit(":", 1)[0])
    assert (got_start, got_end) == (start, end)


@pytest.mark.parametrize(
    "answer",
    [
        "Serve on http://host:8080 now",
        "Serve on http://localhost:8080/src/app.py:12 now",
        "https://github.com/o/r/blob/main/src/app.py#L12",
        "[app](https://github.com/o/r/blob/main/src/app.py#L12)",
        "file:///home/u/src/app.py:3",
        "We met at 12:30 and 10:30:15.",
        "The ratio 3.14:2 and 1/2:3",
        "Host 10.0.0.1:8080 answers",
        "Released in v1.2:3 and 1.2.3:4",
        "Just 42 and :12 and app:12",
        "Windows C:/src/app.py:3 and src\\app.py:3",
        "Not a line src/app.py:12abc or src/app.py:x",
        "host.com:8080/api and a.py:1.5",
        "Line number too long src/app.py:1234567890",
    ],
)
def test_not_citations(answer: str) -> None:
    assert find_citations(answer) == []


def test_several_citations_in_order_with_exact_spans() -> None:
    answer = "First `a.py:1`, then (b/c.ts:2-3) and see d.md#L4. Also [x](e.rs:5)."
    found = find_citations(answer)
    assert [answer[s:e] for _, _, _, (s, e) in found] == [
        "a.py:1",
        "b/c.ts:2-3",
        "d.md#L4",
        "e.rs:5",
    ]
    assert [f[3] for f in found] == sorted(f[3] for f in found)


def test_markdown_link_label_and_target_give_one_reference(ws: Path) -> None:
    answer = "Open [src/app.py:4-6](src/app.py#L4-L6) now."
    ref = one(answer, ws)
    assert answer[ref.span[0] : ref.span[1]] == "src/app.py:4-6"
    assert (ref.start_line, ref.end_line, ref.verified) == (4, 6, True)


# --- verifying -------------------------------------------------------------------------------


def test_verified_reference(ws: Path) -> None:
    answer = "The loop is at src/app.py:12-30."
    ref = one(answer, ws)
    assert ref.verified
    assert not ref.seen
    assert ref.path == "src/app.py"
    assert ref.uri == (ws / "src" / "app.py").resolve().as_uri()
    assert to_json(ref) == {
        "uri": ref.uri,
        "range": {"start": {"line": 11, "character": 0}, "end": {"line": 29, "character": 7}},
        "path": "src/app.py",
        "startLine": 12,
        "endLine": 30,
        "verified": True,
        "seen": False,
        "span": [15, 31],
    }
    assert answer[15:31] == "src/app.py:12-30"
    json.dumps(to_json(ref))


def test_last_line_without_newline_counts(ws: Path) -> None:
    ref = one("src/short.py:3", ws)
    assert ref.verified
    assert to_json(ref)["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": 5},
    }
    assert not one("src/short.py:4", ws).verified


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ("src/missing.py:1", "src/missing.py"),
        ("src/app.py:31", "src/app.py"),
        ("src/app.py:29-31", "src/app.py"),
        ("src/app.py:0", "src/app.py"),
        ("src/app.py:0-3", "src/app.py"),
        (".env:1", ".env"),
        (".ENV:1", ".ENV"),
        ("../outside.txt:1", "../outside.txt"),
        ("src/../../outside.txt:1", "src/../../outside.txt"),
        ("/etc/passwd:1", ""),
        ("~/notes.txt:1", ""),
        ("src:1", None),  # a folder
        ("src/:1", "src/"),
    ],
)
def test_unverified(ws: Path, answer: str, path: str | None) -> None:
    refs = resolve(answer, ws)
    if path is None:  # `src` has no `.` or `/`: not even a citation
        assert refs == []
        return
    assert len(refs) == 1
    ref = refs[0]
    assert not ref.verified
    assert not ref.seen
    assert ref.uri is None
    assert ref.path == path
    # No `uri: null` and no range: a client's location handler only ever sees verified ones.
    for encoding in (None, "utf-8", "utf-16", "utf-32"):
        data = to_json(ref.in_encoding(encoding))
        assert "uri" not in data and "range" not in data
        assert data["verified"] is False


def test_folder_citation_is_unverified(ws: Path) -> None:
    ref = one("see src/app.py/:1 and", ws)
    assert not ref.verified


def test_env_template_is_verified(ws: Path) -> None:
    assert one(".env.example:1", ws).verified


def test_symlinks_are_never_followed(ws: Path, tmp_path: Path) -> None:
    (ws / "link.py").symlink_to(ws / "src" / "app.py")
    (ws / "out.txt").symlink_to(tmp_path / "outside.txt")
    (ws / "dirlink").symlink_to(ws / "src", target_is_directory=True)
    refs = resolve("link.py:1, out.txt:1 and dirlink/app.py:1", ws)
    assert [r.path for r in refs] == ["link.py", "out.txt", "dirlink/app.py"]
    assert not any(r.verified or r.uri for r in refs)


def test_non_regular_files_are_unverified(ws: Path) -> None:
    os.mkfifo(ws / "pipe.txt")
    ref = one("pipe.txt:1", ws)  # must not hang: opened non-blocking, refused
    assert not ref.verified


def test_hard_link_is_unverified(ws: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "outside.txt", ws / "hard.txt")
    assert not one("hard.txt:1", ws).verified


def test_ignored_file_is_unverified(ws: Path) -> None:
    (ws / ".lanternignore").write_text("secret/\n")
    (ws / "secret").mkdir()
    (ws / "secret" / "notes.md").write_text("a\n")
    assert not one("secret/notes.md:1", ws).verified


def test_binary_file_is_unverified(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"a\nb\0c\n")
    assert not one("blob.bin:1", ws).verified


def test_utf16_file_lines_and_utf16_lengths(ws: Path) -> None:
    (ws / "wide.txt").write_text("héllo\r\nwörld 😀\n", encoding="utf-16")
    ref = one("wide.txt:2", ws)
    assert ref.verified
    assert ref.end_width.utf16 == 8  # the emoji is two UTF-16 code units
    assert ref.end_width.utf8 == len("wörld 😀".encode())
    assert ref.end_width.utf32 == 7
    assert not one("wide.txt:3", ws).verified


def test_utf8_bom_and_crlf(ws: Path) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfab\r\ncd\r\n")
    assert one("bom.txt:1", ws).end_width.utf16 == 2
    assert one("bom.txt:2", ws).end_width.utf8 == 2
    assert not one("bom.txt:3", ws).verified


NON_ASCII = "naïve café → 😀 done"  # 2-byte, 3-byte and 4-byte UTF-8 characters


@pytest.mark.parametrize(
    ("encoding", "end"),
    [
        ("utf-8", len(NON_ASCII.encode("utf-8"))),  # 26 bytes
        ("utf-16", 20),  # the emoji is two code units
        ("utf-32", 19),
        (None, 20),  # no encoding given: the LSP default, UTF-16
    ],
)
def test_range_end_is_counted_in_the_position_encoding(
    ws: Path, encoding: str | None, end: int
) -> None:
    (ws / "text.md").write_text(f"first\n{NON_ASCII}\nlast\n", "utf-8")
    ref = one("text.md:1-2", ws)
    assert to_json(ref.in_encoding(encoding))["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 1, "character": end},
    }


def test_span_is_counted_in_the_position_encoding(ws: Path) -> None:
    answer = f"{NON_ASCII}: src/app.py:3 and 😀 src/nope.py:1."
    refs = resolve(answer, ws)
    assert [r.verified for r in refs] == [True, False]
    for ref, text in zip(refs, ("src/app.py:3", "src/nope.py:1"), strict=True):
        lo, hi = to_json(ref)["span"]
        assert answer[lo:hi] == text  # default: code points, Python string offsets
        lo, hi = to_json(ref.in_encoding("utf-32"))["span"]
        assert answer[lo:hi] == text
        lo, hi = to_json(ref.in_encoding("utf-8"))["span"]
        assert answer.encode("utf-8")[lo:hi] == text.encode()  # what Lua's string.sub takes
        lo, hi = to_json(ref.in_encoding("utf-16"))["span"]
        assert answer.encode("utf-16-le")[2 * lo : 2 * hi] == text.encode("utf-16-le")  # JS


def test_invalid_utf8_line_is_measured_in_bytes_as_stored(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes("caf\xe9 ok\n".encode("latin-1"))
    ref = one("latin1.txt:1", ws)
    assert to_json(ref.in_encoding("utf-8"))["range"]["end"]["character"] == 7
    assert to_json(ref.in_encoding("utf-16"))["range"]["end"]["character"] == 7


def test_empty_file_has_no_lines(ws: Path) -> None:
    (ws / "empty.txt").write_text("")
    assert not one("empty.txt:1", ws).verified


def test_large_file_counts_lines_within_the_cap(ws: Path) -> None:
    line = b"x" * 1023 + b"\n"
    (ws / "big.log").write_bytes(line * (8 * 1024 + 10))  # 8 MiB + 10 lines
    refs = resolve("big.log:1 big.log:8192 big.log:8193", ws)
    assert [r.verified for r in refs] == [True, True, False]
    assert refs[1].end_width.utf16 == 1023


def test_several_lines_of_one_file_are_measured(ws: Path) -> None:
    def width(n: int) -> int:
        return n % 53 + 1

    body = "".join(f"{'x' * width(n)}\r\n" for n in range(1, 100_001))  # ~2.8 MB, 43 chunks
    (ws / "wide.md").write_text(body, newline="")
    refs = resolve("wide.md:70000, wide.md:3 and wide.md:40000-41000 then wide.md:1", ws)
    assert [(r.end_line, r.end_width.utf8) for r in refs] == [
        (n, width(n)) for n in (70000, 3, 41000, 1)
    ]


def test_large_utf16_file_counts_lines_within_the_cap(ws: Path) -> None:
    line = "é" * 511 + "\n"  # 1 KiB in UTF-16
    (ws / "big16.txt").write_bytes(codecs.BOM_UTF16_LE + (line * 8200).encode("utf-16-le"))
    refs = resolve("big16.txt:8191 big16.txt:8192 big16.txt:8193", ws)  # the BOM shifts the cap
    assert [r.verified for r in refs] == [True, False, False]
    assert refs[0].end_width.utf16 == 511


SHAPES = {
    "plain.txt": b"a\nb\nc\n",
    "unterminated.txt": b"a\nb\nc",
    "bom-crlf.txt": codecs.BOM_UTF8 + b"a\r\nb\r\nc\r\n",
    "bom-only.txt": codecs.BOM_UTF8,
    "blank-lines.txt": b"\n\n\n",
    "lone-cr.txt": b"a\rb\nc\n",
    "utf16le.txt": codecs.BOM_UTF16_LE + "a\r\nb\nc".encode("utf-16-le"),
    "utf16be.txt": codecs.BOM_UTF16_BE + "a\nb\nc\n".encode("utf-16-be"),
    "utf32le.txt": codecs.BOM_UTF32_LE + "a\nb\n\n".encode("utf-32-le"),
    "bad-utf8.txt": b"caf\xe9\n\xff\xfe\n",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
async def test_references_count_lines_as_read_file_numbers_them(
    ctx: ToolContext, ws: Path, name: str
) -> None:
    (ws / name).write_bytes(SHAPES[name])
    shown = (await run(ctx, "read_file", {"path": name})).content
    found = re.search(r" of (\d+)\]", shown)
    total = int(found[1]) if found else 0
    assert total or "is empty" in shown
    refs = resolve_references(
        f"{name}:{max(total, 1)} {name}:{total + 1}", ctx.workspace, SeenLines()
    )
    assert [r.verified for r in refs] == [total > 0, False]


async def test_check_references_reads_off_the_event_loop(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers = _record_readers(monkeypatch)
    refs = await check_references("See src/app.py:3.", Workspace([ws]), SeenLines())
    assert [r.verified for r in refs] == [True]
    assert readers and threading.get_ident() not in readers
    assert await check_references("", Workspace([ws]), SeenLines()) == []


async def test_the_agent_checks_references_off_the_event_loop(
    fake: FakeOpenAI, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow disk while the answer's citations are checked must not stall other requests."""
    fake.add_turns([Turn(content="It is at src/app.py:3-4.")])
    readers = _record_readers(monkeypatch)
    model = ModelClient(
        model="fake-model", base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=0
    )
    try:
        bot = Agent(model=model, workspace=Workspace([ws]), approvals=Fixed(Decision.ALLOW_ONCE))
        result = await bot.ask("Where?", Conversation())
    finally:
        await model.close()
    assert [r.verified for r in result.references] == [True]
    assert readers and threading.get_ident() not in readers


def _record_readers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the thread of every file opened through the jail (the real open still runs)."""
    readers: list[int] = []
    real = Workspace.open_checked

    def open_checked(self: Workspace, *args: Any, **kwargs: Any) -> Any:
        readers.append(threading.get_ident())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, "open_checked", open_checked)
    return readers


def test_no_absolute_path_in_path_fields(ws: Path, tmp_path: Path) -> None:
    answer = (
        f"src/app.py:1 ./src/app.py:2 {ws}/src/app.py:3 /etc/passwd:1 "
        f"../outside.txt:1 {tmp_path}/outside.txt:1 ~/x.py:1 src/nope.py:2"
    )
    refs = resolve(answer, ws)
    assert len(refs) == 8
    for ref in refs:
        assert not ref.path.startswith(("/", "~"))
        assert str(tmp_path) not in ref.path
        d = to_json(ref)
        assert str(tmp_path) not in json.dumps({k: v for k, v in d.items() if k != "uri"})
    assert [r.verified for r in refs] == [True, True, False, False, False, False, False, False]


# --- seen ------------------------------------------------------------------------------------


def test_seen_and_not_seen(ws: Path) -> None:
    seen = SeenLines()
    seen.add_all([SeenSpan("src/app.py", 1, 10)])
    refs = resolve("src/app.py:3, src/app.py:5-10, src/app.py:8-12, src/app.py:20", ws, seen)
    assert [r.verified for r in refs] == [True] * 4
    assert [r.seen for r in refs] == [True, True, False, False]


def test_seen_merges_adjacent_ranges(ws: Path) -> None:
    seen = SeenLines()
    seen.add("src/app.py", 1, 5)
    seen.add("src/app.py", 6, 10)
    seen.add("src/app.py", 20, 25)
    ref, gap = resolve("src/app.py:3-9 and src/app.py:9-21", ws, seen)
    assert ref.seen
    assert not gap.seen
    seen.add("src/app.py", 11, 19)
    assert seen.to_json() == [["src/app.py", 1, 25]]
    assert one("src/app.py:1-25", ws, seen).seen


def test_seen_normalises_dot_slash(ws: Path) -> None:
    seen = SeenLines()
    seen.add("src/app.py", 1, 5)
    ref = one("see ./src/app.py:3", ws, seen)
    assert ref.seen
    assert ref.path == "src/app.py"
    seen2 = SeenLines()
    seen2.add("./src//app.py", 1, 5)
    assert one("src/app.py:3", ws, seen2).seen


def test_seen_requires_verified(ws: Path) -> None:
    seen = SeenLines()
    seen.add("src/app.py", 1, 100)
    seen.add("src/missing.py", 1, 100)
    seen.add(".env", 1, 1)
    refs = resolve("src/app.py:40 src/missing.py:1 .env:1", ws, seen)
    assert [r.seen for r in refs] == [False, False, False]


def test_seen_lines_unit() -> None:
    seen = SeenLines()
    assert not seen
    assert not seen.covers("a.py", 1, 1)
    seen.add("a.py", 10, 5)  # reversed
    seen.add("a.py", 0, 2)  # clamped to 1-2
    seen.add("a.py", -5, 0)  # nothing
    assert seen.to_json() == [["a.py", 1, 2], ["a.py", 5, 10]]
    assert seen.covers("a.py", 1, 2)
    assert seen.covers("a.py", 10, 5)
    assert not seen.covers("a.py", 2, 5)
    assert not seen.covers("a.py", 0, 1)
    seen.add("a.py", 3, 4)
    assert seen.to_json() == [["a.py", 1, 10]]
    seen.add("a.py", 2, 30)
    assert seen.to_json() == [["a.py", 1, 30]]
    assert not seen.covers("b.py", 1, 1)


def test_seen_lines_json_round_trip() -> None:
    seen = SeenLines()
    seen.add_all([SeenSpan("b/x.py", 1, 4), SeenSpan("a.py", 10, 20), SeenSpan("b/x.py", 8, 9)])
    data = seen.to_json()
    assert data == [["a.py", 10, 20], ["b/x.py", 1, 4], ["b/x.py", 8, 9]]
    back = SeenLines.from_json(json.loads(json.dumps(data)))
    assert back.to_json() == data
    assert back.covers("b/x.py", 2, 3)


def test_seen_lines_from_bad_json_is_lenient() -> None:
    assert SeenLines.from_json(None).to_json() == []
    assert SeenLines.from_json({"a": 1}).to_json() == []
    data: list[object] = [["a.py", 1, 2], ["b.py", True, 3], ["c.py", "1", 2], [1, 2, 3], "x"]
    assert SeenLines.from_json(data).to_json() == [["a.py", 1, 2]]


def _naive_seen(spans: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """What `SeenLines.to_json` must give: every line shown, per file, in runs."""
    lines: dict[str, set[int]] = {}
    for path, a, b in spans:
        lo, hi = max(min(a, b), 1), max(a, b)
        lines.setdefault(path.removeprefix("./"), set()).update(range(lo, hi + 1))
    runs: list[tuple[str, int, int]] = []
    for path in sorted(lines):
        for n in sorted(lines[path]):
            if runs and runs[-1][0] == path and runs[-1][2] == n - 1:
                runs[-1] = (path, runs[-1][1], n)
            else:
                runs.append((path, n, n))
    return runs


def test_seen_lines_agree_with_a_naive_reference_on_random_ranges() -> None:
    rng = random.Random(27)
    seen = SeenLines()
    spans: list[tuple[str, int, int]] = []
    for step in range(3000):
        path = rng.choice(["a.py", "./a.py", "b/c.py"])
        start = rng.randint(-3, 400)
        span = (path, start, start + rng.randint(-4, rng.choice([0, 1, 3, 40])))
        spans.append(span)
        seen.add(*span)
        if step % 150 == 0 or step == 2999:
            assert seen.to_json() == [list(run) for run in _naive_seen(spans)], step
    shown = {(p, n) for p, lo, hi in _naive_seen(spans) for n in range(lo, hi + 1)}
    for _ in range(2000):
        path = rng.choice(["a.py", "b/c.py", "d.py"])
        lo = rng.randint(-1, 405)
        hi = lo + rng.randint(0, 12)
        expected = lo >= 1 and all((path, n) in shown for n in range(lo, hi + 1))
        assert seen.covers(path, lo, hi) is expected, (path, lo, hi)


_FORK = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def _load_conversation(path: str) -> None:
    conv = Conversation.from_json(json.loads(Path(path).read_text("utf-8")))
    assert conv.seen.covers("src/app.py", 99_999, 99_999)


def test_a_conversation_file_with_100k_seen_ranges_loads(tmp_path: Path) -> None:
    """One range per use shown by many `find_references` calls: loading the file is one
    search per range, not a rescan of the file's ranges (before: 30,000 took over 10 s).
    Bounded only against a hang, in a child process."""
    seen = [["src/app.py", n, n] for n in range(1, 200_000, 2)]
    data = {"version": 1, "id": "c1", "messages": [], "seen": seen}
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(data), "utf-8")
    proc = _FORK.Process(target=_load_conversation, args=(str(path),))
    proc.start()
    proc.join(HANG_S)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"loading 100,000 seen ranges still runs after {HANG_S:.0f} s")
    assert proc.exitcode == 0


# --- multi-root ------------------------------------------------------------------------------


def test_multi_root(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.py").write_text("1\n")
    (b / "x.py").write_text("1\n2\n")
    ws = Workspace([a, b])
    seen = SeenLines()
    seen.add("b/x.py", 1, 2)
    refs = resolve("See b/x.py:2, a/x.py:2, ./b/x.py:1-2 and x.py:1.", ws, seen)
    assert [(r.path, r.verified, r.seen) for r in refs] == [
        ("b/x.py", True, True),
        ("a/x.py", False, False),
        ("b/x.py", True, True),
        ("x.py", False, False),  # no folder name: not a path of this workspace
    ]
    assert refs[0].uri == (b / "x.py").resolve().as_uri()


# --- size ------------------------------------------------------------------------------------


def test_long_answer_with_many_citations(ws: Path) -> None:
    chunk = "In `src/app.py:3-4` and (src/short.py:2), not at 12:30 or http://h:1. "
    answer = chunk * (200_000 // len(chunk))
    answer += "x" * 50_000 + "a.b" * 20_000 + "[" * 10_000 + "/" * 10_000
    refs = resolve(answer, ws)
    assert 2 * (200_000 // len(chunk)) > MAX_CITATIONS
    assert len(refs) == MAX_CITATIONS  # the first 200 only
    assert all(r.verified for r in refs)
    assert [r.span for r in refs] == sorted(r.span for r in refs)
    for ref in refs[:4]:
        assert answer[ref.span[0] : ref.span[1]] in {"src/app.py:3-4", "src/short.py:2"}


def test_pathological_inputs_stay_linear() -> None:
    for answer in (
        "a" * 100_000 + ":",
        "a." * 50_000 + "#",
        "](" * 50_000,
        "[a](" * 30_000,
        "http://" + "a" * 100_000,
        "a:" * 50_000,
        "ab" * 50_000 + "://",
    ):
        assert find_citations(answer) == []
