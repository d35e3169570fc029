"""The ignore rules narrowed to one folder give exactly the per-pattern answers.

A listing checks each folder once (`CompiledRules.files_in`) and then each file by its
name alone; the answer must be the one the patterns give one by one, in order (the last
pattern that matches decides, `!` re-includes), for every name in every folder:
negations, anchored paths, `**`, `dir/**`, character classes, `dir/`-only patterns, and
roots that fold case. Rule sets and names are generated from a fixed seed.
"""

from __future__ import annotations

import random

import pytest
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.ignore.patterns import PathGlob, parse_line
from lantern.workspace.names import Names

NAMES = [
    "a", "b", "x.log", "keep.log", "A.LOG", "Makefile", "src", "sub", "gen", "1", "a1",
    "b2.c", "main.o", "main.O", "x.tmp.txt", "cache", "cache1", "#x#", ".hidden", "é.txt",
    "data.json", "q?", "br[a]", "tab.c", "tab.h", "foo.mod.c", "z",
]  # fmt: skip
PIECES = [
    "a", "b", "*.log", "keep.log", "*.o", "*.O", "Makefile", "src", "sub", "gen", "cache*",
    "*", "?", "a?", "[ab]*", "[!a]*", "[[:digit:]]", "*.[ch]", "x.*.txt", "\\#*#", ".*",
    "*.mod.c", "q\\?", "br\\[a]", "[z-a]", "é*", "**", "data.json", "*a*b*",
]  # fmt: skip


def _line(rng: random.Random) -> str:
    """One ignore line: a path of 1-3 pieces, maybe `**` between or around them, maybe
    anchored, negated, for folders only or for what is inside a folder."""
    parts = [rng.choice(PIECES) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    if rng.random() < 0.2:
        parts.insert(rng.randrange(len(parts) + 1), "**")
    text = "/".join(parts)
    if rng.random() < 0.25:
        text = "/" + text
    if rng.random() < 0.15:
        text += "/**"
    elif rng.random() < 0.2:
        text += "/"
    if rng.random() < 0.3:
        text = "!" + text
    return text


def _one_by_one(lines: list[str], names: Names) -> list[tuple[bool, PathGlob]]:
    parsed = [parse_line(names.pattern(line)) for line in lines]
    return [(pattern.ignores, PathGlob(pattern)) for pattern in parsed if pattern is not None]


def _exact(
    patterns: list[tuple[bool, PathGlob]], names: Names, path: tuple[str, ...], is_dir: bool
) -> bool | None:
    """The verdict of the patterns one by one: the last that matches decides."""
    text = "/".join(names.exact(part) for part in path) + ("/" if is_dir else "")
    verdict = None
    for ignores, glob in patterns:
        if glob.match(text):
            verdict = ignores
    return verdict


@pytest.mark.parametrize("folds", [False, True])
def test_a_folder_narrowed_check_agrees_with_each_pattern(folds: bool) -> None:
    rng = random.Random(28 + folds)
    names = Names(folds=folds, nfc=folds)
    checked = matched = 0
    for _ in range(150):
        lines = [_line(rng) for _ in range(rng.randint(1, 8))]
        rules = CompiledRules.parse("\n".join(lines), names)
        patterns = _one_by_one(lines, names)
        folders = [()] + [
            tuple(rng.choice(NAMES) for _ in range(rng.randint(1, 4))) for _ in range(12)
        ]
        for folder in folders + folders:  # the second time from what was remembered
            files = rules.files_in(folder)
            for name in NAMES:
                want = _exact(patterns, names, (*folder, name), False)
                assert files.verdict(name) == want, (lines, folder, name)
                assert rules.verdict_in(folder, name, False) == want, (lines, folder, name)
                assert rules.verdict((*folder, name), True) == _exact(
                    patterns, names, (*folder, name), True
                ), (lines, folder, name)
                checked += 1
                matched += want is not None
    assert matched > checked // 10  # the rules do match a good share of the names


def test_a_pattern_narrowed_to_a_folder_answers_as_it_matches() -> None:
    """`PathGlob.in_folder`: True (every file there), False (none), or the glob a file's
    name must match, and never another answer than `match` of the whole path."""
    rng = random.Random(7)
    kinds = set()
    for _ in range(600):
        pattern = parse_line(_line(rng).removeprefix("!"))
        if pattern is None:
            continue
        glob = PathGlob(pattern)
        for _ in range(6):
            folder = [rng.choice(NAMES) for _ in range(rng.randint(0, 4))]
            found = glob.in_folder(folder)
            kinds.add(found if isinstance(found, bool) else "name")
            for name in NAMES:
                want = glob.match("/".join([*folder, name]))
                got = found if isinstance(found, bool) else found.match(name)
                assert got == want, (pattern, folder, name)
    assert kinds == {True, False, "name"}


def test_a_case_folding_root_narrows_in_its_own_form() -> None:
    names = Names(folds=True, nfc=True)
    rules = CompiledRules.parse("/Build/*.O\n!/build/KEEP.o\nSRC/**\n", names)
    assert rules.files_in(("BUILD",)).verdict("x.o") is True
    assert rules.files_in(("build",)).verdict("keep.O") is False
    assert rules.files_in(("Src", "deep")).verdict("any") is True
    assert rules.files_in(("other",)).verdict("x.o") is None
