#!/usr/bin/env python3
"""Benchmark lantern.code, the engine under outline / find_symbol / find_references.

    python benchmarks/code_bench.py [--lines N] [--repeat R]

Generates a realistic N-line Python file and an N-line TypeScript file (deterministic,
seeded) in a temporary folder and times, against a plain read of the same file:
parsing, `definitions` (what `outline` needs), `uses` of one name (what
`find_references` needs per file), and a `ParseCache` hit. Each figure is the median of
--repeat runs after one warm-up; the calls take turns so drift on a busy machine hits
them alike. The issue's goal for `outline` of a 10,000-line file is "read + 50 ms"; the
engine's share of it is the `definitions` row's "over read". Exits 0; a "MISS" row is
the thing to look at.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lantern.code.cache import ParseCache
from lantern.code.definitions import definitions
from lantern.code.languages import parse
from lantern.code.references import uses

SEED = 20261202
_WORD_TEXT = (
    "account agent alias apply archive batch bind buffer cache channel check client config "
    "context cursor decode delta device digest encode engine entry event fetch field filter "
    "format frame graph group header index input item job key label layer ledger limit loader "
    "lookup message metric module monitor node notify offset option order output packet page "
    "parse payload peer pipeline plugin policy pool prefix probe process profile queue range "
    "reader record region registry render report result route runner sample schema scope "
    "session shard signal snapshot source span stage state status stream summary symbol table "
    "target task thread timer token trace tree update user value vector version view worker"
)
WORDS = tuple(_WORD_TEXT.split())
NAME = "handle_request"  # the name `uses` looks for: defined once, called now and then


def _python(rng: random.Random, lines: int) -> str:
    def w(n: int = 2) -> str:
        return "_".join(rng.sample(WORDS, n))

    out = ['"""A generated module."""', "", "import os", "", f"MAX_{w(1).upper()} = 10", ""]
    out += [f"def {NAME}(request, context):", "    return request", ""]
    while len(out) < lines:
        cls = "".join(p.title() for p in rng.sample(WORDS, 2))
        out += ["", "", f"class {cls}(Base):", f'    """The {w(1)} of a {w(1)}."""', ""]
        out += [f"    LIMIT = {rng.randint(1, 99)}", ""]
        for _ in range(rng.randint(3, 8)):
            out += ["    @property" if rng.random() < 0.2 else ""]
            out += [f"    def {w()}(self, {w(1)}: int, {w(1)}: str = 'x') -> dict[str, int]:"]
            out += [f"        # {' '.join(rng.sample(WORDS, 6))}"]
            for _ in range(rng.randint(2, 9)):
                roll = rng.random()
                if roll < 0.3:
                    out.append(f"        {w()} = self.{w()}({w(1)}, key={rng.randint(0, 9)})")
                elif roll < 0.5:
                    out.append(f"        if {w(1)} is not None and {w(1)} > {rng.randint(1, 64)}:")
                    out.append(f'            raise ValueError("{w(1)} {w(1)}")')
                elif roll < 0.6:
                    out.append(f"        {w(1)} = {NAME}({w(1)}, self)")
                else:
                    out.append(f'        log.info("{w(1)}: %s", {w(1)})')
            out.append(f"        return {{{w(1)!r}: {rng.randint(0, 9)}}}")
            out.append("")
    return "\n".join(out[:lines]) + "\n"


def _typescript(rng: random.Random, lines: int) -> str:
    def w(n: int = 2) -> str:
        parts = rng.sample(WORDS, n)
        return parts[0] + "".join(p.title() for p in parts[1:])

    out = [f"export function {NAME}(request: Request): Response {{", "  return request;", "}"]
    while len(out) < lines:
        out += ["", f"export interface {w().title()} {{ {w(1)}: string; {w(1)}: number; }}"]
        out += [f"export class {w().title()} extends Base {{"]
        for _ in range(rng.randint(3, 8)):
            out.append(f"  {w()}({w(1)}: number, {w(1)}: string): void {{")
            for _ in range(rng.randint(2, 8)):
                roll = rng.random()
                if roll < 0.4:
                    out.append(f"    const {w()} = this.{w()}({w(1)}, `{w(1)} ${{{w(1)}}}`);")
                elif roll < 0.5:
                    out.append(f"    {NAME}({w(1)});")
                else:
                    out.append(f"    // {' '.join(rng.sample(WORDS, 5))}")
            out += ["  }"]
        out += ["}", f"export const {w()} = ({w(1)}: number) => {w(1)} * 2;"]
    return "\n".join(out[:lines]) + "\n"


@dataclass(frozen=True)
class Row:
    name: str
    seconds: float
    read_seconds: float
    goal_ms_over_read: float | None = None

    def verdict(self) -> str:
        if self.goal_ms_over_read is None:
            return "info"
        over = (self.seconds - self.read_seconds) * 1000
        return "PASS" if over <= self.goal_ms_over_read else "MISS"


def interleaved(calls: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """The median seconds of each call, after one warm-up each, the calls taking turns."""
    for call in calls:
        call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, spent in zip(calls, times, strict=True):
            started = time.perf_counter()
            call()
            spent.append(time.perf_counter() - started)
    return [statistics.median(t) for t in times]


def measure(path: Path, language: str, repeat: int) -> list[Row]:
    source = path.read_bytes()
    cache = ParseCache()
    key = ("bench", path.name)
    cache.definitions(key, source, language)
    cache.uses(key, source, language, NAME)
    found = len(definitions(source, language))
    hits = len(uses(source, language, NAME))
    if not found or not hits:
        raise RuntimeError(f"{path.name}: {found} definitions, {hits} uses of {NAME}")

    read, parsed, defined, used, hit_defs, hit_uses = interleaved(
        [
            path.read_bytes,
            lambda: parse(source, language),
            lambda: definitions(source, language),
            lambda: uses(source, language, NAME),
            lambda: cache.definitions(key, source, language),
            lambda: cache.uses(key, source, language, NAME),
        ],
        repeat,
    )
    count = source.count(b"\n")
    label = f"{language} {count:,} lines"
    print(f"{label}: {len(source):,} bytes, {found:,} definitions, {hits} uses of {NAME}")
    return [
        Row("parse", parsed, read),
        Row("parse + definitions", defined, read, 50.0),
        Row(f"parse + uses({NAME})", used, read),
        Row("cache hit: definitions", hit_defs, read),
        Row("cache hit: uses", hit_uses, read),
    ]


def print_table(rows: list[Row]) -> None:
    head = f"{'figure':<32} {'ms':>8} {'read ms':>8} {'ratio':>9} {'over read':>10}  goal"
    print(head)
    print("-" * (len(head) + 20))
    for row in rows:
        over = (row.seconds - row.read_seconds) * 1000
        goal = "" if row.goal_ms_over_read is None else f"<= read + {row.goal_ms_over_read:g} ms"
        print(
            f"{row.name:<32} {row.seconds * 1000:>8.2f} {row.read_seconds * 1000:>8.3f} "
            f"{row.seconds / row.read_seconds:>8.1f}x {over:>8.2f}ms  {goal:<18} {row.verdict()}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="lantern-code-bench-") as tmp:
        files = {
            "python": Path(tmp, "module.py"),
            "typescript": Path(tmp, "module.ts"),
        }
        files["python"].write_text(_python(rng, args.lines), "utf-8")
        files["typescript"].write_text(_typescript(rng, args.lines), "utf-8")
        for language, path in files.items():
            rows = measure(path, language, args.repeat)
            print_table(rows)
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
