#!/usr/bin/env python3
"""Benchmark the agent loop's own overhead and the tool output it sends the model.

    .venv/bin/python benchmarks/loop_bench.py [--repeat N] [--warmup W] [--profile]
                                              [--keep-nagle]

Everything runs in one process against the scripted fake OpenAI server
(tests/fakes/openai_server.py), which answers instantly. Three figures:

1. Overhead per model turn: `Agent.ask` on a question whose script is one plain text
   answer, minus a raw `openai.AsyncOpenAI` streaming call that replays the very request
   body Lantern sent (same bytes, same fake-server work, same process, same event loop).
   What is left is Lantern's own time: system prompt, history, request building, stream
   assembly, events, audit log, references.
2. Overhead per tool round trip: a question scripted as one read_file call then an answer,
   minus two raw SDK turns replaying Lantern's two request bodies: argument parsing and
   validation, the approval gate (`Fixed(ALLOW_ONCE)`), the jailed read, bookkeeping, audit.
   The tool's own time (`ToolCallRecord.ms`) is shown next to it. The same again with
   `toolProtocol = "text"` (the call written as `<tool_call>` markup in the reply, the result
   sent back as a user message): the text tool protocol's parsing and rendering on top.
3. Bytes of tool output the model receives for a fixed, well-behaved script (a search,
   then three focused read_file windows around the hits) on a generated repository,
   against a naive reader that sends each file it reads whole, `cat -n` style.

Lantern and baseline runs are interleaved (and their order alternated) and the overhead
is the median of the paired differences, so drift cancels out. Next to each wall-clock
overhead, an "event-loop thread CPU only" row gives the same difference in
`time.thread_time()` of the thread that runs the loop: it leaves out the fake server's
threads and any waiting, so it stays steady on a busy machine where wall times jitter.
The fake server is run with TCP_NODELAY (see `answer_instantly`; `--keep-nagle` turns that
off and shows ~40 ms of delayed-ACK stall per streamed turn). The script exits 0;
"MISS" rows are the thing to look at (rerun with --profile for a cProfile of the loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import cProfile
import io
import json
import os
import platform
import pstats
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT, REPO_ROOT / "server"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import openai  # noqa: E402
from lantern.agent.conversation import Conversation  # noqa: E402
from lantern.agent.loop import Agent, AskResult  # noqa: E402
from lantern.agent.provider.client import ModelClient  # noqa: E402
from lantern.approvals.approver import Decision, Fixed  # noqa: E402
from lantern.audit import AuditLog  # noqa: E402
from lantern.settings.model import Settings  # noqa: E402
from lantern.workspace.roots import Workspace  # noqa: E402

from tests.fakes import openai_server  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

SEED = 20240917
GOAL_OVERHEAD_MS = 5.0
GOAL_BYTES_RATIO = 0.50
TARGET_FUNCTION = "resolve_shard_quota"
ANSWER = "It is defined in `src/billing/quota.py` and called from the scheduler and the API."
READ_FILE = "src/storage/segments.py"
READ_OFFSET = 100
READ_LIMIT = 40

Script = list[dict[str, Any]]


# --- the generated repository -------------------------------------------------------------

_WORD_TEXT = (
    "account address agent alias allocate apply archive asset attach audit backend balance "
    "batch bind block bucket buffer builder bundle cache callback cancel capture channel check "
    "chunk client clock cluster codec collect column commit config connect context counter "
    "cursor decode default delta deploy detect device digest dispatch document domain draft "
    "driver emit encode engine entry event export extract factory feature fetch field filter "
    "flush format frame gateway graph group guard header health hook index input insert invoice "
    "item job journal kernel label layer ledger limit listener loader lookup manifest mapper "
    "marker matrix merge message metric module monitor node notify object offset option order "
    "output packet page parse partition patch payload peer pipeline plugin policy pool prefix "
    "probe process profile project proxy query queue quota range reader record reducer region "
    "registry release render replica report resolve resource result route runner sample schema "
    "scope segment sender session shard signal snapshot socket source span stage state status "
    "storage stream subject summary symbol table target task tenant thread timer topic trace "
    "tracker transform tree trigger update upload user value vector version view visit volume "
    "watch widget window worker writer"
)
WORDS = tuple(_WORD_TEXT.split())
TYPES = ("str", "int", "bool", "float", "bytes", "list[str]", "dict[str, int]", "None")
IMPORTS = (
    "import asyncio",
    "import json",
    "import logging",
    "import os",
    "import time",
    "from collections.abc import Iterable, Mapping, Sequence",
    "from dataclasses import dataclass, field",
    "from pathlib import Path",
    "from typing import Any",
)

# (path, lines): 15 files of 300-1,500 lines. The target function is defined in quota.py
# and called from three other files (one of them twice).
FILES: tuple[tuple[str, int], ...] = (
    ("src/billing/quota.py", 820),
    ("src/billing/invoices.py", 1140),
    ("src/billing/__init__.py", 310),
    ("src/scheduler/planner.py", 1460),
    ("src/scheduler/queue.py", 640),
    ("src/scheduler/workers.py", 980),
    ("src/api/handlers.py", 1220),
    ("src/api/routes.py", 430),
    ("src/api/schemas.py", 760),
    ("src/storage/segments.py", 1500),
    ("src/storage/replicas.py", 900),
    ("src/storage/cache.py", 540),
    ("src/core/config.py", 370),
    ("src/core/events.py", 1050),
    ("src/core/metrics.py", 690),
)
DEFINED_IN = "src/billing/quota.py"
CALLED_FROM = ("src/scheduler/planner.py", "src/api/handlers.py", "src/storage/replicas.py")


def _name(rng: random.Random, parts: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(parts))


def _sentence(rng: random.Random, low: int = 5, high: int = 12) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))
    return text[0].upper() + text[1:] + "."


def _statement(rng: random.Random, names: Sequence[str], indent: str) -> list[str]:
    a, b = rng.choice(names), rng.choice(names)
    kind = rng.randrange(10)
    if kind == 0:
        return [f"{indent}# {_sentence(rng)}"]
    if kind == 1:
        return [
            f"{indent}if {a} is None or not {b}:",
            f'{indent}    raise ValueError(f"{_name(rng)}: {{{a}!r}} is not valid")',
        ]
    if kind == 2:
        item = _name(rng, 1)
        return [
            f"{indent}for {item} in {a}:",
            f"{indent}    {b}.append(self._{_name(rng)}({item}, limit={rng.randint(1, 512)}))",
        ]
    if kind == 3:
        return [f'{indent}log.debug("{_name(rng)} %s -> %s", {a}, {b})']
    if kind == 4:
        return [
            f"{indent}try:",
            f"{indent}    {a} = json.loads({b})",
            f"{indent}except (ValueError, KeyError) as exc:",
            f'{indent}    log.warning("could not {_name(rng, 1)} {_name(rng, 1)}: %s", exc)',
            f"{indent}    {a} = {{}}",
        ]
    if kind == 5:
        return [f"{indent}{a} = {{k: v for k, v in {b}.items() if v is not None}}"]
    if kind == 6:
        return [f"{indent}{a} = await self.{_name(rng)}({b}, timeout={rng.randint(1, 30)}.0)"]
    if kind == 7:
        return [
            f"{indent}with self._lock:",
            f"{indent}    self.{_name(rng)}[{a}] = time.monotonic() - {b}",
        ]
    if kind == 8:
        return [f"{indent}{a} = {b}[{rng.randint(0, 8)}:{rng.randint(9, 64)}] + {a}"]
    return [f"{indent}{a} = {_name(rng)}({b}, {_name(rng, 1)}={rng.choice(('True', 'False'))})"]


def _function(rng: random.Random, name: str, indent: str, method: bool) -> list[str]:
    params = [_name(rng, 1) + "_" + rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
    signature = ", ".join(f"{p}: {rng.choice(TYPES)}" for p in params)
    if method:
        signature = "self, " + signature
    prefix = "async def" if rng.random() < 0.3 else "def"
    lines = [
        f"{indent}{prefix} {name}({signature}) -> {rng.choice(TYPES)}:",
        f'{indent}    """{_sentence(rng)}',
        "",
        f"{indent}    {_sentence(rng, 8, 16)}",
        f'{indent}    """',
    ]
    names = [*params, "result", "pending"]
    lines += [f"{indent}    result: list[Any] = []", f"{indent}    pending = {params[0]}"]
    for _ in range(rng.randint(3, 14)):
        lines += _statement(rng, names, indent + "    ")
    lines.append(f"{indent}    return result")
    return lines


def _call_site(rng: random.Random, indent: str) -> list[str]:
    return [
        f"{indent}# Every shard gets at most its tenant's share of the quota.",
        f"{indent}quota = {TARGET_FUNCTION}(tenant, shard_id, now=time.monotonic())",
        f"{indent}if quota.exhausted:",
        f'{indent}    log.info("shard %s is over quota; deferring", shard_id)',
        f"{indent}    return None",
    ]


def _definition() -> list[str]:
    return [
        "def resolve_shard_quota(tenant: Tenant, shard_id: int, *, now: float) -> Quota:",
        '    """The quota one shard of `tenant` may use right now.',
        "",
        "    The tenant's monthly quota is split evenly across its active shards; a shard",
        "    that was idle for a full window gets its unused share back.",
        '    """',
        "    active = [s for s in tenant.shards if s.active or s.id == shard_id]",
        "    share = tenant.monthly_quota // max(1, len(active))",
        "    used = tenant.usage.get(shard_id, 0)",
        "    if now - tenant.last_seen.get(shard_id, now) > QUOTA_WINDOW_S:",
        "        used = 0",
        "    return Quota(limit=share, used=used, exhausted=used >= share)",
    ]


def generate_module(path: str, target_lines: int, rng: random.Random) -> str:
    lines = [f'"""{_sentence(rng, 6, 10)}', "", _sentence(rng, 10, 18), '"""', ""]
    lines += ["from __future__ import annotations", ""]
    lines += sorted(rng.sample(IMPORTS, rng.randint(4, len(IMPORTS))))
    if path in CALLED_FROM:
        lines.append(f"from src.billing.quota import {TARGET_FUNCTION}")
    lines += ["", "log = logging.getLogger(__name__)", ""]
    for _ in range(rng.randint(2, 5)):
        lines.append(f"{_name(rng).upper()} = {rng.randint(1, 10_000)}")
    lines.append("QUOTA_WINDOW_S = 3600.0" if path == DEFINED_IN else "")
    lines.append("")
    # Where to plant the definition / the call sites: at fixed fractions of the file.
    plant_at = {DEFINED_IN: [0.55]}.get(path, [])
    if path in CALLED_FROM:
        plant_at = [0.3, 0.75] if path == CALLED_FROM[0] else [0.6]
    while len(lines) < target_lines - 12:
        if plant_at and len(lines) >= plant_at[0] * target_lines:
            plant_at.pop(0)
            if path == DEFINED_IN:
                lines += ["", *_definition(), ""]
            else:
                lines += ["", f"def {_name(rng)}(tenant: Tenant, shard_id: int) -> Any:"]
                lines += _call_site(rng, "    ")
                lines += ["    return tenant", ""]
            continue
        if rng.random() < 0.4:
            lines += ["", "", "@dataclass", f"class {_name(rng).title().replace('_', '')}:"]
            lines.append(f'    """{_sentence(rng)}"""')
            lines.append("")
            for _ in range(rng.randint(2, 5)):
                lines.append(f"    {_name(rng)}: {rng.choice(TYPES)} = field(default=None)")
            for _ in range(rng.randint(1, 3)):
                lines += ["", *_function(rng, _name(rng), "    ", method=True)]
        else:
            lines += ["", "", *_function(rng, _name(rng), "", method=False)]
    while len(lines) < target_lines:
        lines.append(f"# {_sentence(rng)}")
    return "\n".join(lines[:target_lines]) + "\n"


def generate_repo(root: Path) -> None:
    rng = random.Random(SEED)
    for path, count in FILES:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(generate_module(path, count, rng), encoding="utf-8")
    (root / "README.md").write_text("# shardkeeper\n\nA generated benchmark repo.\n")


def find_hits(root: Path, pattern: str) -> list[tuple[str, int]]:
    """(path, line) of every line matching `pattern`, the way the model will see them."""
    regex = re.compile(pattern, re.IGNORECASE)
    hits: list[tuple[str, int]] = []
    for path, _ in sorted(FILES):
        text = (root / path).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                hits.append((path, number))
    return hits


def cat_n_bytes(text: str) -> int:
    """What `cat -n FILE` prints: a 6-wide right-aligned number, a tab, the line."""
    return sum(
        len(f"{number:6d}\t{line}\n".encode())
        for number, line in enumerate(text.splitlines(), start=1)
    )


def answer_instantly(enabled: bool) -> None:
    """Turn off Nagle's algorithm on the fake server's sockets (TCP_NODELAY).

    The fake writes each SSE event with its own send(); with Nagle on, every streamed
    turn stalls ~40 ms on the client's delayed ACK (Linux), for Lantern and the baseline
    alike. That cancels out of the difference but buries it in ±40 ms of noise, and real
    servers (uvicorn, vLLM, llama.cpp) set TCP_NODELAY. `--keep-nagle` restores it.
    Only this process's class attribute changes; tests/fakes is not edited.
    """
    openai_server._Handler.disable_nagle_algorithm = enabled


# --- timing helpers ---------------------------------------------------------------------------


@dataclass
class Samples:
    """Milliseconds per measured run; `cpu_*` is CPU time of the event-loop thread only."""

    lantern: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    diff: list[float] = field(default_factory=list)
    cpu_lantern: list[float] = field(default_factory=list)
    cpu_raw: list[float] = field(default_factory=list)
    cpu_diff: list[float] = field(default_factory=list)
    tool: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Took:
    wall: float  # seconds, perf_counter
    cpu: float  # seconds, thread_time of the event-loop thread (excludes the fake's thread)


class Clock:
    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()

    def took(self) -> Took:
        return Took(time.perf_counter() - self.wall, time.thread_time() - self.cpu)


def ms(seconds: float) -> float:
    return seconds * 1000.0


def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p90(values: Sequence[float]) -> float:
    if len(values) < 2:
        return med(values)
    return statistics.quantiles(values, n=10)[-1]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


class Bench:
    def __init__(self, workspace_dir: Path, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.workspace = Workspace([workspace_dir])
        self.model = ModelClient(model="fake-model", base_url=fake.base_url, api_key="x")
        self.agent = Agent(
            model=self.model,
            workspace=self.workspace,
            approvals=Fixed(Decision.ALLOW_ONCE),
            audit=AuditLog(workspace=self.workspace.name, workspace_key=self.workspace.key),
        )
        self.text_agent = Agent(
            model=self.model,
            workspace=self.workspace,
            approvals=Fixed(Decision.ALLOW_ONCE),
            settings=Settings().model_copy(update={"tool_protocol": "text"}),
            audit=self.agent.audit,
        )
        # The baseline: the bare SDK, configured like ModelClient's (timeouts, retries).
        self.raw = openai.AsyncOpenAI(
            base_url=fake.base_url,
            api_key="x",
            timeout=openai.Timeout(120.0, connect=10.0),
            max_retries=2,
        )

    async def close(self) -> None:
        await self.model.close()
        await self.raw.close()

    async def ask(
        self, question: str, script: Script, text: bool = False
    ) -> tuple[Took, AskResult, list[Any]]:
        """One Lantern question on a fresh conversation; its time and request bodies."""
        before = len(self.fake.chat_requests())
        self.fake.add_turns(script)
        events: list[Any] = []
        agent = self.text_agent if text else self.agent
        clock = Clock()
        result = await agent.ask(question, Conversation(), events.append)
        elapsed = clock.took()
        if result.stop_reason != "done":
            raise RuntimeError(f"question ended with {result.stop_reason}: {result.error}")
        bodies = self.fake.chat_requests()[before:]
        if len(bodies) != len(script) or self.fake.turns_left:
            raise RuntimeError(f"expected {len(script)} model turns, saw {len(bodies)}")
        return elapsed, result, bodies

    async def raw_turns(self, bodies: Sequence[dict[str, Any]], script: Script) -> Took:
        """The same requests through the bare SDK: send, stream every chunk, close."""
        self.fake.add_turns(script)
        requests = copy.deepcopy(list(bodies))  # outside the clock
        clock = Clock()
        for body in requests:
            stream = await self.raw.chat.completions.create(**body)
            async for _chunk in stream:
                pass
            await stream.close()
        elapsed = clock.took()
        if self.fake.turns_left:
            raise RuntimeError("baseline left scripted turns unused")
        return elapsed

    async def measure(
        self, question: str, script: Script, repeat: int, warmup: int, text: bool = False
    ) -> Samples:
        _, _, bodies = await self.ask(question, script, text)
        samples = Samples()
        for i in range(warmup + repeat):
            # Alternate which side goes first so neither always runs on a warmer loop.
            if i % 2:
                raw = await self.raw_turns(bodies, script)
                took, result, got = await self.ask(question, script, text)
            else:
                took, result, got = await self.ask(question, script, text)
                raw = await self.raw_turns(bodies, script)
            # (The text protocol's call ids and result fences are fresh each run.)
            if got != bodies and not text:
                raise RuntimeError("Lantern's request bodies changed between runs")
            if i < warmup:
                continue
            samples.lantern.append(ms(took.wall))
            samples.raw.append(ms(raw.wall))
            samples.diff.append(ms(took.wall - raw.wall))
            samples.cpu_lantern.append(ms(took.cpu))
            samples.cpu_raw.append(ms(raw.cpu))
            samples.cpu_diff.append(ms(took.cpu - raw.cpu))
            samples.tool.extend(call.ms for call in result.tool_calls)
        return samples


# --- the three measurements ---------------------------------------------------------------


def plain_script() -> Script:
    return [{"content": ANSWER}]


def tool_script() -> Script:
    args = {"path": READ_FILE, "offset": READ_OFFSET, "limit": READ_LIMIT}
    return [
        {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": args}]},
        {"content": ANSWER},
    ]


def text_tool_script() -> Script:
    args = {"path": READ_FILE, "offset": READ_OFFSET, "limit": READ_LIMIT}
    call = json.dumps({"name": "read_file", "arguments": args})
    return [{"content": f"<tool_call>{call}</tool_call>"}, {"content": ANSWER}]


def focused_script(root: Path) -> tuple[Script, list[tuple[str, int, int]]]:
    """search, then 3 read_file windows around hits in 3 different files, then the answer."""
    hits = find_hits(root, TARGET_FUNCTION)
    chosen: list[tuple[str, int]] = []
    definition = next(h for h in hits if h[0] == DEFINED_IN and h[1] > 30)
    chosen.append(definition)
    for path, line in hits:
        if len(chosen) == 3:
            break
        if path in CALLED_FROM and path not in {p for p, _ in chosen} and line > 30:
            chosen.append((path, line))
    windows: list[tuple[str, int, int]] = []
    for path, line in chosen:
        # The definition: from just above it; a call site: some context on both sides.
        offset, limit = (line - 2, 20) if path == DEFINED_IN else (line - 15, 30)
        windows.append((path, offset, limit))
    script: Script = [
        {"tool_calls": [{"id": "s1", "name": "search", "arguments": {"pattern": TARGET_FUNCTION}}]},
        {
            "tool_calls": [
                {
                    "id": f"r{i}",
                    "name": "read_file",
                    "arguments": {"path": path, "offset": offset, "limit": limit},
                }
                for i, (path, offset, limit) in enumerate(windows, start=1)
            ]
        },
        {"content": ANSWER},
    ]
    return script, windows


async def tool_bytes(bench: Bench, root: Path) -> dict[str, Any]:
    script, windows = focused_script(root)
    _, result, bodies = await bench.ask(f"Where is {TARGET_FUNCTION} used?", script)
    messages = bodies[-1]["messages"]
    tool_messages = [m for m in messages if m.get("role") == "tool"]
    per_call = {m["tool_call_id"]: len(str(m["content"]).encode()) for m in tool_messages}
    search_text = next(str(m["content"]) for m in tool_messages if m["tool_call_id"] == "s1")
    for path, offset, limit in windows:
        # A well-behaved model reads only where the search pointed it.
        if not any(f"{path}:{n}:" in search_text for n in range(offset, offset + limit)):
            raise RuntimeError(f"search output has no hit in {path} lines {offset}+{limit}")
    files = sorted({path for path, _, _ in windows})
    naive = sum(cat_n_bytes((root / path).read_text(encoding="utf-8")) for path in files)
    for call in result.tool_calls:
        if call.status != "done":
            raise RuntimeError(f"tool call {call.id} ended {call.status} ({call.code})")
    return {
        "windows": windows,
        "per_call": per_call,
        "total": sum(per_call.values()),
        "naive": naive,
        "files": files,
        "search_text": search_text,
    }


async def run_profile(bench: Bench, question: str, script: Script, runs: int) -> str:
    """cProfile of `runs` Lantern questions, then of the raw SDK replaying the same turns.

    Only the event-loop thread is profiled (not the fake server's threads).
    """
    _, _, bodies = await bench.ask(question, script)
    lantern, raw = cProfile.Profile(), cProfile.Profile()
    for _ in range(runs):
        bench.fake.add_turns(script)
        lantern.enable()
        await bench.agent.ask(question, Conversation(), lambda _event: None)
        lantern.disable()
        bench.fake.add_turns(script)
        requests = copy.deepcopy(bodies)
        raw.enable()
        for body in requests:
            stream = await bench.raw.chat.completions.create(**body)
            async for _chunk in stream:
                pass
            await stream.close()
        raw.disable()
    out = io.StringIO()
    lantern_stats = pstats.Stats(lantern, stream=out)
    raw_stats = pstats.Stats(raw, stream=out)
    per_l = ms(lantern_stats.total_tt) / runs  # type: ignore[attr-defined]
    per_r = ms(raw_stats.total_tt) / runs  # type: ignore[attr-defined]
    extra = per_l - per_r
    out.write(
        f"profiled CPU per question (profiler overhead included): Lantern {per_l:.2f} ms, "
        f"raw SDK {per_r:.2f} ms, difference {extra:.2f} ms\n\n"
        "Lantern's own functions, cumulative ms per question (nested rows overlap; the "
        "share is of the difference above; rows that wrap SDK calls are left out; a "
        "coroutine's calls count each resume):\n"
    )
    raw_entries: dict[Any, Any] = lantern_stats.stats  # type: ignore[attr-defined]
    rows: list[tuple[float, float, int, str]] = []
    for (filename, line, func), (_cc, calls, tottime, cumtime, _callers) in raw_entries.items():
        if func in _WRAPS_SDK:
            continue
        if "server/lantern" in filename:
            where = filename.split("server/", 1)[1]
        elif filename.endswith("asyncio/timeouts.py"):
            where = "asyncio/timeouts.py"  # Lantern's per-chunk asyncio.timeout
        else:
            continue
        rows.append((ms(cumtime) / runs, ms(tottime) / runs, calls, f"{where}:{line}({func})"))
    rows.sort(reverse=True)
    out.write(f"   {'cum ms':>7} {'share':>6} {'own ms':>7} {'calls':>6}  function\n")
    for cum, own, calls, name in rows[:22]:
        share = cum / extra if extra > 0 else float("nan")
        out.write(f"   {cum:7.3f} {share:6.0%} {own:7.3f} {calls // runs:6}  {name}\n")
    out.write("\n== Lantern side, everything, by own time ==\n")
    lantern_stats.sort_stats("tottime").print_stats(20)
    out.write("\n== raw SDK baseline, everything, by own time ==\n")
    raw_stats.sort_stats("tottime").print_stats(10)
    return out.getvalue()


# Lantern functions whose cumulative time is mostly the SDK's own (the baseline has it too).
_WRAPS_SDK = frozenset(
    {"ask", "_loop", "_model_turn", "complete", "_stream", "_create", "<lambda>", "on_text"}
)


def report(label: str, values: Sequence[float], goal: float | None = None) -> None:
    line = f"   {label:42} median {med(values):7.2f} ms   p90 {p90(values):7.2f} ms"
    if goal is not None:
        line += f"   goal <= {goal:g} ms   {verdict(med(values) <= goal)}"
    print(line)


def report_overhead(m: Samples, same: str, per: str) -> None:
    """The four rows each scenario shares: Lantern, the bare stream, their gap against the
    goal, and that gap in event-loop CPU."""
    report("Agent.ask", m.lantern)
    report(f"raw AsyncOpenAI stream, same {same}", m.raw)
    report(f"Lantern overhead per {per}", m.diff, GOAL_OVERHEAD_MS)
    report("  same, event-loop thread CPU only", m.cpu_diff)


async def main_async(args: argparse.Namespace, workdir: Path) -> None:
    repo = workdir / "repo"
    generate_repo(repo)
    sizes = [len((repo / p).read_text().splitlines()) for p, _ in FILES]
    print(
        f"repo: {len(FILES)} Python files, {min(sizes)}-{max(sizes)} lines, "
        f"{sum((repo / p).stat().st_size for p, _ in FILES):,} bytes (generated in a temp dir)"
    )
    print(
        f"python {platform.python_version()}, openai {openai.__version__}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
        f"{args.repeat} runs per figure after {args.warmup} warm-up runs; fake server "
        f"TCP_NODELAY {'off (--keep-nagle)' if args.keep_nagle else 'on'}\n"
    )
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load > cpus:
        print(
            f"NOTE: this machine is oversubscribed (load {load:.1f} on {cpus} CPUs): wall-clock "
            "differences are inflated roughly by load/CPUs and jitter; the 'event-loop thread "
            "CPU only' rows are the steadier measure.\n"
        )
    answer_instantly(not args.keep_nagle)
    fake = FakeOpenAI().start()
    bench = Bench(repo, fake)
    tool_question = "What does the segment writer do?"
    try:
        plain = await bench.measure("What does this project do?", plain_script(), **vars_of(args))
        tool = await bench.measure(tool_question, tool_script(), **vars_of(args))
        text = await bench.measure(tool_question, text_tool_script(), **vars_of(args), text=True)
        sent = await tool_bytes(bench, repo)
        profile_text = ""
        if args.profile:
            profile_text = await run_profile(bench, tool_question, tool_script(), args.repeat)
    finally:
        await bench.close()
        fake.stop()

    print("1. Overhead per model turn (script: one plain-text answer; 1 model turn)")
    report_overhead(plain, "request", "model turn")
    print()
    print(
        f"2. Overhead per tool round trip (script: read_file {READ_FILE} "
        f"offset={READ_OFFSET} limit={READ_LIMIT}, then an answer; 2 model turns)"
    )
    report_overhead(tool, "2 requests", "tool round trip")
    report("  the tool call itself (ToolCallRecord.ms)", tool.tool)
    print(
        f"   {'  minus row 1 (the tool step alone)':42} median "
        f"{med(tool.diff) - med(plain.diff):7.2f} ms   "
        f"(CPU {med(tool.cpu_diff) - med(plain.cpu_diff):.2f} ms)"
    )
    print()
    print('2b. The same tool round trip with toolProtocol = "text" (the call as markup)')
    report_overhead(text, "2 requests", "tool round trip")
    print()
    ratio = sent["total"] / sent["naive"]
    print(
        f"3. Tool output bytes the model receives (script: search {TARGET_FUNCTION!r}, "
        "then 3 read_file windows around hits, then an answer)"
    )
    for call_id, size in sent["per_call"].items():
        what = (
            f"search pattern={TARGET_FUNCTION}"
            if call_id == "s1"
            else "read_file {} offset={} limit={}".format(*sent["windows"][int(call_id[1:]) - 1])
        )
        print(f"   {call_id:3} {what:55} {size:8,} bytes")
    print(f"   {'Lantern: all tool messages':59} {sent['total']:8,} bytes")
    naive_label = f"naive `cat -n` of the {len(sent['files'])} whole files read"
    print(f"   {naive_label:59} {sent['naive']:8,} bytes")
    print(
        f"   ratio {ratio:.1%}   goal <= {GOAL_BYTES_RATIO:.0%}   "
        f"{verdict(ratio <= GOAL_BYTES_RATIO)}"
    )
    if profile_text:
        print("\n--- cProfile (--profile) ---")
        print(profile_text)


def vars_of(args: argparse.Namespace) -> dict[str, int]:
    return {"repeat": args.repeat, "warmup": args.warmup}


def main(argv: Sequence[str] | None = None) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="lantern-loop-bench-"))
    # Keep the audit log (and anything else platformdirs places) out of the real home.
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(workdir / var.lower())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=150, help="measured runs per figure")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured runs first")
    parser.add_argument(
        "--keep-nagle",
        action="store_true",
        help="leave Nagle's algorithm on in the fake server (adds ~40 ms per streamed turn)",
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the loop")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        asyncio.run(main_async(args, workdir))
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(workdir)
    print(f"\n(total {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
