#!/usr/bin/env python3
"""Time each linear-time family on adversarial input, at two sizes, in a child process.

    python benchmarks/adversarial_bench.py [--size BYTES] [--timeout S] [FAMILY ...]

For every family (tests/adversarial.py makes the inputs) the script times one run
at size/4 and one at size, each in its own process killed after --timeout seconds.
"growth" is the second time over the first: about 4 for a linear pass, 16 for a
quadratic one. "vs base" divides the time at full size by a linear baseline measured
in the same run (`redact` of ordinary code of the same size), so figures taken before
and after a change on a busy machine compare. Always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from tests import adversarial as adv  # noqa: E402


def _redact(text: str) -> Callable[[], object]:
    from lantern.workspace.redact.redactor import redact

    return lambda: redact(text)


def _baseline(size: int) -> Callable[[], object]:
    line = 'def handle(request):  # parse the body\n    value = request.get("name", 42)\n'
    return _redact(line * (size // len(line)))


def _hits(data: bytes) -> Callable[[], object]:
    from lantern.workspace.text import hit_lines

    total = data.count(b"\n")
    return lambda: hit_lines(data, range(max(1, total - 499), total + 1))


def _parse(text: str) -> Callable[[], object]:
    from lantern.agent.protocol.markup import has_markup, parse

    return lambda: (has_markup(text), parse(text))


def _stream(chunks: list[str], *, hold: bool = True) -> Callable[[], object]:
    from lantern.agent.protocol.think import ContentFilter

    def run() -> object:
        content = ContentFilter(hold_leading=hold)
        for chunk in chunks:
            content.feed(chunk)
        return content.finish()

    return run


def _glob(size: int) -> Callable[[], object]:
    from lantern.workspace.policy import Policy

    policy = Policy([adv.GREEDY_GLOB])
    name = adv.glob_name(min(size, 250))  # a file name is at most 255 bytes
    return lambda: policy.refusal(["src", name])


def _ignore(size: int) -> Callable[[], object]:
    from lantern.workspace.ignore.compiled import CompiledRules

    rules = CompiledRules.parse(f"{adv.GREEDY_GLOB}\nx/**/{adv.GREEDY_GLOB}\n")
    name = adv.glob_name(size)
    return lambda: (rules.verdict((name,), False), rules.verdict(("x", "y", name), False))


def _read_file(data: bytes) -> Callable[[], object]:
    from lantern.workspace.text import window

    total = data.count(b"\n")
    return lambda: window(data, "f.yaml", max(1, total - 300), 400)


FAMILIES: dict[str, Callable[[int], Callable[[], object]]] = {
    "baseline: redact ordinary code": _baseline,
    "yaml nested key: | blocks": lambda n: _redact(adv.yaml_nested(n)),
    "yaml nested plain keys": lambda n: _redact(adv.yaml_plain_nested(n)),
    "read_file near the end (nested yaml)": lambda n: _read_file(adv.yaml_nested(n).encode()),
    "search hits near the end": lambda n: _hits(adv.deep_file(n)),
    "search hits on long lines": lambda n: _hits(adv.long_lines_file(n)),
    "ignore glob *a*a…b (ignore file)": _ignore,
    "deny glob *a*a…b (approval.deny)": _glob,
    "fence + spaces": lambda n: _parse(adv.fence_spaces(n)),
    "fences + spaces in prose": lambda n: _parse(adv.clean_fence_spaces(n)),
    "<function= + spaces": lambda n: _parse(adv.function_spaces(n)),
    "<parameter= unclosed": lambda n: _parse(adv.parameters_unclosed(n)),
    "<function= without >": lambda n: _parse(adv.functions_unclosed(n)),
    "DeepSeek tokens + spaces": lambda n: _parse(adv.deepseek_spaces(n)),
    "harmony + spaces": lambda n: _parse(adv.harmony_spaces(n)),
    "Kimi + dots and spaces": lambda n: _parse(adv.kimi_spaces(n)),
    "unreadable <tool_call> blocks": lambda n: _parse(adv.unreadable_blocks(n)),
    "mid-line <think> (stream)": lambda n: _stream([adv.midline_think(n)], hold=False),
    "mid-line <think> (chunks)": lambda n: _stream(
        [adv.midline_think(n)[i : i + 64] for i in range(0, n, 64)], hold=False
    ),
    "no </think> (reasoning model)": lambda n: _stream(adv.think_unclosed(n)),
    "leading spaces (reasoning model)": lambda n: _stream(adv.spaces_unclosed(n)),
    **{
        f"redact run: {name}": (lambda n, name=name: _redact(adv.redact_run(name, n)))
        for name in adv.REDACT_RUNS
    },
}


def _child(name: str, size: int, out: multiprocessing.Queue[float]) -> None:
    run = FAMILIES[name](size)
    start = time.perf_counter()
    result = run()
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    out.put(time.perf_counter() - start)


def _time(name: str, size: int, timeout: float) -> float | None:
    out: multiprocessing.Queue[float] = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_child, args=(name, size, out))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return out.get() if not out.empty() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("family", nargs="*", help="substrings of family names to run")
    args = parser.parse_args()
    names = [n for n in FAMILIES if not args.family or any(f in n for f in args.family)]
    base = _time("baseline: redact ordinary code", args.size, args.timeout) or float("nan")
    print(f"{'family':44} {'size/4 s':>9} {'size s':>9} {'growth':>7} {'vs base':>8}")
    for name in names:
        small = _time(name, args.size // 4, args.timeout)
        big = _time(name, args.size, args.timeout) if small is not None else None
        show = [f"{t:9.3f}" if t is not None else f">{args.timeout:7.0f}s" for t in (small, big)]
        growth = f"{big / small:7.1f}" if small and big else "      -"
        ratio = f"{big / base:8.2f}" if big is not None else "       -"
        print(f"{name:44} {show[0]} {show[1]} {growth} {ratio}", flush=True)


if __name__ == "__main__":
    main()
