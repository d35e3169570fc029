"""Ignore patterns with several `**` against very deep paths: linear, and the same answers.

`asyncio.wait_for` bounds are hang guards (a hang is the bug), not performance checks:
before the component matcher, `**/a/**/a/**/a/**/c` and a 200-component path took
longer than 30 s; 2,047 components never ended.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import pytest
from lantern.workspace.ignore_glob import ComponentGlob
from lantern.workspace.ignore_rules import CompiledRules
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from tests.unit.test_list_search import CANARY, call, make_ctx, write, ws

__all__ = ["ws"]

HANG_GUARD_S = 60
_ANY_END = "(?:(?P<ps_d>/)|$)"
_DIR_END = "(?P<ps_d>/)"


async def test_a_deep_path_against_nested_double_stars_returns(ws: Path) -> None:
    write(ws, ".gitignore", "**/a/**/a/**/a/**/c\n**/a/**/b/**/c/\n")
    ctx = make_ctx(ws)
    deep = "/".join(["a"] * 2047)
    for tool in ("read_file", "list_files", "search"):
        args = {"path": deep, **({"pattern": "x"} if tool == "search" else {})}
        result = await asyncio.wait_for(call(ctx, tool, **args), HANG_GUARD_S)
        assert result.code == "not_found", result.content


async def test_thousands_of_double_star_rules_and_a_deep_path_return(ws: Path) -> None:
    rules = [f"**/a/**/b{i}/**/c" for i in range(3000)]
    write(ws, ".gitignore", "\n".join(rules) + "\n")
    write(ws, "a/x/b17/y/c", f"{CANARY}\n")
    ctx = make_ctx(ws)
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
    ctx = make_ctx(ws)
    for path in ("x/a/y/b/z/c", "a/b/c", "src/p/gen/q/r.tmp"):
        assert (await call(ctx, "read_file", path=path)).code == "ignored_path"
    found = await call(ctx, "search", pattern=CANARY)
    assert [line.split(":")[0] for line in found.content.splitlines()[1:]] == ["a/c/b"]


def _split(regex: str) -> tuple[str, str] | None:
    if regex.endswith(_ANY_END):
        return regex[: -len(_ANY_END)], "/?\\Z"
    if regex.endswith(_DIR_END):
        return regex[: -len(_DIR_END)], "/\\Z"
    if regex.endswith("/") and regex.startswith("^"):
        return regex, ".+\\Z"
    return None


def test_component_matcher_answers_like_the_regex() -> None:
    """Random patterns of several `**` and random paths: the same verdict as pathspec's
    regex (which is right, only slow)."""
    rng = random.Random(20261130)
    pieces = ["**", "**", "a", "b", "c", "*", "x*", "?b", "[ab]", "a.b", "*.b"]
    names = ["a", "b", "c", "ab", "x1", "a.b"]
    built = 0
    for _ in range(3000):
        line = "/".join(rng.choice(pieces) for _ in range(rng.randint(2, 7)))
        line = ("/" if rng.random() < 0.3 else "") + line + ("/" if rng.random() < 0.3 else "")
        regex, _ = GitIgnoreSpecPattern.pattern_to_regex(line)
        shape = _split(str(regex)) if regex else None
        matcher = ComponentGlob.build(*shape) if shape else None
        if shape is None or matcher is None:
            continue
        built += 1
        compiled = re.compile(shape[0] + shape[1])
        for _ in range(40):
            text = "/".join(rng.choice(names) for _ in range(rng.randint(1, 8)))
            text += "/" if rng.random() < 0.5 else ""
            assert matcher.match(text) == bool(compiled.match(text)), (line, text)
    assert built > 100


@pytest.mark.parametrize(
    ("line", "verdict"),
    [("**/a/**/b/**/c", True), ("a/**/b/**/c/", None), ("**/x*/**/y/**", True)],
)
def test_compiled_rules_answer_for_a_very_deep_path(line: str, verdict: bool | None) -> None:
    rules = CompiledRules.parse(line + "\n")
    deep = ("a",) * 3000 + ("x1", "b", "y", "c")
    assert rules.verdict(deep, is_dir=False) is verdict
