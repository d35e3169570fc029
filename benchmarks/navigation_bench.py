#!/usr/bin/env python3
"""Benchmark the code tools against their baselines, in the same run.

    python benchmarks/navigation_bench.py [--files N] [--repeat R] [--cap-mb C] [--data DIR]

- `find_symbol` over a generated tree of N source files (default 100,000) against
  `rg -w NAME` over the same tree (goal: ≤ 2×), with a fresh parse cache per call (cold)
  and with the conversation's cache (warm).
- `outline` of a 10,000-line file against `read_file` of it (goal: ≤ read + 50 ms), cold
  and warm, with a plain `open().read()` for scale.
- Memory: a folder `outline` and `find_references` of a common name over the whole tree
  through one cache capped at C MiB (default 2): what the cache holds never passes the cap,
  and the process's peak RSS is printed.

The tree is generated once per parameter set under --data (default: a temporary folder,
removed afterwards) and is deterministic (one seeded `random.Random`). Lantern's tools run
through `run_tool` with a `Fixed(ALLOW_ONCE)` gate in one event loop, as the server runs
them; calls and baselines take turns (A B A B …) and medians are printed. Ratios are
never asserted; the script always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from lantern.approvals.approver import Decision, Fixed
from lantern.code.cache import ParseCache
from lantern.code.definitions import definitions
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.registry import run_tool
from lantern.tools.ripgrep import process as ripgrep
from lantern.workspace.roots import Workspace

SEED = 20261202
VERSION = 1  # bump when the tree's shape changes
NEEDLE = "NeedleWidgetFactory"
NEEDLE_PLANTS = 5  # files that define it (one as a method, four as classes)
COMMON = "handle"  # a name in many files: the memory figure's find_references
BIG_LINES = 10_000
_VOCABULARY = (
    "account action adapter agent alert batch buffer cache channel client config context "
    "cursor event filter handler index job key layer loader manager message model node "
    "packet parser pipeline plugin policy pool queue record registry request resolver "
    "response router schema session signal socket source stream task token tracker "
    "update user value vector view worker"
)
WORDS = tuple(_VOCABULARY.split())


def _name(rng: random.Random, parts: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(parts))


def _pascal(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS).title() for _ in range(2))


def _python(rng: random.Random, extra: str = "") -> str:
    lines = [f"import {rng.choice(WORDS)}", ""]
    for _ in range(rng.randint(1, 3)):
        lines += [f"class {_pascal(rng)}:", f'    """The {rng.choice(WORDS)}."""', ""]
        for _ in range(rng.randint(1, 4)):
            lines += [
                f"    def {_name(rng)}(self, {rng.choice(WORDS)}):",
                f"        return self.{COMMON}({rng.choice(WORDS)})",
                "",
            ]
    lines += [f"def {_name(rng)}(value=None):", f"    return {rng.choice(WORDS)}(value)", ""]
    return "\n".join(lines) + extra


def _script(rng: random.Random, extra: str = "") -> str:
    lines = [f"import {{ {rng.choice(WORDS)} }} from './{rng.choice(WORDS)}';", ""]
    lines += [f"export class {_pascal(rng)} {{"]
    for _ in range(rng.randint(1, 4)):
        lines += [f"  {_name(rng)}(x) {{", f"    return this.{COMMON}(x);", "  }"]
    lines += ["}", "", f"export function {_name(rng)}(value) {{", "  return value;", "}", ""]
    return "\n".join(lines) + extra


def _big_file(rng: random.Random) -> str:
    """A 10,000-line module shaped like real code: classes of methods of ten-odd lines."""
    lines: list[str] = ['"""A large module."""', ""]
    while len(lines) < BIG_LINES:
        lines += [f"class {_pascal(rng)}{len(lines)}:", f'    """The {rng.choice(WORDS)}."""', ""]
        for _ in range(rng.randint(3, 8)):
            lines.append(f"    def {_name(rng)}(self, {rng.choice(WORDS)}, limit=10):")
            for _ in range(rng.randint(4, 14)):
                lines.append(f"        total = self.{COMMON}({rng.choice(WORDS)}, limit)")
            lines += ["        return total", ""]
    return "\n".join(lines[:BIG_LINES]) + "\n"


def generate(root: Path, files: int) -> None:
    rng = random.Random(SEED)
    folders = [
        "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        for _ in range(files // 40 + 1)
    ]
    plants = sorted(rng.sample(range(files), NEEDLE_PLANTS))
    for i in range(files):
        folder = root / ("src" if i % 3 else "lib") / rng.choice(folders)
        folder.mkdir(parents=True, exist_ok=True)
        script = i % 4 == 3
        extra = ""
        if i == plants[0]:  # one as a method
            extra = (
                f"\nexport class Holder {{\n  {NEEDLE}() {{}}\n}}\n"
                if script
                else f"\n\nclass Holder:\n    def {NEEDLE}(self):\n        pass\n"
            )
        elif i in plants:
            extra = (
                f"\nexport class {NEEDLE} {{}}\n" if script else f"\n\nclass {NEEDLE}:\n    pass\n"
            )
        if script:
            (folder / f"m{i}.ts" if i % 8 == 3 else folder / f"m{i}.js").write_text(
                _script(rng, extra), "utf-8"
            )
        else:
            (folder / f"m{i}.py").write_text(_python(rng, extra), "utf-8")
        if i % 50 == 0:  # a mention in prose and in a comment: rg finds them, no definition
            (folder / f"n{i}.md").write_text(f"See {NEEDLE} and {COMMON}.\n", "utf-8")
    (root / "big").mkdir(exist_ok=True)
    (root / "big" / "large_module.py").write_text(_big_file(rng), "utf-8")
    (root / "manifest.json").write_text(json.dumps({"files": files, "version": VERSION}))


def ensure_tree(data: Path, files: int) -> Path:
    root = data / f"nav-f{files}-s{SEED}-v{VERSION}"
    if not (root / "manifest.json").is_file():
        shutil.rmtree(root, ignore_errors=True)
        started = time.perf_counter()
        generate(root, files)
        print(f"generated {files:,} files in {time.perf_counter() - started:.1f} s")
    return root


async def interleaved(calls: Sequence[Callable[[], Awaitable[object]]], repeat: int) -> list[float]:
    """Median seconds of each call, the calls taking turns, after one warm-up round."""
    times: list[list[float]] = [[] for _ in calls]
    for round_ in range(repeat + 1):
        for i, call in enumerate(calls):
            started = time.perf_counter()
            await call()
            if round_:
                times[i].append(time.perf_counter() - started)
    return [statistics.median(t) for t in times]


def _rg(args: list[str]) -> Callable[[], Awaitable[object]]:
    async def call() -> object:
        done = await asyncio.to_thread(
            subprocess.run, [ripgrep.rg_binary(), *args], capture_output=True, check=False
        )
        return done.stdout

    return call


def _tool(
    name: str, args: dict[str, object], ws: Workspace, cache: Callable[[], ParseCache]
) -> Callable[[], Awaitable[ToolResult]]:
    async def call() -> ToolResult:
        ctx = ToolContext(ws, Fixed(Decision.ALLOW_ONCE), code_cache=cache())
        result = await run_tool(name, args, ctx)
        assert not result.is_error, result.content
        return result

    return call


def _rows(result: ToolResult) -> int:
    return sum(1 for line in result.content.splitlines() if not line.startswith("["))


async def run(root: Path, repeat: int, cap_mb: int) -> None:
    ws = Workspace([root])
    warm = ParseCache()
    big = "big/large_module.py"

    find_cold = _tool("find_symbol", {"name": NEEDLE}, ws, ParseCache)
    find_warm = _tool("find_symbol", {"name": NEEDLE}, ws, lambda: warm)
    found = await find_cold()
    rg_w = _rg(["-w", NEEDLE, str(root)])
    t_cold, t_warm, t_rg = await interleaved([find_cold, find_warm, rg_w], repeat)
    print(f"find_symbol {NEEDLE!r}: {_rows(found)} definition(s) (planted {NEEDLE_PLANTS})")
    print(f"  rg -w {NEEDLE} ROOT        {t_rg * 1000:9.1f} ms")
    cold = f"{t_cold * 1000:9.1f} ms   {t_cold / t_rg:5.2f}× rg"
    print(f"  find_symbol (cold cache)   {cold}  (goal ≤ 2×)")
    print(f"  find_symbol (warm cache)   {t_warm * 1000:9.1f} ms   {t_warm / t_rg:5.2f}× rg")

    outline_cold = _tool("outline", {"path": big}, ws, ParseCache)
    outline_warm = _tool("outline", {"path": big}, ws, lambda: warm)
    read = _tool("read_file", {"path": big}, ws, ParseCache)

    async def plain() -> object:
        return (root / big).read_text("utf-8")

    source = (root / big).read_bytes()

    async def parse() -> object:  # the engine alone: what a cold outline cannot avoid
        return definitions(source, "python")

    shown = await outline_cold()
    o_cold, o_warm, t_read, t_plain, t_parse = await interleaved(
        [outline_cold, outline_warm, read, plain, parse], repeat
    )
    print(f"\noutline of a {BIG_LINES:,}-line file: {_rows(shown)} definition line(s) shown")
    print(f"  open().read()              {t_plain * 1000:9.1f} ms")
    print(f"  read_file                  {t_read * 1000:9.1f} ms")
    print(f"  info: engine parse alone   {t_parse * 1000:9.1f} ms")
    for label, took in (("cold", o_cold), ("warm", o_warm)):
        extra = (took - t_read) * 1000
        goal = " (goal ≤ +50 ms)" if label == "cold" else ""
        print(
            f"  outline ({label} cache)       {took * 1000:9.1f} ms   read + {extra:.1f} ms{goal}"
        )

    cap = cap_mb << 20
    capped = ParseCache(cap)
    started = time.perf_counter()
    await _tool("outline", {"path": "."}, ws, lambda: capped)()
    refs = await _tool("find_references", {"name": COMMON}, ws, lambda: capped)()
    took = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    what = f"folder outline + find_references {COMMON!r} ({_rows(refs)} lines)"
    print(f"\nmemory: {what} in {took:.1f} s")
    print(
        f"  cache cap {cap_mb} MiB: holds {len(capped):,} file(s), "
        f"{capped.charged_bytes / (1 << 20):.1f} MiB charged "
        f"({'within' if capped.charged_bytes <= cap else 'OVER'} the cap); "
        f"{capped.misses:,} parse(s)"
    )
    print(f"  process peak RSS {peak:.0f} MiB")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000, help="source files in the tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure")
    parser.add_argument("--cap-mb", type=int, default=2, help="the memory figure's cache cap")
    parser.add_argument("--data", type=Path, help="keep the generated tree here")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    temp = None if args.data else tempfile.mkdtemp(prefix="lantern-nav-")
    try:
        root = ensure_tree(args.data or Path(temp or "."), args.files)
        asyncio.run(run(root, args.repeat, args.cap_mb))
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
