#!/usr/bin/env python3
"""Where the time goes: a short summary of a py-spy profile.

    py-spy record -r 100 -f raw -o prof.txt -- \\
        .venv/bin/python benchmarks/scale_bench.py --kernel --only list --rounds 1
    python benchmarks/profile_summary.py prof.txt [--top N] [--match TEXT]

py-spy's `raw` output is one line per distinct stack (`frame;frame;… COUNT`, the root
first), sampled from every thread (worker threads included, idle ones left out). Printed:
the functions most often on the stack (inclusive share of the samples, each counted once
per sample; Lantern's own functions only) and those most often running themselves (self
share, the last frame: a call into C, such as tree-sitter's parse, counts for the Python
function that made it), each as `function (file)` with the path cut to what follows
`site-packages/` or the repository's `server/`. `--match` keeps only the samples with a
frame containing TEXT (e.g. `find_symbol`), so that a benchmark's set-up is left out.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")


def short(frame: str) -> str:
    """`func (path:line)` with the path cut to its package, the line number dropped (the
    same function at several lines is one entry)."""
    found = _FRAME.match(frame.strip())
    if not found:
        return frame.strip()
    path = found["file"]
    for marker in ("site-packages/", "server/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{found['func']} ({path})"


def read(path: Path, match: str | None) -> tuple[Counter[str], Counter[str], int]:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        if match is not None and match not in stack:
            continue
        frames = [short(f) for f in stack.split(";") if f.strip()]
        if not frames:
            continue
        n = int(count)
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    return inclusive, own, total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("profile", type=Path, help="py-spy record -f raw output")
    parser.add_argument("--top", type=int, default=12, help="entries per list")
    parser.add_argument("--match", help="only samples with a frame containing this text")
    args = parser.parse_args(argv)
    inclusive, own, total = read(args.profile, args.match)
    if not total:
        print("no samples" + (f" with {args.match!r}" if args.match else ""))
        return 0
    print(f"{total:,} samples" + (f" with a frame containing {args.match!r}" if args.match else ""))
    mine = Counter({name: n for name, n in inclusive.items() if "(lantern/" in name})
    for title, counts in (("Lantern's, on the stack (inclusive)", mine), ("running (self)", own)):
        print(f"\n{title}")
        for name, n in counts.most_common(args.top):
            print(f"  {100 * n / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
