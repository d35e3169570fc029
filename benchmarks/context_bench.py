#!/usr/bin/env python3
"""Benchmark what Lantern knows of the context window: the token estimate's error against
a server's own count, before and after calibration, and what finding the window costs.

    .venv/bin/python benchmarks/context_bench.py [--conversations N] [--seed S]

The real agent loop (`Agent.ask`) answers conversations of three questions each, over this
repository's own files: each question is one to three `read_file` calls on real files
(a random window of lines) or a `search`, then an answer. The model is in process
(`tests/fakes/scripted_model.py`); every reply reports as `usage.prompt_tokens` what a
server would count for the request it got (`tests/fakes/tokenizer.py`, a stand-in for a
byte-pair tokenizer, deliberately not characters / 4).

1. For every request the estimate Lantern budgets with when it sends it — characters / 4,
times the conversation's calibration so far — is compared with the server's count:

- "uncalibrated": characters / 4 alone, as Lantern estimated before;
- "calibrated": Lantern's estimate now, every request, and every request after the
  conversation's first (the goal: within 10% after the first request).

2. The cost of finding the window: `context_window` against a fake Ollama on 127.0.0.1
   (`tests/fakes/window_answers.py`: `/api/show` and `/api/ps`, byte for byte), the first
   lookup (two requests) and a warm one (remembered for the process), against an empty
   `await` as the floor. Goal: a warm lookup adds no wait (under 0.1 ms).

The script exits 0; a MISS row is the thing to look at.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT, REPO_ROOT / "server"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from lantern.agent.context import Meter  # noqa: E402
from lantern.agent.conversation import Conversation  # noqa: E402
from lantern.agent.loop import Agent  # noqa: E402
from lantern.agent.provider.endpoint import Endpoint  # noqa: E402
from lantern.agent.provider.window import context_window  # noqa: E402
from lantern.agent.reply import ChatTurn, Reply, Usage  # noqa: E402
from lantern.approvals.approver import Decision, Fixed  # noqa: E402
from lantern.settings.model import Settings  # noqa: E402
from lantern.workspace.roots import Workspace  # noqa: E402

from tests.conftest import settings_with  # noqa: E402
from tests.fakes import tokenizer, window_answers  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.scripted_model import Say, ScriptedModel  # noqa: E402

GOAL = 0.10
QUESTIONS = ("Where is the retry logic?", "How is a tool call approved?", "What does it cache?")
PATTERNS = ("def ask", "class .*Error", "compact", "approve", "window", "ripgrep")


@dataclass
class Sample:
    exact: int
    plain: int  # characters / 4
    calibrated: int  # characters / 4 times the calibration when sent
    first: bool  # the conversation's first request


class CountingModel:
    """The scripted model, whose replies report the server's count of each request, and
    which notes Lantern's estimate of that request as it was sent."""

    def __init__(self, inner: ScriptedModel, conv: Conversation, samples: list[Sample]) -> None:
        self.inner, self.conv, self.samples = inner, conv, samples

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, turn: ChatTurn) -> Reply:
        exact = tokenizer.count_request(turn.messages, turn.tools)
        plain = Meter.raw(turn.messages, turn.tools)
        calibrated = round(plain * self.conv.token_ratio)
        self.samples.append(Sample(exact, plain, calibrated, first=False))
        reply = await self.inner.complete(turn)
        completion = tokenizer.count(reply.content)
        reply.usage = Usage(prompt_tokens=exact, completion_tokens=completion)
        return reply


def sources(rng: random.Random) -> list[str]:
    files = [
        p.relative_to(REPO_ROOT).as_posix()
        for folder in ("server/lantern", "docs", "tests/unit")
        for p in (REPO_ROOT / folder).rglob("*")
        if p.suffix in (".py", ".md") and p.stat().st_size > 2000
    ]
    rng.shuffle(files)
    return files


def script(rng: random.Random, files: list[str]) -> list[Say]:
    """One question: one to three reads or a search, then an answer."""
    calls = []
    for n in range(rng.randint(1, 3)):
        if rng.random() < 0.25:
            pattern = rng.choice(PATTERNS)
            calls.append({"id": f"s{n}", "name": "search", "arguments": {"pattern": pattern}})
        else:
            path = files.pop()
            window = {"offset": rng.randint(1, 60), "limit": rng.choice((40, 80, 200))}
            calls.append(
                {"id": f"r{n}", "name": "read_file", "arguments": {"path": path, **window}}
            )
    answer = " ".join(f"See {c['arguments'].get('path', 'src')}:1." for c in calls)
    return [Say(tool_calls=calls), Say(content=f"{answer} It is done there.")]


async def conversation(rng: random.Random, files: list[str], samples: list[Sample]) -> None:
    conv = Conversation()
    first = len(samples)
    model = CountingModel(ScriptedModel(), conv, samples)
    agent = Agent(
        model=model,
        workspace=Workspace([REPO_ROOT]),
        approvals=Fixed(Decision.ALLOW_ONCE),
        settings=settings_with(max_context_tokens=200_000, project_instructions=False),
    )
    for question in QUESTIONS:
        model.inner.add(*script(rng, files))
        await agent.ask(question, conv)
    for index, sample in enumerate(samples[first:]):
        sample.first = index == 0


def error(estimate: int, exact: int) -> float:
    return abs(estimate - exact) / exact


def row(label: str, errors: list[float], goal: float | None = None) -> str:
    ordered = sorted(errors)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    line = (
        f"   {label:<44} median {statistics.median(ordered) * 100:5.1f}%"
        f"   p90 {p90 * 100:5.1f}%   max {ordered[-1] * 100:5.1f}%   ({len(ordered)} requests)"
    )
    if goal is not None:
        verdict = "PASS" if statistics.median(ordered) <= goal else "MISS"
        line += f"   goal median <= {goal * 100:.0f}%   {verdict}"
    return line


async def main_async(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    files = sources(rng)
    samples: list[Sample] = []
    started = time.perf_counter()
    for _ in range(args.conversations):
        await conversation(rng, files, samples)
    later = [s for s in samples if not s.first]
    print(f"{args.conversations} conversations, {len(samples)} requests, real repository files")
    print("1. The estimate of a request against the server's count (|estimate - count| / count)")
    print(
        row(
            "characters / 4 (uncalibrated), every request",
            [error(s.plain, s.exact) for s in samples],
        )
    )
    print(row("calibrated, every request", [error(s.calibrated, s.exact) for s in samples]))
    print(
        row(
            "calibrated, after the first request",
            [error(s.calibrated, s.exact) for s in later],
            GOAL,
        )
    )
    print("2. Finding the window (Ollama on 127.0.0.1: /api/show and /api/ps)")
    cold, warm, floor = await discovery_times(args.lookups)
    print(f"   first lookup (two requests)                 median {cold * 1000:7.2f} ms")
    print(f"   warm lookup (remembered)                    median {warm * 1000:7.4f} ms")
    print(f"   an empty await (the floor)                  median {floor * 1000:7.4f} ms")
    verdict = "PASS" if warm - floor < 0.0001 else "MISS"
    print(
        f"   added wait, warm                            {max(warm - floor, 0) * 1000:.4f} ms"
        f"   goal < 0.1 ms   {verdict}"
    )
    print(f"(total {time.perf_counter() - started:.1f} s)")


async def discovery_times(rounds: int) -> tuple[float, float, float]:
    """Median seconds of a first lookup (fresh), of a warm one, and of an empty await."""
    model = "qwen2.5-coder:7b"
    cold: list[float] = []
    warm: list[float] = []
    floor: list[float] = []
    with FakeOpenAI(models=[model]) as fake:
        fake.routes.update(window_answers.ollama(model=model, loaded=8192, trained=32768))
        endpoint = Endpoint(model, fake.base_url, None)
        environ = {"OLLAMA_HOST": f"127.0.0.1:{fake.port}"}
        for _ in range(rounds):
            t0 = time.perf_counter()
            await context_window(endpoint, Settings(), environ, fresh=True)
            t1 = time.perf_counter()
            await context_window(endpoint, Settings(), environ)
            t2 = time.perf_counter()
            await asyncio.sleep(0)
            t3 = time.perf_counter()
            cold.append(t1 - t0)
            warm.append(t2 - t1)
            floor.append(t3 - t2)
    return statistics.median(cold), statistics.median(warm), statistics.median(floor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--lookups", type=int, default=50, help="window lookups of each kind")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
