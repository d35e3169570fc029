#!/usr/bin/env python3
"""Time and memory of the code engine on files made to hurt it, each in a fresh process.

    python benchmarks/hostile_code_bench.py [--timeout S] [FAMILY ...]

One row per input of tests/hostile_code.py, at the sizes issue 27 reported: what
`outline` asks of the engine (`scan`) for 20,000 nested JavaScript functions and 30,000
nested Rust modules, and what `find_references` asks (`find_uses`, stopping one line past
the MAX_USES lines shown) for a file of 3.9 million uses, for a 2 MB file of a million
identifiers with one use of the name, and for a 100,000-deep generic type. Each runs in
its own interpreter, killed after --timeout seconds; printed: its CPU seconds, of which
parsing alone (tree-sitter, timed first in the same process), its peak resident memory,
and what it found. Always exits 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from tests import hostile_code as hostile  # noqa: E402

# name: (language, how to make the source, the name a find_references looks up or None)
FAMILIES: dict[str, tuple[str, Callable[[], bytes], str | None]] = {
    "outline: 20,000 nested JS functions": (
        "javascript",
        lambda: hostile.nested_functions(20_000),
        None,
    ),
    "outline: 30,000 nested Rust mods": ("rust", lambda: hostile.nested_modules(30_000), None),
    "references: 3.9 M uses": ("python", lambda: hostile.uses_only(3_900_000), "x"),
    "references: 1 M ids, one use": (
        "python",
        lambda: hostile.one_use_among(1_000_000),
        "target",
    ),
    "references: 100,000-deep type": (
        "typescript",
        lambda: hostile.deep_generic(100_000),
        "Leaf",
    ),
}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def run_one(family: str) -> dict[str, object]:
    """In the child: make the input, parse it once alone, then run the engine on it."""
    from lantern.code.definitions import scan
    from lantern.code.languages import parse
    from lantern.code.references import find_uses
    from lantern.tools.find_references import MAX_USES

    language, make, name = FAMILIES[family]
    source = make()
    started = _cpu()
    parse(source, language)
    parsed = _cpu() - started
    started = _cpu()
    if name is None:
        found = scan(source, language)
        what = f"{len(found.definitions):,} listed; {found.unlisted.words() or 'nothing left out'}"
    else:
        uses = find_uses(source, language, name, MAX_USES + 1)
        lines = len({use.line for use in uses.uses})
        what = f"{len(uses.uses):,} uses on {lines:,} lines; unsearched from line {uses.unsearched}"
    unit = 1 if sys.platform == "darwin" else 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
    return {
        "bytes": len(source),
        "parse_s": parsed,
        "cpu_s": _cpu() - started,
        "peak_mb": peak / 2**20,
        "found": what,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("families", nargs="*", help="substrings of the row names")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child)))
        return 0
    chosen = [f for f in FAMILIES if not args.families or any(s in f for s in args.families)]
    print(f"{'input':<38} {'size':>8} {'parse s':>8} {'engine s':>9} {'peak MB':>8}  found")
    for family in chosen:
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--child", family],
                capture_output=True,
                text=True,
                timeout=args.timeout,
                check=True,
            )
        except subprocess.TimeoutExpired:
            print(f"{family:<38} killed after {time.monotonic() - started:.0f} s")
            continue
        except subprocess.CalledProcessError as failed:
            print(f"{family:<38} failed: {failed.stderr.strip().splitlines()[-1:]}")
            continue
        row = json.loads(done.stdout)
        print(
            f"{family:<38} {row['bytes'] / 1e6:>6.2f}MB {row['parse_s']:>8.2f} "
            f"{row['cpu_s']:>9.2f} {row['peak_mb']:>8.0f}  {row['found']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
