"""Ignore files under attack: FIFOs, links, huge files, BOMs, deep paths, nested roots.

Lantern reads every ignore file itself, through the jail; one that exists but cannot be
trusted (a link, a FIFO, over 1 MiB) fails closed for its folder. Real files, FIFOs,
links and the real rg and git; `asyncio.wait_for` bounds are hang guards only.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from lantern.tools.base import ToolContext
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.ignore.files import INLINE_PARSE_BYTES, IgnoreRules
from lantern.workspace.roots import Workspace

from tests.conftest import call, ctx_for, write
from tests.deep_tree import make_deep
from tests.descriptors import descriptors_left
from tests.unit.test_list_search import CANARY, PAYLOAD, SECRET_LINE, listed, searched

HANG_GUARD_S = 60


async def guarded(ctx: ToolContext, tool: str, **args: object) -> object:
    return await asyncio.wait_for(call(ctx, tool, **args), HANG_GUARD_S)


def untrusted_tree(ws: Path, kind: str, tmp: Path) -> None:
    """`sub/.gitignore` (or .lanternignore) made untrustworthy in one of several ways."""
    write(ws, "top.txt", f"{CANARY} top\n")
    write(ws, "sub/private.txt", SECRET_LINE)
    write(ws, "sub/deeper/also.txt", SECRET_LINE)
    name = ".lanternignore" if kind == "lanternignore_link" else ".gitignore"
    path = ws / "sub" / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind in ("outside_link", "lanternignore_link"):
        outside = write(tmp, "outside/rules", "private.txt\n")
        os.symlink(outside, path)
    elif kind == "too_big":
        path.write_text("private.txt\n" + "# padding\n" * 110_000)
    elif kind == "hard_link":
        outside = write(tmp, "outside/rules", "private.txt\n")
        os.link(outside, path)


KINDS = ["fifo", "dev_zero", "outside_link", "lanternignore_link", "too_big", "hard_link"]


@pytest.mark.parametrize("kind", KINDS)
async def test_untrusted_ignore_file_fails_closed(tmp_path: Path, ws: Path, kind: str) -> None:
    untrusted_tree(ws, kind, tmp_path)
    ctx = ctx_for(ws)
    listing = await guarded(ctx, "list_files")
    assert not listing.is_error, listing.content
    assert "top.txt" in listing.content
    assert "sub/" not in listing.content  # none of the folder's files is served
    found = await guarded(ctx, "search", pattern=CANARY)
    assert "top.txt:1:" in found.content
    assert PAYLOAD not in found.content
    for path in ("sub/private.txt", "sub/deeper/also.txt"):
        read = await guarded(ctx, "read_file", path=path)
        assert read.code == "ignored_path", read.content
        assert PAYLOAD not in read.content
        assert str(tmp_path) not in read.content
        assert f"sub/{'.lanternignore' if kind == 'lanternignore_link' else '.gitignore'}" in (
            read.content
        )
    sub = await guarded(ctx, "list_files", path="sub")
    assert sub.code == "ignored_path"


async def test_link_to_outside_file_is_no_oracle(tmp_path: Path, ws: Path) -> None:
    """What list_files shows must not depend on the content of a file outside."""
    write(ws, "sub/a.txt")
    write(ws, "sub/b.txt")
    outside = write(tmp_path, "outside/probe", "a.txt\n")
    os.symlink(outside, ws / "sub" / ".gitignore")
    ctx = ctx_for(ws)
    first = (await call(ctx, "list_files")).content
    outside.write_text("b.txt\n")
    os.utime(outside, (1, 1))
    assert (await call(ctx, "list_files")).content == first


async def test_utf8_bom_gitignore_is_honoured_like_git(ws: Path) -> None:
    (ws / ".gitignore").write_bytes(b"\xef\xbb\xbfsecret.txt\n")
    write(ws, "secret.txt", SECRET_LINE)
    write(ws, "plain.txt")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git = subprocess.run(["git", "-C", str(ws), "check-ignore", "-q", "secret.txt"], check=False)
    assert git.returncode == 0  # git honours the BOM
    ctx = ctx_for(ws)
    assert "secret.txt" not in await listed(ctx)
    assert (await call(ctx, "read_file", path="secret.txt")).code == "ignored_path"
    assert PAYLOAD not in (await call(ctx, "search", pattern=CANARY)).content


GIT_PATTERNS = """\
*.log
!keep.log
build/
/top-only.txt
docs/**/draft-*
vendor/**
!vendor/allowed.txt
cache*
!cache-ok
a/*/z.txt
*.tmp/
"""


async def test_verdicts_agree_with_git(ws: Path) -> None:
    """Lantern's own evaluation against real `git` on the same tree."""
    write(ws, ".gitignore", GIT_PATTERNS)
    write(ws, "src/.gitignore", "*.gen\n!keep.log\n/local.txt\n")
    names = [
        "x.log", "keep.log", "src/x.log", "src/keep.log", "build/out.txt", "src/build/o.txt",
        "top-only.txt", "src/top-only.txt", "docs/a/b/draft-1.md", "docs/final.md",
        "vendor/lib.py", "vendor/allowed.txt", "cache1", "cache-ok", "src/cache-ok",
        "a/b/z.txt", "a/b/c/z.txt", "d.tmp/f.txt", "e.tmp", "src/x.gen", "src/local.txt",
        "src/sub/local.txt", "plain.py",
    ]  # fmt: skip
    for name in names:
        write(ws, name)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git = subprocess.run(
        ["git", "-C", str(ws), "ls-files", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert set(await listed(ctx_for(ws))) == set(git.stdout.split())


async def test_fifo_gitignore_in_root_does_not_hang(ws: Path) -> None:
    write(ws, "a.txt", "needle\n")
    os.mkfifo(ws / ".gitignore")
    ctx = ctx_for(ws)
    listing = await guarded(ctx, "list_files")
    assert listing.code == "ignored_path"
    assert ".gitignore" in listing.content
    assert (await guarded(ctx, "search", pattern="needle")).code == "ignored_path"


async def test_new_ignore_file_in_a_settled_folder_is_seen(ws: Path) -> None:
    """Folders known to hold no ignore file are remembered only while they do not change."""
    write(ws, "old/secret.txt", SECRET_LINE)
    write(ws, "old/plain.txt")
    await asyncio.sleep(2.2)  # let the folder settle, so "no ignore file here" is remembered
    ctx = ctx_for(ws)
    assert set(await listed(ctx)) == {"old/plain.txt", "old/secret.txt"}
    write(ws, "old/.gitignore", "secret.txt\n")
    await asyncio.sleep(2.2)  # settled again: only the folder's changed mtime tells
    assert set(await listed(ctx)) == {"old/plain.txt", "old/.gitignore"}
    assert (await call(ctx, "read_file", path="old/secret.txt")).code == "ignored_path"


async def test_a_root_that_fails_closed_does_not_hide_the_other_roots(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "x.txt", SECRET_LINE)
    os.symlink("/dev/zero", a / ".gitignore")
    write(b, "y.txt", f"{CANARY} in b\n")
    ctx = ctx_for([a, b])
    listing = await guarded(ctx, "list_files")
    assert "b/y.txt (" in listing.content
    assert "a/x.txt" not in listing.content
    assert "[not served: a is under a/.gitignore, which is a symbolic link" in listing.content
    found = await guarded(ctx, "search", pattern=CANARY)
    assert "b/y.txt:1:" in found.content and PAYLOAD not in found.content
    assert "[not served: a is under a/.gitignore" in found.content
    assert str(tmp_path) not in listing.content + found.content
    assert (await call(ctx, "list_files", path="a")).code == "ignored_path"


# --- nested workspace roots -----------------------------------------------------------------


async def test_enclosing_root_rules_apply_to_an_inner_root(ws: Path) -> None:
    write(ws, ".lanternignore", "inner/private/\n")
    write(ws, ".gitignore", "*.secret\n")
    write(ws, "inner/private/notes.md", SECRET_LINE)
    write(ws, "inner/x.secret", SECRET_LINE)
    write(ws, "inner/app.py", f"# {CANARY}\n")
    ctx = ctx_for([ws, ws / "inner"])
    assert set(await listed(ctx, path="inner")) == {"inner/app.py"}
    for path in ("inner/private/notes.md", "inner/x.secret"):
        result = await call(ctx, "read_file", path=path)
        assert result.code == "ignored_path", result.content
    found = await call(ctx, "search", pattern=CANARY, path="inner")
    assert PAYLOAD not in found.content
    assert "inner/app.py:1:" in found.content
    assert (await call(ctx, "list_files", path="inner/private")).code == "ignored_path"


# --- a huge ignore file and deep paths ------------------------------------------------------


def big_gitignore(n: int = 50_000) -> str:
    shapes = ["gen_{i}/", "*.ext{i}", "src/mod{i}/*.tmp", "cache{i}*", "**/deep{i}/x?.md"]
    return "".join(shapes[i % len(shapes)].format(i=i) + "\n" for i in range(n))


async def test_fifty_thousand_globs_are_all_applied(ws: Path) -> None:
    text = big_gitignore()
    assert len(text) < 1 << 20
    write(ws, ".gitignore", text)
    hidden = [
        "gen_49995/a.py",
        "x.ext49996",
        "src/mod49997/a.tmp",
        "cache49998-z",
        "q/deep49999/x1.md",
    ]
    shown = ["gen_49996/a.py", "x.ext49995", "src/mod49997/a.txt", "cache", "q/deep49999/y1.md"]
    for name in hidden:
        write(ws, name, SECRET_LINE)
    for name in shown:
        write(ws, name, f"{CANARY}\n")
    ctx = ctx_for(ws)
    assert set(await listed(ctx)) == {".gitignore", *shown}
    found = await call(ctx, "search", pattern=CANARY)
    assert PAYLOAD not in found.content
    assert {line.split(":", 1)[0] for line in await searched(ctx, CANARY)} == set(shown)


class CountingRules(IgnoreRules):
    """Real rules that also record how often they are consulted, and from which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.verdicts = 0
        self.deepest_on_loop = 0  # the deepest folder looked at on the event loop's thread
        self.parsed_on_loop: list[int] = []  # sizes of ignore files parsed there

    def load(self, dir_fd: int, folder: tuple[str, ...], kind: str) -> object:  # type: ignore[override]
        on_loop = threading.current_thread() is threading.main_thread()
        if on_loop:
            self.deepest_on_loop = max(self.deepest_on_loop, len(folder))
        known = set(self._cache)
        found = super().load(dir_fd, folder, kind)
        if on_loop and isinstance(found, CompiledRules) and (folder, kind) not in known:
            self.parsed_on_loop.append(sum(len(line) + 1 for line in found.lines))
        if isinstance(found, CompiledRules) and not hasattr(found, "counted"):
            real = found.verdict

            def counted(parts: tuple[str, ...], is_dir: bool, aliases: bool = False) -> bool | None:
                self.verdicts += 1
                return real(parts, is_dir, aliases)

            found.verdict = counted  # type: ignore[method-assign]
            found.counted = True  # type: ignore[attr-defined]
        return found


def counting_ctx(ws: Path) -> tuple[ToolContext, CountingRules]:
    workspace = Workspace([ws])
    rules = CountingRules()
    object.__setattr__(workspace.roots[0], "ignore", rules)
    return ctx_for(workspace), rules


async def test_large_ignore_file_is_parsed_off_the_event_loop(ws: Path) -> None:
    write(ws, ".gitignore", big_gitignore(20_000))
    write(ws, "src/.gitignore", "*.tmp\n")
    write(ws, "src/a.py", "needle\n")
    ctx, rules = counting_ctx(ws)
    for tool, args in [
        ("read_file", {"path": "src/a.py"}),
        ("list_files", {}),
        ("search", {"pattern": "needle"}),
    ]:
        result = await call(ctx, tool, **args)
        assert not result.is_error, result.content
    assert ((), ".gitignore") in rules._cache  # parsed, and honoured
    assert all(size <= INLINE_PARSE_BYTES for size in rules.parsed_on_loop), rules.parsed_on_loop


async def test_deep_path_check_is_linear_and_off_the_event_loop(ws: Path) -> None:
    write(ws, ".gitignore", "*.log\nbuild/\n/top/x/\n**/gen/**\n")
    ctx, rules = counting_ctx(ws)
    result = await call(ctx, "read_file", path="/".join(["x"] * 2000))
    assert result.code == "not_found"
    # One look per folder level and per kind of rule file, not one per pair of levels.
    assert 0 < rules.verdicts <= 2 * 2000 + 10, rules.verdicts
    assert rules.deepest_on_loop <= 32


@pytest.fixture
def deep_tree(ws: Path) -> Iterator[tuple[str, ...]]:
    write(ws, ".gitignore", "*.log\nbuild/\n")
    parts = make_deep(ws, 2000, 300)
    try:
        yield parts
    finally:  # pytest's own clean-up (recursive rmtree) would overflow on this depth
        subprocess.run(["rm", "-rf", "--", str(ws / "d")], check=True)


async def test_deep_tree_listing_is_linear(ws: Path, deep_tree: tuple[str, ...]) -> None:
    parts = deep_tree
    ctx, rules = counting_ctx(ws)
    rows = await listed(ctx, max_results=1000)
    assert len(rows) == 301
    assert "/".join((*parts, "f299.txt")) in rows
    assert 0 < rules.verdicts <= 2 * 2000 + 2 * 300 + 20, rules.verdicts
    rules.verdicts = 0
    found = await searched(ctx, "needle", max_results=500)
    assert len(found) == 300
    assert 0 < rules.verdicts <= 2 * 2000 + 2 * 300 + 20, rules.verdicts
    assert rules.deepest_on_loop <= 32
    assert "/".join(parts) in found[0]


def test_verdicts_remembered_by_name_keep_folders_and_kinds_apart() -> None:
    """Rules that look only at names remember verdicts by name: a file and a folder of
    the same name still get their own answer, and rules that look at folders never
    answer from what another folder got."""
    names_only = CompiledRules.parse("cache/\n*.log\n!keep.log\n")
    assert names_only.verdict(("cache",), is_dir=False) is None
    assert names_only.verdict(("a", "cache"), is_dir=True) is True
    assert names_only.verdict(("b", "cache"), is_dir=False) is None
    assert names_only.verdict(("x", "keep.log"), is_dir=False) is False
    assert names_only.verdict(("y", "z", "other.log"), is_dir=False) is True
    with_paths = CompiledRules.parse("*.log\n/top.log\n!src/*.log\n")
    assert with_paths.verdict(("src", "a.log"), is_dir=False) is False
    assert with_paths.verdict(("lib", "a.log"), is_dir=False) is True
    assert with_paths.verdict(("top.log",), is_dir=False) is True


@pytest.mark.parametrize("rel", ["top.txt", "a/b/deep.txt"])
async def test_out_of_descriptors_is_an_io_error_not_an_ignored_path(ws: Path, rel: str) -> None:
    """No folder on the way holds an ignore file: with too few descriptors to look, the
    read fails (closed) as `io_error`, never as a file some ignore file excludes."""
    write(ws, rel, "plain text\n")
    ctx = ctx_for(ws)
    codes = []
    for free in range(12):
        with descriptors_left(free):
            result = await call(ctx, "read_file", path=rel)
        codes.append(result.code)
        if result.code is None:
            assert "plain text" in result.content
            break
        assert result.code == "io_error", (free, result.content)
        assert "Too many open files" in result.content
    assert codes[-1] is None  # with enough descriptors the same read succeeds
