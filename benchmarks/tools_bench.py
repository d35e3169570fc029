#!/usr/bin/env python3
"""Benchmark Lantern's read-path tools against raw ripgrep and a plain Python read.

    python benchmarks/tools_bench.py [--files N] [--mb M] [--repeat R] [--data DIR]

The first run generates a synthetic source tree (deterministic, seeded) and caches
it under benchmarks/.data/ (git-ignored), keyed by its parameters; later runs reuse
it. Each figure is the median of --repeat runs after one warm-up run. The Lantern
tools run through `run_tool` inside one asyncio event loop, the way the server
runs them; the baselines are raw `rg` subprocesses and a plain `open().read()`.

Rows marked "info" are not goals: they run ripgrep with the exact flags Lantern
passes it, which separates ripgrep's own work from Lantern's Python overhead.
The script always exits 0; "MISS" rows are the thing to look at.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lantern.approvals.approver import Decision, Fixed
from lantern.tools import search
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.registry import run_tool
from lantern.tools.ripgrep import process as ripgrep
from lantern.tools.ripgrep.result_filter import ResultFilter
from lantern.tools.search import SearchArgs
from lantern.workspace.roots import Target, Workspace

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # the repository root, for the tests' tree helpers
    sys.path.insert(0, str(HERE.parent))

from tests.deep_tree import make_deep  # noqa: E402

SEED = 20240611
GENERATOR_VERSION = 5  # bump when the tree's shape changes, so old caches are not reused

LITERAL = "needle_retry_budget"
REGEX = r"def handle_\w+_request"
LITERAL_PLANTS = 6  # files outside build/ that hold the literal (one more is in build/)
REGEX_PLANTS = 12
READ_FILE = "src/core/engine/large_module.py"
READ_LINES = 20_000
READ_LINE_BYTES = 50  # 20,000 lines x 50 bytes = 1,000,000 bytes
READ_OFFSET = 10_000
READ_LIMIT = 400
BUILD_FILES = 250
LARGE_CAP = 3 << 20  # the largest generated file (search skips files over 8 MiB)


# --- the synthetic tree ------------------------------------------------------------------

# "key" and "token" are here so that, as in real code, some lines go through the
# secret-redaction checks that read_file and search run on what they show.
_WORD_TEXT = (
    "account address agent alias allocate apply archive array asset attach audit backend "
    "balance batch bind block bucket buffer builder bundle cache callback cancel capture "
    "channel check chunk client clock close cluster codec collect column commit compile "
    "config connect context counter cursor daemon decode default delta deploy detect device "
    "digest dispatch document domain draft driver emit encode engine entry event export "
    "extract factory feature fetch field filter flush format frame gateway graph group guard "
    "header health hook index inline input insert invoice issue item job journal kernel key label "
    "layer layout ledger limit listener loader local lookup manifest mapper marker matrix "
    "merge message metric module monitor mount native node notify object offset option order "
    "output packet page parse partition patch payload peer pipeline plugin policy pool port "
    "prefix probe process profile project prompt proxy query queue quota range reader record "
    "reducer region registry release render replica report resolve resource result route "
    "runner sample scalar schema scope segment select sender session shard signal snapshot "
    "socket source span stage state status storage stream subject summary switch symbol sync "
    "table target task tenant thread timer token topic trace tracker transform tree trigger tuple "
    "update upload user validate value vector version view visit volume watch widget window "
    "worker writer"
)
WORDS = tuple(_WORD_TEXT.split())
TYPES = ("str", "int", "bool", "float", "bytes", "list[str]", "dict[str, int]", "None")
TS_TYPES = ("string", "number", "boolean", "void", "string[]", "Record<string, number>")


def _camel(words: Sequence[str]) -> str:
    return words[0] + "".join(w.title() for w in words[1:])


def _pascal(words: Sequence[str]) -> str:
    return "".join(w.title() for w in words)


@dataclass(frozen=True)
class Pool:
    lines: list[str]
    mean: float  # bytes per line, line end included


def _line_pools(rng: random.Random, size: int) -> dict[str, Pool]:
    """Code-like lines per language; files are sampled from these pools."""

    def w(n: int = 1) -> list[str]:
        return rng.sample(WORDS, n)

    def snake(n: int = 2) -> str:
        return "_".join(w(n))

    py: list[Callable[[], str]] = [
        lambda: f"def {snake()}({snake(1)}: {rng.choice(TYPES)}) -> {rng.choice(TYPES)}:",
        lambda: (
            f"    {snake()} = {snake(1)}.{snake()}({snake(1)}, {snake(1)}={rng.randint(0, 999)})"
        ),
        lambda: f"        return {snake(1)}.{snake(1)}",
        lambda: f"    if {snake()} is not None and {snake(1)} > {rng.randint(1, 64)}:",
        lambda: f"class {_pascal(w(2))}({_pascal(w(1))}):",
        lambda: f"from {snake(1)}.{snake(1)} import {_pascal(w(2))}, {snake()}",
        lambda: f"    # {' '.join(w(rng.randint(3, 9)))}",
        lambda: f'        raise {_pascal(w(1))}Error("{" ".join(w(4))}")',
        lambda: f"    for {snake(1)} in self.{snake()}:",
        lambda: "",
    ]
    ts: list[Callable[[], str]] = [
        lambda: (
            f"export function {_camel(w(2))}({_camel(w(1))}: {rng.choice(TS_TYPES)}): "
            f"{rng.choice(TS_TYPES)} {{"
        ),
        lambda: f"  const {_camel(w(2))} = {_camel(w(1))}.{_camel(w(2))}({_camel(w(1))});",
        lambda: f"  if ({_camel(w(1))}.{_camel(w(1))} === {rng.randint(0, 99)}) {{",
        lambda: f"import {{ {_pascal(w(2))} }} from './{'/'.join(w(2))}';",
        lambda: f"    return {_camel(w(2))}?.{_camel(w(1))} ?? null;",
        lambda: f"  // {' '.join(w(rng.randint(3, 9)))}",
        lambda: f"export interface {_pascal(w(2))} {{ {_camel(w(1))}: {rng.choice(TS_TYPES)}; }}",
        lambda: "}",
        lambda: "",
    ]
    md: list[Callable[[], str]] = [
        lambda: " ".join(w(rng.randint(6, 16))).capitalize() + ".",
        lambda: f"## {' '.join(w(3)).title()}",
        lambda: f"- `{snake()}`: {' '.join(w(rng.randint(4, 10)))}",
        lambda: "",
    ]
    data: list[Callable[[], str]] = [
        lambda: f'  "{_camel(w(2))}": {rng.randint(0, 100_000)},',
        lambda: f'  "{_camel(w(1))}": "{"-".join(w(2))}",',
        lambda: f"{snake(1)}:",
        lambda: f"  {snake(1)}: {rng.choice(['true', 'false', str(rng.randint(0, 512))])}",
    ]
    pools: dict[str, Pool] = {}
    for kind, templates in {"py": py, "ts": ts, "md": md, "data": data}.items():
        lines = [rng.choice(templates)() for _ in range(size)]
        pools[kind] = Pool(lines, sum(len(line) + 1 for line in lines) / size)
    return pools


KINDS = {  # extension -> (line pool, weight)
    ".py": ("py", 40),
    ".ts": ("ts", 25),
    ".tsx": ("ts", 8),
    ".md": ("md", 12),
    ".json": ("data", 8),
    ".yaml": ("data", 4),
    ".txt": ("md", 3),
}


def _text(rng: random.Random, pool: Pool, size: int) -> str:
    """About `size` bytes of lines sampled from `pool`."""
    return "\n".join(rng.choices(pool.lines, k=max(1, round(size / pool.mean)))) + "\n"


def _sizes(rng: random.Random, count: int, total: int) -> list[int]:
    """A realistic mix: many small files, some medium ones, a few large ones."""
    sizes: list[int] = []
    large: list[int] = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.75:
            sizes.append(rng.randint(300, 4_000))
        elif roll < 0.97:
            sizes.append(rng.randint(4_000, 24_000))
        else:
            sizes.append(0)
            large.append(i)
    budget = max(total - sum(sizes), len(large) * 50_000)
    weights = {i: rng.lognormvariate(0, 1) for i in large}
    while weights:  # share the budget by weight; a file over the cap gets the cap
        scale = budget / sum(weights.values())
        over = [i for i, weight in weights.items() if weight * scale > LARGE_CAP]
        for i in over:
            sizes[i] = LARGE_CAP
            budget -= LARGE_CAP
            del weights[i]
        if not over:
            for i, weight in weights.items():
                sizes[i] = int(weight * scale)
            break
    return sizes


def _folders(rng: random.Random, count: int) -> list[str]:
    """Nested folders, 3 to 5 levels deep, under a handful of top-level packages."""
    tops = ["src", "lib", "packages", "services", "tools", "docs", "web"]
    folders: set[str] = set()
    while len(folders) < count:
        depth = rng.randint(3, 5)
        folders.add("/".join([rng.choice(tops), *rng.sample(WORDS, depth - 1)]))
    return sorted(folders)


@dataclass(frozen=True)
class Tree:
    root: Path
    files: int  # every file on disk, ignored and hidden ones included
    bytes: int
    visible: int  # what ripgrep lists with Lantern's flags (hidden, not ignored)
    read_file: str


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _generate(root: Path, files: int, mb: int) -> None:
    rng = random.Random(SEED)
    pools = _line_pools(rng, 30_000)
    special = 16  # .gitignore, hidden files, the read file
    regular = files - BUILD_FILES - special
    if regular < 100:
        raise SystemExit(f"--files must be at least {BUILD_FILES + special + 100}")
    target = int(mb * 1_000_000 * 1.005)  # a little over, so the tree is at least --mb
    build_bytes = target // 40
    sizes = _sizes(rng, regular, target - build_bytes - READ_LINES * READ_LINE_BYTES)
    folders = _folders(rng, max(8, regular // 25))
    exts = list(KINDS)
    weights = [KINDS[e][1] for e in exts]

    paths: list[str] = []
    taken: set[str] = set()
    for _ in range(regular):
        folder = rng.choice(folders)
        ext = rng.choices(exts, weights)[0]
        name = f"{folder}/{'_'.join(rng.sample(WORDS, 2))}{ext}"
        while name in taken:
            name = f"{folder}/{'_'.join(rng.sample(WORDS, 2))}_{len(taken)}{ext}"
        taken.add(name)
        paths.append(name)
    literal_at = set(rng.sample(range(regular), LITERAL_PLANTS))
    regex_at = set(rng.sample(sorted(set(range(regular)) - literal_at), REGEX_PLANTS))

    for i, (rel, size) in enumerate(zip(paths, sizes, strict=True)):
        lines = _text(rng, pools[KINDS[Path(rel).suffix][0]], size).split("\n")
        at = rng.randrange(len(lines))
        if i in literal_at:
            lines.insert(at, f"    {LITERAL} = config.get('{LITERAL}', 3)")
        if i in regex_at:
            lines.insert(at, f"def handle_{rng.choice(WORDS)}_request(request, context):")
        _write(root / rel, "\n".join(lines))

    # The 1 MB read_file target: 20,000 lines of exactly 49 characters plus "\n".
    width = READ_LINE_BYTES - 1
    filler = "  # " + " ".join(WORDS)
    lines = [(line + filler)[:width] for line in rng.choices(pools["py"].lines, k=READ_LINES)]
    _write(root / READ_FILE, "\n".join(lines) + "\n")

    # build/ is ignored by the root .gitignore; it also holds one copy of the literal.
    _write(root / ".gitignore", "build/\n*.log\n__pycache__/\nnode_modules/\n")
    for i in range(BUILD_FILES):
        text = _text(rng, pools["ts"], build_bytes // BUILD_FILES)
        if i == 0:
            text += f"const {LITERAL} = 3;\n"
        _write(root / f"build/{'/'.join(rng.sample(WORDS, 2))}/chunk_{i:04}.js", text)

    hidden = {
        ".editorconfig": "root = true\n[*]\nindent_style = space\n",
        ".prettierrc": '{ "singleQuote": true }\n',
        ".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
        ".github/CODEOWNERS": "* @lantern/maintainers\n",
        "src/.eslintrc.json": '{ "root": true }\n',
        "web/.babelrc": '{ "presets": [] }\n',
        "docs/.markdownlint.json": '{ "MD013": false }\n',
        "services/.dockerignore": "node_modules\n",
        "tools/.flake8": "[flake8]\nmax-line-length = 100\n",
        "lib/.npmignore": "tests/\n",
        ".vscode/settings.json": '{ "editor.tabSize": 4 }\n',
        ".python-version": "3.11\n",
        "packages/.nvmrc": "20\n",
        ".tool-versions": "python 3.11.7\n",
    }
    for rel, text in hidden.items():
        _write(root / rel, text)


def _count(root: Path) -> tuple[int, int]:
    files = total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            files += 1
            total += os.lstat(os.path.join(folder, name)).st_size
    return files, total


def ensure_tree(data: Path, files: int, mb: int) -> Tree:
    """The cached tree for these parameters, generated on first use."""
    key = f"tree-f{files}-mb{mb}-s{SEED}-v{GENERATOR_VERSION}"
    root = data / key
    manifest = data / f"{key}.json"
    if not manifest.exists():
        shutil.rmtree(root, ignore_errors=True)
        tmp = data / f"{key}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        started = time.perf_counter()
        print(f"generating {files:,} files / {mb} MB under {root} ...", flush=True)
        _generate(tmp, files, mb)
        tmp.rename(root)
        count, size = _count(root)
        listed = run_rg(["--files", *ripgrep.COMMON_FLAGS], cwd=root).count(b"\n")
        manifest.write_text(json.dumps({"files": count, "bytes": size, "visible": listed}))
        print(f"generated in {time.perf_counter() - started:.1f} s", flush=True)
    info = json.loads(manifest.read_text())
    return Tree(root, info["files"], info["bytes"], info["visible"], READ_FILE)


# --- measuring ---------------------------------------------------------------------------


def run_rg(args: Sequence[str], cwd: Path | None = None) -> bytes:
    """Raw ripgrep, stdout to a pipe and read fully (what the baseline costs)."""
    proc = subprocess.run([ripgrep.rg_binary(), *args], cwd=cwd, capture_output=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"rg {' '.join(args)} failed: {proc.stderr.decode()[:300]}")
    return proc.stdout


Goal = tuple[Literal["ratio", "ms"], float]


@dataclass(frozen=True)
class Figure:
    """One Lantern tool call, the baseline it is held to, and an optional info baseline."""

    name: str
    tool: str
    args: dict[str, Any]
    goal: Goal
    baseline: str
    baseline_call: Callable[[], object]
    info_call: Callable[[], object] | None = None  # rg with the flags Lantern passes
    check: Callable[[ToolResult], str] = lambda result: ""  # a note when the result is off


@dataclass(frozen=True)
class Row:
    name: str
    lantern_s: float
    baseline: str
    baseline_s: float
    goal: Goal | None  # None for an info row
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.lantern_s / self.baseline_s

    def goal_text(self) -> str:
        if self.goal is None:
            return ""
        kind, limit = self.goal
        return f"<= {limit:g} ms" if kind == "ms" else f"<= {limit:g}x"

    def verdict(self) -> str:
        if self.goal is None:
            return "info"
        kind, limit = self.goal
        value = self.lantern_s * 1000 if kind == "ms" else self.ratio
        return "PASS" if value <= limit else "MISS"


async def interleaved(calls: Sequence[Callable[[], Awaitable[object]]], repeat: int) -> list[float]:
    """The median seconds of each call, after one warm-up each.

    The calls take turns (A B C A B C ...) so that drift on a busy machine hits them alike.
    """
    for call in calls:
        await call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, spent in zip(calls, times, strict=True):
            started = time.perf_counter()
            await call()
            spent.append(time.perf_counter() - started)
    return [statistics.median(t) for t in times]


def _blocking(fn: Callable[[], object]) -> Callable[[], Awaitable[object]]:
    """Run a baseline right in the loop (nothing else runs there, so blocking is fine)."""

    async def call() -> object:
        return fn()

    return call


async def measure(figures: Sequence[Figure], ctx: ToolContext, repeat: int) -> list[Row]:
    """Every figure in one event loop with one workspace, as the server runs the tools."""
    rows: list[Row] = []
    for fig in figures:
        result = await run_tool(fig.tool, fig.args, ctx)
        if result.is_error:
            raise RuntimeError(f"{fig.tool} failed: {result.code}: {result.content[:300]}")
        calls: list[Callable[[], Awaitable[object]]] = [
            functools.partial(run_tool, fig.tool, fig.args, ctx),
            _blocking(fig.baseline_call),
            *([_blocking(fig.info_call)] if fig.info_call else []),
        ]
        lantern_s, baseline_s, *info_s = await interleaved(calls, repeat)
        rows.append(Row(fig.name, lantern_s, fig.baseline, baseline_s, fig.goal, fig.check(result)))
        for seconds in info_s:
            rows.append(Row(f"  {fig.name}", lantern_s, "rg, Lantern's flags", seconds, None))
    return rows


def _matches(result: ToolResult) -> int:
    return sum(1 for line in result.content.splitlines() if not line.startswith("["))


def _listed_total(result: ToolResult) -> int:
    found = re.match(r"\[([\d,]+) file", result.content)
    return int(found.group(1).replace(",", "")) if found else 0


def lantern_rg_args(ctx: ToolContext, pattern: str | None = None) -> list[str]:
    """The ripgrep arguments Lantern builds for search (a pattern) or list_files (None).

    Search reuses `search._flags` (private, but it is the exact argv); list_files has no
    such helper, so its argv is rebuilt as in tools/list_files.py. Both get the rules of
    the root's own ignore files, which Lantern reads and hands rg in a temporary file.
    """
    fed = _fed_rules_file(ctx)
    if pattern is None:  # as in tools/list_files.py
        return [
            "--files",
            "--null",
            f"--threads={ripgrep.walk_threads()}",
            *ripgrep.COMMON_FLAGS,
            *ripgrep.policy_flags(ctx.workspace.roots[0], None),
            *fed,
        ]
    args = SearchArgs.model_validate({"pattern": pattern})
    return [*search._flags(args, ctx.workspace.roots[0]), *fed, "."]


def _fed_rules_file(ctx: ToolContext) -> list[str]:
    root = ctx.workspace.roots[0]
    check = ResultFilter(ctx.workspace, Target(root, (), "."))
    try:
        return ripgrep.ignore_file(check.fed_rules())
    finally:
        check.close()


def figures(tree: Tree, ctx: ToolContext) -> list[Figure]:
    root = str(tree.root)

    def rg(args: list[str]) -> Callable[[], object]:
        return lambda: run_rg(args, cwd=tree.root)

    def search_figure(name: str, pattern: str, want: int) -> Figure:
        raw = run_rg(["-n", pattern, root]).count(b"\n")

        def check(result: ToolResult) -> str:
            got = _matches(result)
            return "" if got == raw == want else f"matches: Lantern {got}, rg {raw}, want {want}"

        return Figure(
            name,
            "search",
            {"pattern": pattern},
            ("ratio", 1.1),
            f"rg -n {shlex.quote(pattern)} ROOT",
            rg(["-n", pattern, root]),
            rg(lantern_rg_args(ctx, pattern)),
            check,
        )

    listed = run_rg(["--files", root]).count(b"\n")
    path = tree.root / tree.read_file
    want_head = f"lines {READ_OFFSET}–{READ_OFFSET + READ_LIMIT - 1} of {READ_LINES}"

    def plain_read() -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    return [
        search_figure("search literal", LITERAL, LITERAL_PLANTS),
        search_figure("search regex", REGEX, REGEX_PLANTS),
        Figure(
            "list_files",
            "list_files",
            {},
            ("ratio", 1.2),
            "rg --files ROOT",
            rg(["--files", root]),
            rg(lantern_rg_args(ctx)),
            lambda r: f"Lantern counts {_listed_total(r):,} files, rg --files lists {listed:,}",
        ),
        Figure(
            "read_file 400 lines",
            "read_file",
            {"path": tree.read_file, "offset": READ_OFFSET, "limit": READ_LIMIT},
            ("ratio", 4.0),
            "open(path).read(), same file",
            plain_read,
            check=lambda r: "" if want_head in r.content else f"unexpected: {r.content[:80]!r}",
        ),
    ]


def run_benchmark(tree: Tree, repeat: int) -> list[Row]:
    ctx = ToolContext(Workspace([tree.root]), Fixed(Decision.ALLOW_ONCE))
    return asyncio.run(measure(figures(tree, ctx), ctx, repeat))


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'figure':<20} {'lantern ms':>10}  {'baseline':<36} {'base ms':>8} {'ratio':>7}"
        f"  {'goal':<10} verdict"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        print(
            f"{row.name:<20} {row.lantern_s * 1000:>10.2f}  {row.baseline:<36.36} "
            f"{row.baseline_s * 1000:>8.2f} {row.ratio:>6.2f}x  {row.goal_text():<10} "
            f"{row.verdict()}"
        )
        if row.note:
            print(f"{'':<20} note: {row.note}")


# --- hostile workspaces (--hardening) ----------------------------------------------------


def _big_gitignore(n: int = 50_000) -> str:
    shapes = ["gen_{i}/", "*.ext{i}", "src/mod{i}/*.tmp", "cache{i}*", "**/deep{i}/x?.md"]
    return "".join(shapes[i % len(shapes)].format(i=i) + "\n" for i in range(n))


async def _timed(tool: str, args: dict[str, Any], ctx: ToolContext) -> tuple[float, float, str]:
    """Seconds for one call, the longest the event loop went without running a tick,
    and the error code when the call failed."""
    stall = 0.0
    done = False

    async def ticker() -> None:
        nonlocal stall
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stall = max(stall, now - last)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.005)  # the ticker is running before the call starts
    started = time.perf_counter()
    result = await run_tool(tool, args, ctx)
    spent = time.perf_counter() - started
    done = True
    await tick
    return spent, stall, result.code or ""


async def _hardening_rows(base: Path) -> list[tuple[str, float, float, str]]:
    deep = base / "deep"
    deep.mkdir()
    (deep / ".gitignore").write_text("*.log\nbuild/\n")
    make_deep(deep, 2000, 300)
    big = base / "big"
    (big / "src").mkdir(parents=True)
    (big / ".gitignore").write_text(_big_gitignore())
    for i in range(200):
        (big / "src" / f"m{i}.py").write_text("needle = 1\n")
    secretive = base / "secretive"  # every hit line holds a secret: each is checked again
    secretive.mkdir()
    for i in range(200):
        token = "ghp" + "_" + f"{i:04d}Qx7mK2pL9vR4tZ8wN1cB6hJ3fD5gS0yU"
        (secretive / f"c{i}.py").write_text(f'GITHUB = "{token}"  # needle\nx = 1\n')
    plain = base / "plain"
    plain.mkdir()
    (plain / "minified.js").write_text("z" * (1 << 20))
    ctx = ToolContext(Workspace([plain]), Fixed(Decision.ALLOW_ONCE))
    rows = [("read_file, 1 MB one line", *await _timed("read_file", {"path": "minified.js"}, ctx))]
    ctx = ToolContext(Workspace([deep]), Fixed(Decision.ALLOW_ONCE))
    for name, tool, args in [
        ("read_file, 2,000-part path", "read_file", {"path": "/".join(["x"] * 2000)}),
        ("list_files, depth 2,000", "list_files", {"max_results": 500}),
        ("search, depth 2,000", "search", {"pattern": "needle", "max_results": 500}),
    ]:
        rows.append((name, *await _timed(tool, args, ctx)))
    ctx = ToolContext(Workspace([secretive]), Fixed(Decision.ALLOW_ONCE))
    args = {"pattern": "needle", "max_results": 500}
    rows.append(("search, 200 secret hit lines", *await _timed("search", args, ctx)))
    ctx = ToolContext(Workspace([big]), Fixed(Decision.ALLOW_ONCE))
    rows.append(("search, 50k globs, 1st", *await _timed("search", {"pattern": "needle"}, ctx)))
    rows.append(("search, 50k globs, next", *await _timed("search", {"pattern": "needle"}, ctx)))
    rows.append(("list_files, 50k globs", *await _timed("list_files", {}, ctx)))
    return rows


def run_hardening() -> None:
    """Hostile workspaces: each call's time, and the longest stall of the event loop."""
    base = Path(tempfile.mkdtemp(prefix="lantern-hardening-"))
    try:
        rows = asyncio.run(_hardening_rows(base))
    finally:
        subprocess.run(["rm", "-rf", "--", str(base)], check=False)  # too deep for rmtree
    print(f"\n{'hostile workspace':<28} {'call ms':>9} {'longest loop stall ms':>22}  error")
    for name, spent, stall, code in rows:
        print(f"{name:<28} {spent * 1000:>9.1f} {stall * 1000:>22.1f}  {code}")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=20_000, help="files in the tree")
    parser.add_argument("--mb", type=int, default=200, help="approximate size of the tree in MB")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure")
    parser.add_argument("--data", type=Path, default=HERE / ".data", help="cache folder")
    parser.add_argument(
        "--hardening", action="store_true", help="also time hostile workspaces (deep, huge rules)"
    )
    parser.add_argument(
        "--hog",
        type=int,
        default=0,
        help="busy-loop processes to run beside the measurement (a CPU hog), e.g. 3",
    )
    args = parser.parse_args(argv)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hog)]
    try:
        return _main(args)
    finally:
        for hog in hogs:  # only the processes this run started, by their pid
            hog.kill()
            hog.wait()


def _main(args: argparse.Namespace) -> int:
    args.data.mkdir(parents=True, exist_ok=True)
    tree = ensure_tree(args.data.resolve(), args.files, args.mb)
    version = run_rg(["--version"]).decode().splitlines()[0]
    print(f"python {sys.version.split()[0]} | cores: {os.cpu_count()} | {version}")
    print(f"rg: {ripgrep.rg_binary()}")
    print(
        f"tree: {tree.root}\n      {tree.files:,} files, {tree.bytes / 1e6:.1f} MB "
        f"({tree.visible:,} visible to Lantern's rg walk) | repeat {args.repeat}, median"
    )
    hog = f" | {args.hog} busy-loop process(es) beside it" if args.hog else ""
    print(f"load average before: {_load()}{hog}\n")
    print_table(run_benchmark(tree, args.repeat))
    if args.hardening:
        run_hardening()
    print(f"\nload average after: {_load()} (above ~{os.cpu_count()}: other work competed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
