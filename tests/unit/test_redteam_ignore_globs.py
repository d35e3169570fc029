"""Ignore patterns with several `**` against very deep paths: linear, and the same answers.

`asyncio.wait_for` bounds are hang guards (a hang is the bug), not performance checks:
before the component matcher, `**/a/**/a/**/a/**/c` and a 200-component path took
longer than 30 s; 2,047 components never ended.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pathspec
import pytest
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.ignore.patterns import NameGlob, parse_line

from tests.conftest import call, ctx_for, write
from tests.unit.test_list_search import CANARY

HANG_GUARD_S = 60


async def test_a_deep_path_against_nested_double_stars_returns(ws: Path) -> None:
    write(ws, ".gitignore", "**/a/**/a/**/a/**/c\n**/a/**/b/**/c/\n")
    ctx = ctx_for(ws)
    deep = "/".join(["a"] * 2047)
    for tool in ("read_file", "list_files", "search"):
        args = {"path": deep, **({"pattern": "x"} if tool == "search" else {})}
        result = await asyncio.wait_for(call(ctx, tool, **args), HANG_GUARD_S)
        assert result.code == "not_found", result.content


async def test_thousands_of_double_star_rules_and_a_deep_path_return(ws: Path) -> None:
    rules = [f"**/a/**/b{i}/**/c" for i in range(3000)]
    write(ws, ".gitignore", "\n".join(rules) + "\n")
    write(ws, "a/x/b17/y/c", f"{CANARY}\n")
    ctx = ctx_for(ws)
    deep = "/".join(["a"] * 2047)
    result = await asyncio.wait_for(call(ctx, "read_file", path=deep), HANG_GUARD_S)
    assert result.code == "not_found", result.content
    assert (await call(ctx, "read_file", path="a/x/b17/y/c")).code == "ignored_path"


async def test_nested_double_stars_still_ignore_what_git_ignores(ws: Path) -> None:
    write(ws, ".gitignore", "**/a/**/b/**/c\nsrc/**/gen/**/*.tmp\n")
    write(ws, "x/a/y/b/z/c", f"{CANARY}\n")
    write(ws, "a/b/c", f"{CANARY}\n")
    write(ws, "src/p/gen/q/r.tmp", f"{CANARY}\n")
    write(ws, "a/c/b", f"{CANARY} shown\n")
    ctx = ctx_for(ws)
    for path in ("x/a/y/b/z/c", "a/b/c", "src/p/gen/q/r.tmp"):
        assert (await call(ctx, "read_file", path=path)).code == "ignored_path"
    found = await call(ctx, "search", pattern=CANARY)
    assert [line.split(":")[0] for line in found.content.splitlines()[1:]] == ["a/c/b"]


def _ignored(rules: CompiledRules, parts: list[str]) -> bool:
    """A file's verdict as the read path finds it: level by level, a folder taking its
    contents with it."""
    return any(rules.verdict(tuple(parts[:i]), i < len(parts)) for i in range(1, len(parts) + 1))


def test_globs_answer_like_pathspec() -> None:
    """Random patterns (several `**`, `*` runs, classes, escapes, anchors) and random file
    paths: the same verdict as pathspec's GitIgnoreSpec, an independent implementation."""
    rng = random.Random(20261130)
    pieces = ["**", "**", "a", "b", "c", "*", "x*", "?b", "[ab]", "a.b", "*.b", "*a*", "[!a]"]
    pieces += ["a[b-c]", "\\*", "b*c", "*b*b", "**b"]
    names = ["a", "b", "c", "ab", "x1", "a.b", "bb", "bcb", "*", "xbab", "7"]
    for _ in range(1000):
        line = "/".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        line = ("/" if rng.random() < 0.3 else "") + line + ("/" if rng.random() < 0.3 else "")
        if not line.replace("*", "").replace("/", ""):
            continue  # only `**` and `/`: pathspec 0.12 differs from git there (tested below)
        rules = CompiledRules.parse(line + "\n")
        spec = pathspec.GitIgnoreSpec.from_lines([line])
        for _ in range(20):
            parts = [rng.choice(names) for _ in range(rng.randint(1, 8))]
            assert _ignored(rules, parts) == bool(spec.match_file("/".join(parts))), (line, parts)


@pytest.mark.parametrize("line", ["**", "/**", "**/**", "*"])
def test_a_bare_double_star_ignores_everything(line: str) -> None:
    rules = CompiledRules.parse(line + "\n")
    assert rules.verdict(("a",), False) is True
    assert rules.verdict(("a",), True) is True


@pytest.mark.parametrize("line", ["**/", "/**/", "*/"])
def test_a_double_star_folder_ignores_every_folder_not_the_files_at_the_top(line: str) -> None:
    rules = CompiledRules.parse(line + "\n")
    assert rules.verdict(("a",), False) is None
    assert rules.verdict(("a",), True) is True
    assert _ignored(rules, ["c", "a", "x"])


@pytest.mark.parametrize(
    ("glob", "yes", "no"),
    [
        ("*a*a*b", ["aab", "xaYaZb", "aaab"], ["ab", "aaba", "aa"]),
        ("a?c", ["abc", "a.c"], ["ac", "abbc"]),
        ("[!a-c]x", ["dx", "zx"], ["ax", "cx", "x"]),
        ("[]]", ["]"], ["["]),
        ("\\*.md", ["*.md"], ["a.md"]),
        ("[[:digit:]][[:upper:]]", ["1A"], ["1a", "AA"]),
        ("***", ["x", "anything"], []),
    ],
)
def test_name_globs_match_like_git(glob: str, yes: list[str], no: list[str]) -> None:
    matcher = NameGlob(glob)
    assert [name for name in yes + no if matcher.match(name)] == yes


@pytest.mark.parametrize("line", ["[abc", "a\\", "#comment", "   ", "/", "!"])
def test_lines_git_skips_have_no_pattern(line: str) -> None:
    assert parse_line(line) is None


async def test_many_stars_against_a_huge_name_return() -> None:
    """`*a*a*…*b` against a 1 MB name of `a`s: a backtracking regex tries n^k splits and
    never ends; each `*` piece placed at its first fit answers in one pass."""
    line = "*a" * 40 + "*b"
    rules = CompiledRules.parse(f"{line}\n**/{line}/**/{line}\n")
    name = "a" * 1_000_000

    def check() -> tuple[bool | None, bool | None, bool | None]:
        return (
            rules.verdict((name,), False),
            rules.verdict((name, name, name + "b"), False),
            rules.verdict((name + "b",), False),
        )

    found = await asyncio.wait_for(asyncio.to_thread(check), HANG_GUARD_S)
    assert found == (None, True, True)


@pytest.mark.parametrize(
    ("line", "verdict"),
    [("**/a/**/b/**/c", True), ("a/**/b/**/c/", None), ("**/x*/**/y/**", True)],
)
def test_compiled_rules_answer_for_a_very_deep_path(line: str, verdict: bool | None) -> None:
    rules = CompiledRules.parse(line + "\n")
    deep = ("a",) * 3000 + ("x1", "b", "y", "c")
    assert rules.verdict(deep, is_dir=False) is verdict
