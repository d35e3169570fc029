#!/usr/bin/env python3
"""Every figure of the monorepo-scale goals (issue 28), each against its baseline in the
same run.

    python benchmarks/scale_bench.py [--kernel] [--rounds R] [--slow-rounds S]
        [--only FIGURE ...] [--serve-calls N] [--cache DIR] [--data DIR]

Without `--kernel`: tools_bench.py's tree of 20,000 files for search and list_files, and
navigation_bench.py's tree of 20,000 modules for the rest (both generated once under
--data); with it, the Linux kernel source (`kernel_tree.py`: Debian's linux-source
package, fetched and unpacked once under --cache). Lantern's tools run in this process
through `run_tool` in one event loop, as the server runs them, each navigation call with
a fresh parse cache (a conversation's first call); baselines are plain subprocesses.
Within a figure the calls take turns, the order rotated every round, after one warm-up
round (find_symbol and find_references: only `rg -w`, which reads every file they parse):
5 rounds; the slow figures (find_symbol, find_references, the folder outline) 2 with
--kernel, where one round of them takes about 3 minutes on 2 cores. Medians of wall time
and of CPU time (this process's threads plus reaped children, rg included) are printed.
The server figures drive `lantern serve` over pipes (server_bench.py's client). Ratios
are printed, never asserted: the script exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kernel_tree
import navigation_bench
import server_bench
import tools_bench
from lantern.approvals.approver import Decision, Fixed
from lantern.code.cache import DEFAULT_CAP, ParseCache
from lantern.code.languages import language_for
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.navigation.files import MAX_CANDIDATES
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace
from lantern.workspace.text import MAX_FILE_BYTES

HERE = Path(__file__).resolve().parent
READ_PLUS_S = 0.050  # outline's goal: read_file of the same file + 50 ms
CTAGS_TOP = 5  # the ctags definition must be among this many find_symbol results
CTAGS_SHARE = 0.9
SERVE_PEAK_MB = 200.0
SERVE_GROWTH_MB = DEFAULT_CAP / (1 << 20) + 50
ASK_TIMEOUT_S = 900.0  # one question of the serve session (several calls over a big tree)
CALLS_PER_TURN = 5  # navigation calls the fake model asks for at once
TURNS_PER_QUESTION = 2


# --- the trees ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """A tree and what each figure asks of it."""

    label: str
    root: Path  # for search and list_files
    code_root: Path  # for the navigation tools and the serve session
    literal: str  # a fixed string in a few dozen files
    regex: str
    deep: str  # a deep folder for list_files
    symbols: tuple[str, ...]  # find_symbol names
    references: tuple[str, ...]  # find_references names
    outline_suffix: str  # the biggest files with this suffix are outlined
    outline_files: int
    big_folder: str  # outlined whole


KERNEL_SYMBOLS = (
    "task_struct",
    "kmalloc",
    "file_operations",
    "copy_from_user",
    "netif_rx",
    "pci_register_driver",
    "kmalloc_node",
    "napi_schedule",
    "alloc_etherdev",
    "vfs_read",
)
KERNEL_REFERENCES = ("netif_rx", "napi_schedule", "alloc_etherdev", "kmalloc_node", "ether_setup")
# In navigation_bench.py's generated tree of 20,000 files (seed and version fixed): the
# planted name, and class and method names found in 10 to 60 files each.
TREE_SYMBOLS = (
    "NeedleWidgetFactory",
    "ClientModel",
    "IndexAction",
    "SocketAlert",
    "StreamTask",
    "request_request",
    "alert_adapter",
    "loader_layer",
    "update_model",
    "view_vector",
)
TREE_REFERENCES = (
    "request_request",
    "policy_source",
    "tracker_request",
    "ClientModel",
    "view_vector",
)
TREE_FILES = 20_000


def kernel_profile(cache: Path) -> Profile:
    kernel = kernel_tree.ensure_kernel(cache)
    return Profile(
        f"{kernel.package} {kernel.version}",
        kernel.root,
        kernel.root,
        literal="skb_checksum_help",
        regex=r"netif_napi_add\w*\(",
        deep="drivers/net/ethernet/intel/ice",
        symbols=KERNEL_SYMBOLS,
        references=KERNEL_REFERENCES,
        outline_suffix=".c",
        outline_files=10,
        big_folder="drivers/net",
    )


def tree_profile(data: Path) -> Profile:
    """tools_bench.py's tree of 20,000 files for search and list_files (its big files are
    lines drawn at random, not code: tree-sitter's error recovery would be what a
    navigation figure measures), navigation_bench.py's tree of 20,000 small modules for
    the rest."""
    tree = tools_bench.ensure_tree(data, TREE_FILES, 200)
    code = navigation_bench.ensure_tree(data, TREE_FILES)
    listed = tools_bench.run_rg(["--files"], cwd=tree.root).decode().splitlines()
    folders = Counter(name.rpartition("/")[0] for name in listed)
    # The deepest folder, the most files among those.
    deep = max(folders, key=lambda f: (f.count("/"), folders[f], f))
    # The folder with the most files below it, within what one outline parses.
    below = Counter(
        "/".join(parts[:depth])
        for name in tools_bench.run_rg(["--files"], cwd=code).decode().splitlines()
        for parts in [name.split("/")[:-1]]
        for depth in range(1, len(parts) + 1)
    )
    big = max((f for f, n in below.items() if n <= MAX_CANDIDATES), key=lambda f: (below[f], f))
    return Profile(
        f"generated: tools_bench {tree.files:,} files, navigation_bench {TREE_FILES:,} files",
        tree.root,
        code,
        literal=tools_bench.LITERAL,
        regex=tools_bench.REGEX,
        deep=deep,
        symbols=TREE_SYMBOLS,
        references=TREE_REFERENCES,
        outline_suffix=".py",
        outline_files=1,
        big_folder=big,
    )


# --- measuring ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rounds:
    """Timed rounds of the quick figures and of the slow ones."""

    quick: int
    slow: int


@dataclass(frozen=True)
class Cost:
    wall: float
    cpu: float

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.wall + other.wall, self.cpu + other.cpu)


Call = Callable[[], Awaitable[object]]


def cpu_now() -> float:
    """CPU seconds of this process (every thread) and of its reaped children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


async def interleaved(
    lantern: Callable[[], Awaitable[ToolResult]],
    baselines: Sequence[Call],
    rounds: int,
    *,
    warm_lantern: bool = True,
) -> tuple[ToolResult, list[Cost]]:
    """Lantern's result, and the median cost of Lantern's call and of each baseline: one
    warm-up round, then `rounds` rounds, each in an order rotated by one, so that drift on
    a busy machine hits every call alike.

    `warm_lantern=False`: the warm-up round runs only the baselines, for a slow Lantern
    call whose baseline reads the same files (`rg -w NAME` reads every candidate file);
    the result is then the first timed call's.
    """
    calls: list[Call] = [lantern, *baselines]
    first: list[ToolResult] = []

    async def kept() -> ToolResult:
        result = await lantern()
        first.append(result)
        return result

    calls[0] = kept
    for call in calls if warm_lantern else calls[1:]:
        await call()
    costs = await timed_rounds(calls, rounds)
    return first[0], costs  # without warm_lantern, first[0] is the first timed call's


async def timed_rounds(calls: Sequence[Call], rounds: int) -> list[Cost]:
    """The median cost of each call over `rounds` rounds, each in an order rotated by one."""
    walls: list[list[float]] = [[] for _ in calls]
    cpus: list[list[float]] = [[] for _ in calls]
    for r in range(rounds):
        for i in [*range(r % len(calls), len(calls)), *range(r % len(calls))]:
            cpu, started = cpu_now(), time.perf_counter()
            await calls[i]()
            walls[i].append(time.perf_counter() - started)
            cpus[i].append(cpu_now() - cpu)
    return [
        Cost(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus, strict=True)
    ]


def rg(root: Path, *args: str) -> Call:
    """A plain ripgrep run in the tree, its output read fully."""

    async def call() -> object:
        return tools_bench.run_rg(list(args), cwd=root)

    return call


def tool(ws: Workspace, name: str, args: dict[str, Any]) -> Callable[[], Awaitable[ToolResult]]:
    """A Lantern tool call, with a fresh parse cache (a conversation's first call)."""

    async def call() -> ToolResult:
        ctx = ToolContext(ws, Fixed(Decision.ALLOW_ONCE), code_cache=ParseCache())
        result = await run_tool(name, args, ctx)
        if result.is_error:
            raise RuntimeError(f"{name} {args}: {result.code}: {result.content[:300]}")
        return result

    return call


@dataclass
class Row:
    figure: str
    lantern: Cost
    baseline: str
    base: Cost
    goal: float | None  # a wall-time ratio; None: info only
    note: str = ""
    sub: bool = False  # a row under the figure above
    detail: bool = False  # one name or file of the figure above: left out of the summary

    def verdict(self) -> str:
        if self.goal is None:
            return "info"
        return "PASS" if self.lantern.wall / self.base.wall <= self.goal else "MISS"


@dataclass(frozen=True)
class Fact:
    """A figure that is no ratio of two timings (a share, a size in MB)."""

    figure: str
    value: str
    goal: str
    verdict: str


@dataclass
class Report:
    """What was printed, in order, for the summary."""

    entries: list[Row | Fact] = field(default_factory=list)

    def add(self, row: Row) -> None:
        self.entries.append(row)
        _print_row(row)

    def fact(self, figure: str, value: str, goal: str, ok: bool | None) -> None:
        verdict = "info" if ok is None else ("PASS" if ok else "MISS")
        self.entries.append(Fact(figure, value, goal, verdict))
        print(f"  {figure}: {value}  (goal {goal})  {verdict}", flush=True)


def _print_row(row: Row) -> None:
    name = f"  {row.figure}" if row.sub else row.figure
    goal = f"<= {row.goal:g}x" if row.goal is not None else ""
    print(
        f"{name:<38.38} {row.lantern.wall * 1000:>9.1f} {row.base.wall * 1000:>9.1f} "
        f"{row.lantern.wall / row.base.wall:>6.2f}x {row.lantern.cpu / row.base.cpu:>6.2f}x  "
        f"{row.baseline:<34.34} {goal:<7} {row.verdict()}",
        flush=True,
    )
    if row.note:
        print(f"{'':<40}{row.note}", flush=True)


def _head(title: str) -> None:
    print(f"\n{title}", flush=True)
    print(
        f"{'figure':<38} {'lantern':>9} {'baseline':>9} {'wall':>7} {'CPU':>7}  "
        f"{'baseline (ms: medians)':<34} {'goal':<7} verdict",
        flush=True,
    )


def _lines(result: ToolResult) -> list[str]:
    return [line for line in result.content.splitlines() if not line.startswith("[")]


# --- the tool figures --------------------------------------------------------------------


async def search_figures(p: Profile, ws: Workspace, rounds: Rounds, report: Report) -> None:
    ctx = ToolContext(ws, Fixed(Decision.ALLOW_ONCE))
    for label, pattern in (("literal", p.literal), ("regex", p.regex)):
        exact = tools_bench.lantern_rg_args(ctx, pattern)
        # The same file selection and case, rg's own thread count and plain output.
        same = ["-n", *(a for a in exact if a != "--json" and not a.startswith("--threads"))]
        lantern = tool(ws, "search", {"pattern": pattern, "max_results": 500})
        files = tools_bench.run_rg(["-l", *same[1:]], cwd=p.root).count(b"\n")
        result, (t_lantern, t_same, t_exact, t_plain) = await interleaved(
            lantern,
            [rg(p.root, *same), rg(p.root, *exact), rg(p.root, "-n", pattern, ".")],
            rounds.quick,
        )
        note = f"{len(_lines(result))} line(s) shown, in {files} file(s)"
        report.add(Row(f"search {label}", t_lantern, "rg, same flags", t_same, 1.1, note))
        report.add(
            Row(
                "Lantern's exact argv",
                t_lantern,
                "rg --json, Lantern's argv",
                t_exact,
                None,
                sub=True,
            ),
        )
        report.add(Row("plain rg", t_lantern, "rg -n PATTERN", t_plain, None, sub=True))


async def list_figures(p: Profile, ws: Workspace, rounds: Rounds, report: Report) -> None:
    ctx = ToolContext(ws, Fixed(Decision.ALLOW_ONCE))
    exact = tools_bench.lantern_rg_args(ctx)
    for label, path in (("root", "."), ("deep folder", p.deep)):
        lantern = tool(ws, "list_files", {"path": path})
        listed = tools_bench.run_rg(["--files", path], cwd=p.root).count(b"\n")
        result, (t_lantern, t_plain, t_exact) = await interleaved(
            lantern, [rg(p.root, "--files", path), rg(p.root, *exact, path)], rounds.quick
        )
        note = f"{result.content.splitlines()[0]} | rg --files lists {listed:,}"
        name = f"list_files {label}" + (f" ({path})" if path != "." else "")
        report.add(Row(name, t_lantern, f"rg --files {path}", t_plain, 1.2, note))
        if path == ".":
            first = await first_listing(p, rounds.quick)
            report.add(
                Row("first call in a new process", first, "rg --files .", t_plain, None, sub=True)
            )
        report.add(Row("Lantern's argv", t_lantern, "rg, Lantern's argv", t_exact, None, sub=True))


async def first_listing(p: Profile, rounds: int) -> Cost:
    """`list_files` of the root as a new process's first call (what it remembers across
    calls still empty): `lantern tool list_files` less `lantern tool read_file` of a small
    file, which costs the same start-up."""

    def cli(*args: str) -> Call:
        argv = [*server_bench.LANTERN_CLI, "tool", *args, "--workspace", str(p.root)]

        async def call() -> object:
            return subprocess.run(argv, capture_output=True, check=True).stdout

        return call

    listed = tools_bench.run_rg(["--files"], cwd=p.root).decode().splitlines()
    small = min((f for f in listed if "/." not in f"/{f}"), key=len)
    listing, start = await timed_rounds(
        [cli("list_files", '{"path": "."}'), cli("read_file", json.dumps({"path": small}))],
        rounds,
    )
    return Cost(listing.wall - start.wall, listing.cpu - start.cpu)


DEFINITION = re.compile(r"^(?P<path>.+?):(?P<start>\d+)-(?P<end>\d+) ")
_NOT_DEFINITIONS = {"header", "local", "parameter", "label", "prototype", "externvar"}


def ctags_definitions(root: Path, name: str) -> set[tuple[str, int]]:
    """(path, line) of each definition Universal Ctags finds of `name` in the files where
    the name stands as a word (struct and union members of C and C++ left out)."""
    files = tools_bench.run_rg(["-l", "-w", "-F", name], cwd=root).decode().splitlines()
    files = [f for f in files if language_for(f) is not None]
    if not files:
        return set()
    done = subprocess.run(
        ["ctags", "-L", "-", "--output-format=json", "--fields=+nKl", "-f", "-"],
        cwd=root,
        input="\n".join(files),
        capture_output=True,
        text=True,
        check=True,
    )
    found: set[tuple[str, int]] = set()
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("name") != name:
            continue
        kind, language = tag.get("kind", ""), tag.get("language", "")
        if kind in _NOT_DEFINITIONS or (kind == "member" and language in ("C", "C++")):
            continue
        found.add((tag["path"], int(tag["line"])))
    return found


def _ctags_rank(result: ToolResult, tags: set[tuple[str, int]]) -> int | None:
    """The place (1-based) of the first result that spans a ctags definition."""
    for place, line in enumerate(_lines(result), 1):
        found = DEFINITION.match(line)
        if found and any(
            path == found["path"] and int(found["start"]) <= at <= int(found["end"])
            for path, at in tags
        ):
            return place
    return None


def _ctags_available() -> bool:
    try:
        done = subprocess.run(["ctags", "--version"], capture_output=True, text=True)
    except OSError:
        return False
    return "Universal Ctags" in done.stdout


async def _per_name(
    p: Profile, ws: Workspace, rounds: Rounds, tool_name: str, names: Sequence[str]
) -> list[tuple[str, ToolResult, Cost, Cost, int]]:
    """Each name's result, Lantern's and `rg -w`'s median costs, and its candidate files."""
    out = []
    for name in names:
        lantern = tool(ws, tool_name, {"name": name})
        candidates = tools_bench.run_rg(["-l", "-w", "-F", name], cwd=p.code_root).decode()
        parsed = sum(1 for f in candidates.splitlines() if language_for(f) is not None)
        result, (t_lantern, t_rg) = await interleaved(
            lantern, [rg(p.code_root, "-w", name, ".")], rounds.slow, warm_lantern=False
        )
        out.append((name, result, t_lantern, t_rg, parsed))
    return out


async def find_symbol_figure(p: Profile, ws: Workspace, rounds: Rounds, report: Report) -> None:
    ctags = _ctags_available()
    total_l = total_r = Cost(0, 0)
    found = known = 0
    rows = []
    for name, result, t_lantern, t_rg, files in await _per_name(
        p, ws, rounds, "find_symbol", p.symbols
    ):
        total_l, total_r = total_l + t_lantern, total_r + t_rg
        note = f"{len(_lines(result))} definition(s), {files:,} candidate file(s)"
        if ctags:
            tags = ctags_definitions(p.code_root, name)
            place = _ctags_rank(result, tags) if tags else None
            known += bool(tags)
            found += place is not None and place <= CTAGS_TOP
            note += f"; ctags: {len(tags)} definition(s)" + (
                f", first at result {place}" if place else (", none in the results" if tags else "")
            )
        rows.append(Row(name, t_lantern, f"rg -w {name}", t_rg, None, note, sub=True, detail=True))
    report.add(
        Row(f"find_symbol, {len(p.symbols)} names", total_l, "rg -w NAME, summed", total_r, 1.5),
    )
    for row in rows:
        report.add(row)
    if ctags:
        share = found / known if known else 0.0
        report.fact(
            f"find_symbol: ctags definition in the first {CTAGS_TOP}",
            f"{found} of {known} names with a ctags definition",
            f">= {CTAGS_SHARE:.0%}",
            share >= CTAGS_SHARE,
        )
    else:
        report.fact(
            "find_symbol: ctags definition in the first 5",
            "Universal Ctags not installed",
            ">= 90%",
            None,
        )


async def find_references_figure(p: Profile, ws: Workspace, rounds: Rounds, report: Report) -> None:
    total_l = total_r = Cost(0, 0)
    rows = []
    for name, result, t_lantern, t_rg, files in await _per_name(
        p, ws, rounds, "find_references", p.references
    ):
        total_l, total_r = total_l + t_lantern, total_r + t_rg
        note = f"{len(_lines(result))} use(s) shown, {files:,} candidate file(s)"
        rows.append(Row(name, t_lantern, f"rg -w {name}", t_rg, None, note, sub=True, detail=True))
    report.add(
        Row(
            f"find_references, {len(p.references)} names",
            total_l,
            "rg -w NAME, summed",
            total_r,
            2.5,
        ),
    )
    for row in rows:
        report.add(row)


def biggest(p: Profile, count: int) -> list[tuple[str, int]]:
    """The `count` largest files with the profile's suffix that Lantern would parse."""
    names = tools_bench.run_rg(["--files", "-g", f"*{p.outline_suffix}"], cwd=p.code_root)
    sized = [(n, (p.code_root / n).stat().st_size) for n in names.decode().splitlines()]
    sized = [(n, size) for n, size in sized if size <= MAX_FILE_BYTES]
    return sorted(sized, key=lambda item: (-item[1], item[0]))[:count]


async def outline_figures(p: Profile, ws: Workspace, rounds: Rounds, report: Report) -> None:
    total_o = total_r = Cost(0, 0)
    rows = []
    for path, size in biggest(p, p.outline_files):
        result, (t_outline, t_read) = await interleaved(
            tool(ws, "outline", {"path": path}),
            [tool(ws, "read_file", {"path": path})],
            rounds.quick,
        )
        t_goal = Cost(t_read.wall + READ_PLUS_S, t_read.cpu + READ_PLUS_S)
        total_o, total_r = total_o + t_outline, total_r + t_goal
        note = f"{size / 1e6:.2f} MB, {len(_lines(result))} definition line(s) shown"
        rows.append(
            Row(path, t_outline, "read_file + 50 ms", t_goal, 1.0, note, sub=True, detail=True)
        )
    report.add(
        Row(
            f"outline, {len(rows)} biggest *{p.outline_suffix}",
            total_o,
            "read_file + 50 ms each, summed",
            total_r,
            1.0,
        ),
    )
    for row in rows:
        report.add(row)

    files = tools_bench.run_rg(["--files", p.big_folder], cwd=p.code_root).count(b"\n")
    result, (t_folder, t_files) = await interleaved(
        tool(ws, "outline", {"path": p.big_folder}),
        [rg(p.code_root, "--files", p.big_folder)],
        rounds.slow,
    )
    note = (
        f"{len(result.content.encode()):,} bytes shown, {len(_lines(result)):,} line(s); "
        f"rg --files lists {files:,}"
    )
    report.add(
        Row(f"outline {p.big_folder}", t_folder, f"rg --files {p.big_folder}", t_files, 10.0, note),
    )


# --- the server figures ------------------------------------------------------------------


def _sample(paths: Sequence[str], count: int, salt: str) -> list[str]:
    """`count` of `paths`, spread over the tree by a stable hash."""

    def key(path: str) -> str:
        return hashlib.sha256(f"{salt}:{path}".encode()).hexdigest()

    return sorted(paths, key=key)[:count]


def navigation_calls(p: Profile, count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` navigation calls of the mix a conversation makes: file outlines, lookups in
    the whole tree and in one folder, uses in a folder, a folder outline now and then."""
    listed = tools_bench.run_rg(["--files", "-g", f"*{p.outline_suffix}"], cwd=p.code_root)
    names = listed.decode().splitlines()
    sizes = {n: (p.code_root / n).stat().st_size for n in names}
    files = _sample([n for n in names if sizes[n] <= 400_000], count, "file")
    # Folders by the files of that suffix right in them: some for lookups, smaller ones
    # to outline whole.
    folders = Counter(n.rpartition("/")[0] for n in names)
    mid = _sample([f for f, n in folders.items() if 10 <= n <= 300 and f], count, "folder")
    small = _sample([f for f, n in folders.items() if 3 <= n < 40 and f], count, "small")
    mid, small = mid or ["."], small or ["."]
    names = [*p.symbols, *p.references]
    mix: list[tuple[str, dict[str, Any]]] = []
    for i in range(count):
        name = names[i % len(names)]
        kind = i % 10
        if kind in (0, 2, 4, 7):
            mix.append(("outline", {"path": files[i % len(files)]}))
        elif kind in (1, 5):
            mix.append(("find_symbol", {"name": name, "path": mid[i % len(mid)]}))
        elif kind == 3:
            mix.append(("find_symbol", {"name": name}))
        elif kind in (6, 8):
            mix.append(("find_references", {"name": name, "path": mid[i % len(mid)]}))
        else:
            mix.append(("outline", {"path": small[i % len(small)]}))
    return mix


def serve_session(p: Profile, calls: int, tmp: Path, report: Report) -> None:
    env, _workspace, _bare = server_bench.prepared(tmp)
    mix = navigation_calls(p, calls)
    per_question = CALLS_PER_TURN * TURNS_PER_QUESTION
    fake = server_bench.FakeOpenAI().start()
    log = (tmp / "serve-session.stderr").open("wb")
    started = time.perf_counter()
    done = failed = 0
    try:
        env = {**env, "LANTERN_MODEL": "fake-model", "LANTERN_BASE_URL": fake.base_url}
        with server_bench.spawned(server_bench.LANTERN_CMD, env=env, stderr=log) as server:
            msg = server.request("initialize", server_bench.initialize_params(p.code_root))
            server.wait_response(msg, server_bench.answer_server_request)
            server.notify("initialized", {})
            server.wait_request("workspace/configuration", server_bench.answer_server_request)
            base = server_bench.settled_rss_mb(server.pid)
            for q in range(0, len(mix), per_question):
                chunk = mix[q : q + per_question]
                turns: list[dict[str, Any]] = [
                    {
                        "tool_calls": [
                            {"id": f"c{q + t + k}", "name": name, "arguments": args}
                            for k, (name, args) in enumerate(chunk[t : t + CALLS_PER_TURN])
                        ]
                    }
                    for t in range(0, len(chunk), CALLS_PER_TURN)
                ]
                fake.add_turns([*turns, {"content": f"Answer {q}."}])
                ask = server.request("lantern/ask", {"question": f"Question {q}: where?"})
                result = server.wait_response(
                    ask, server_bench.answer_server_request, timeout=ASK_TIMEOUT_S
                )
                statuses = [c.get("status") for c in result.get("toolCalls", [])]
                done += statuses.count("done")
                failed += len(statuses) - statuses.count("done")
            final = server_bench.rss_mb(server.pid)
            peak = server_bench.hwm_mb(server.pid)
    finally:
        fake.stop()
        log.close()
    took = time.perf_counter() - started
    print(
        f"  {len(mix)} navigation calls in {-(-len(mix) // per_question)} questions "
        f"({CALLS_PER_TURN} calls a turn) in {took:.0f} s: {done} done, {failed} not; "
        f"RSS after initialize {base:.1f} MB, after the calls {final:.1f} MB",
        flush=True,
    )
    report.fact(
        f"serve, {len(mix)} navigation calls: peak RSS",
        f"{peak:.1f} MB",
        f"<= {SERVE_PEAK_MB:.0f} MB",
        peak <= SERVE_PEAK_MB,
    )
    report.fact(
        f"serve, {len(mix)} navigation calls: growth",
        f"{final - base:.1f} MB (peak - initialized: {peak - base:.1f} MB)",
        f"<= cache cap + 50 = {SERVE_GROWTH_MB:.0f} MB",
        final - base <= SERVE_GROWTH_MB,
    )


def _median(samples: Sequence[server_bench.Sample]) -> Cost:
    return Cost(
        statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)
    )


def server_figures(runs: int, questions: int, tmp: Path, report: Report) -> None:
    env, workspace, bare = server_bench.prepared(tmp)
    times = server_bench.startup_bench(runs, bare, env, direct=False)

    _head(f"start-up, spawn to initialize response ({runs} runs, interleaved)")
    report.add(
        Row(
            "lantern serve: initialize",
            _median(times["lantern serve"]),
            "bare pygls 2",
            _median(times["bare pygls 2"]),
            server_bench.STARTUP_GOAL_RATIO,
        ),
    )
    print(f"\nmemory of `lantern serve`, {questions} questions against the fake model", flush=True)
    with (tmp / "memory.stderr").open("wb") as log:
        mem = server_bench.memory_bench(questions, workspace, env, log)
    report.fact(
        f"RSS after {questions} questions",
        f"{mem['after_q']:.1f} MB (after initialize {mem['after_init_settled']:.1f} MB)",
        f"<= {server_bench.MEMORY_GOAL_MB:.0f} MB",
        mem["after_q"] <= server_bench.MEMORY_GOAL_MB,
    )

    cli_times = server_bench.cli_bench(runs, workspace, env)
    _head(f"`lantern tool` start-up, spawn to exit ({runs} runs, interleaved)")
    tool_cmd = [
        *server_bench.LANTERN_CLI,
        "tool",
        "read_file",
        json.dumps({"path": server_bench.WORKSPACE_FILE}),
        "--workspace",
        str(workspace),
    ]
    cli, floor = _median(cli_times["lantern tool"]), _median(cli_times["python -c pass"])
    report.add(
        Row(
            "lantern tool read_file",
            cli,
            "python -c pass",
            floor,
            None,
            f"{(cli.wall - floor.wall) * 1000:.0f} ms above the interpreter; "
            + _imports([server_bench.PYTHON, "-X", "importtime", *tool_cmd[1:]], env),
        ),
    )
    report.add(
        Row(
            "lantern --version",
            _median(cli_times["lantern --version"]),
            "python -c pass",
            floor,
            None,
            sub=True,
        )
    )


def _imports(argv: list[str], env: dict[str, str]) -> str:
    """How many modules a command imports, and the packages besides Lantern that cost
    most (`-X importtime`, one run: each package's cumulative time where it is first
    imported, what it imports included)."""
    err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stderr
    rows = [line.split("|") for line in err.splitlines() if line.startswith("import time:")]
    rows = [r for r in rows if len(r) == 3 and r[1].strip().isdigit()]
    packages: Counter[str] = Counter()
    own: Counter[str] = Counter()  # Lantern's modules, by their own time
    for self_us, cumulative, name in rows:
        name = name.strip()
        if name.startswith("lantern."):
            own[name] = int(self_us.rpartition(":")[2])
        elif "." not in name and name != "lantern" and name not in packages:
            packages[name] = int(cumulative)

    def ms(counts: Counter[str], n: int) -> str:
        return ", ".join(f"{name} {us / 1000:.0f}" for name, us in counts.most_common(n))

    return (
        f"{len(rows)} modules imported; packages (ms, cumulative): {ms(packages, 5)}; "
        f"Lantern's {len(own)} modules {sum(own.values()) / 1000:.0f} ms of their own, "
        f"most: {ms(own, 3)}"
    )


# --- the run -----------------------------------------------------------------------------

FIGURES = ("search", "list", "find_symbol", "find_references", "outline", "serve", "server")


async def tool_figures(p: Profile, rounds: Rounds, only: set[str], report: Report) -> None:
    ws = Workspace([p.root])
    code = ws if p.code_root == p.root else Workspace([p.code_root])
    steps: list[tuple[str, str, Workspace, Callable[..., Awaitable[None]]]] = [
        ("search", "search vs rg", ws, search_figures),
        ("list", "list_files vs rg --files", ws, list_figures),
        ("find_symbol", "find_symbol vs rg -w (cold parse cache)", code, find_symbol_figure),
        ("find_references", "find_references vs rg -w (cold)", code, find_references_figure),
        ("outline", "outline (cold)", code, outline_figures),
    ]
    for key, title, workspace, run in steps:
        if key in only:
            _head(title)
            await run(p, workspace, rounds, report)


def summary(report: Report, p: Profile, command: str) -> None:
    print("\nsummary (Markdown)\n")
    print(f"`{command}` — {p.label}; load average {_load()} at the end\n")
    print("| figure | Lantern | baseline | wall ratio | CPU ratio | goal | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in report.entries:
        if isinstance(row, Fact):
            print(f"| {row.figure} | {row.value} | | | | {row.goal} | {row.verdict} |")
            continue
        if row.detail:
            continue
        goal = f"≤ {row.goal:g}×" if row.goal is not None else ""
        name = f"↳ {row.figure}" if row.sub else row.figure
        print(
            f"| {name} | {row.lantern.wall * 1000:,.1f} ms | {row.baseline}: "
            f"{row.base.wall * 1000:,.1f} ms | {row.lantern.wall / row.base.wall:.2f}× | "
            f"{row.lantern.cpu / row.base.cpu:.2f}× | {goal} | {row.verdict()} |"
        )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--kernel", action="store_true", help="the Linux kernel tree")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per figure")
    parser.add_argument(
        "--slow-rounds",
        type=int,
        help="timed rounds of find_symbol, find_references and the folder outline "
        "(--rounds; 2 with --kernel)",
    )
    parser.add_argument("--only", nargs="+", choices=FIGURES, help="only these figures")
    parser.add_argument("--serve-calls", type=int, default=200, help="navigation calls to serve")
    parser.add_argument("--server-runs", type=int, default=10, help="start-up runs per kind")
    parser.add_argument("--questions", type=int, default=20, help="questions for the RSS figure")
    parser.add_argument(
        "--cache",
        type=Path,
        default=kernel_tree.DEFAULT_CACHE,
        help="the kernel tree's cache folder",
    )
    parser.add_argument(
        "--data", type=Path, default=HERE / ".data", help="the generated tree's cache folder"
    )
    args = parser.parse_args(argv)
    rounds = Rounds(args.rounds, args.slow_rounds or (2 if args.kernel else args.rounds))
    if min(rounds.quick, rounds.slow) < 1:
        parser.error("--rounds and --slow-rounds must be at least 1")
    only = set(args.only or FIGURES)
    args.data.mkdir(parents=True, exist_ok=True)
    p = kernel_profile(args.cache) if args.kernel else tree_profile(args.data.resolve())
    version = tools_bench.run_rg(["--version"]).decode().splitlines()[0]
    print(f"python {sys.version.split()[0]} | cores {os.cpu_count()} | {version}")
    where = p.root if p.code_root == p.root else f"{p.root} and {p.code_root}"
    print(
        f"tree: {where} ({p.label}) | {rounds.quick} timed rounds after a warm-up "
        f"({rounds.slow} for the slow figures), medians"
    )
    print(f"load average before: {_load()}", flush=True)
    started = time.perf_counter()
    report = Report()
    asyncio.run(tool_figures(p, rounds, only, report))
    with tempfile.TemporaryDirectory(prefix="lantern-scale-") as tmp:
        if "serve" in only:
            print(f"\nserve session over {p.code_root.name}", flush=True)
            (Path(tmp) / "serve").mkdir()
            serve_session(p, args.serve_calls, Path(tmp) / "serve", report)
        if "server" in only:
            (Path(tmp) / "server").mkdir()
            server_figures(args.server_runs, args.questions, Path(tmp) / "server", report)
    print(f"\ntook {time.perf_counter() - started:.0f} s; load average after: {_load()}")
    shown = ["python benchmarks/scale_bench.py", *(argv if argv is not None else sys.argv[1:])]
    summary(report, p, " ".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
