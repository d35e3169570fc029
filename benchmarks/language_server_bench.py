#!/usr/bin/env python3
"""Benchmark find_references through a real language server against tree-sitter alone.

    python benchmarks/language_server_bench.py [--root DIR] [--lookups N] [--repeat R]
                                               [--pyright PATH]

The project is a real one: by default this repository's own `server/` (Lantern's Python
sources). The lookups are `Class.member` names whose member is defined in several classes
there (the most shared first, dunder names left out), found with Lantern's code engine,
so they follow the code as it changes.

Each lookup runs `find_references` twice through `run_tool`, as the model calls it: with no
navigator (tree-sitter only, as the CLI), and with a `Navigator` that asks pyright
(`pyright-langserver --stdio`, from tests/language-servers or --pyright) for the
references of the definition the engine found, over stdio JSON-RPC (pygls's client), and
passes its reply through `checked_answer` as the server does a client's. One hop fewer
than an editor: no `lantern/navigate` round trip through VS Code or Neovim.

Both modes keep their own parse cache, as a conversation does. One warm-up round (pyright
analyses the project on its first request), then R rounds in which the two modes take
turns (their order swapped every round); medians are printed per lookup, with the number
of uses each lists, and the ratio to the tree-sitter time of the same run. Ratios are
never asserted; the script exits 0 unless pyright cannot be started.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lantern.approvals.approver import Decision, Fixed
from lantern.code.cache import ParseCache
from lantern.code.definitions import definitions
from lantern.lsp.navigator import checked_answer
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.navigator import NavAnswer
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
PYRIGHT = REPO / "tests" / "language-servers" / "node_modules" / ".bin" / "pyright-langserver"
REQUEST_TIMEOUT_S = 120.0  # a bound on a hang; a slow answer is measured, not dropped
CONVERTER = get_converter()


class PyrightNavigator:
    """`lantern.tools.navigator.Navigator` answered by pyright over stdio."""

    timeout_s = REQUEST_TIMEOUT_S

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.longest = 0.0  # the longest request since the last reset, in seconds

    def offers(self, op: str) -> bool:
        return op == "references"

    async def navigate(
        self, op: str, path: str, line: int, column: int, line_text: str
    ) -> NavAnswer | None:
        # pyright counts columns in UTF-16 code units (it negotiates no other encoding).
        character = len(line_text[:column].encode("utf-16-le")) // 2
        params = types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=Path(path).as_uri()),
            position=types.Position(line=line - 1, character=character),
            context=types.ReferenceContext(include_declaration=True),
        )
        started = time.perf_counter()
        async with asyncio.timeout(self.timeout_s):
            found = await self.client.text_document_references_async(params)
        self.longest = max(self.longest, time.perf_counter() - started)
        wire = {"source": "pyright", "locations": CONVERTER.unstructure(found or [])}
        return checked_answer(wire)

    async def workspace_symbols(self, query: str) -> NavAnswer | None:
        return None  # not offered: only `references` is measured


async def start_pyright(command: str, root: Path) -> LanguageClient:
    client = LanguageClient("lantern-bench", "1")

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(params: types.ConfigurationParams) -> list[Any]:
        return [None for _ in params.items]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def progress(params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def log_message(params: types.LogMessageParams) -> None:
        return None

    await client.start_io(command, "--stdio")
    await client.initialize_async(
        types.InitializeParams(
            process_id=os.getpid(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(configuration=True)
            ),
        )
    )
    client.initialized(types.InitializedParams())
    return client


async def stop_pyright(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def shared_members(root: Path, count: int) -> list[str]:
    """`Class.member` for the `count` members defined in the most classes under `root`
    (ties by name), each named after its first class by path and line."""
    classes: Counter[str] = Counter()
    first: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue  # a virtual environment, a cache: not the project's own
        for definition in definitions(path.read_bytes(), "python"):
            owner, _, member = definition.name.rpartition(".")
            if definition.kind != "method" or "." in owner or member.startswith("__"):
                continue
            classes[member] += 1
            first.setdefault(member, definition.name)
    shared = sorted((m for m in classes if classes[m] > 1), key=lambda m: (-classes[m], m))
    return [first[member] for member in shared[:count]]


@dataclass
class Row:
    """One lookup: its times in each mode (seconds), and what each listed (last round)."""

    name: str
    syntax: list[float] = field(default_factory=list)
    served: list[float] = field(default_factory=list)
    pyright: list[float] = field(default_factory=list)  # its longest request in each call
    syntax_found: set[str] = field(default_factory=set)
    served_found: set[str] = field(default_factory=set)
    syntax_shown: str = ""
    served_shown: str = ""
    header: str = ""  # the with-pyright result's: who answered


def _uses(result: ToolResult) -> tuple[set[str], str]:
    """The `path:LINE` of each listed use, and the count as shown (`200+` when capped)."""
    lines = result.content.splitlines()
    found = {":".join(line.split(":")[:2]) for line in lines if not line.startswith("[")}
    capped = any(line.startswith("[more uses not shown") for line in lines)
    return found, f"{len(found)}{'+' if capped else ''}"


def _header(result: ToolResult) -> str:
    lines = result.content.splitlines()
    return next((line for line in lines[1:2] if line.startswith("[")), "")


async def measure(
    root: Path, names: Sequence[str], navigator: PyrightNavigator, repeat: int
) -> list[Row]:
    ws = Workspace([root])
    caches = {False: ParseCache(), True: ParseCache()}

    async def call(name: str, served: bool) -> tuple[float, ToolResult]:
        ctx = ToolContext(
            ws,
            Fixed(Decision.ALLOW_ONCE),
            code_cache=caches[served],
            navigator=navigator if served else None,
        )
        navigator.longest = 0.0
        started = time.perf_counter()
        result = await run_tool("find_references", {"name": name}, ctx)
        took = time.perf_counter() - started
        assert not result.is_error, result.content
        return took, result

    rows = [Row(name) for name in names]
    for round_ in range(repeat + 1):
        for row in rows:
            order = (False, True) if round_ % 2 else (True, False)
            for served in order:
                took, result = await call(row.name, served)
                if round_ == 0:
                    continue  # the warm-up: pyright's first analysis, the caches filled
                (row.served if served else row.syntax).append(took)
                if served:
                    row.pyright.append(navigator.longest)
                if round_ == repeat:  # what each mode lists, from the last round
                    found, shown = _uses(result)
                    if served:
                        row.served_found, row.served_shown = found, shown
                        row.header = _header(result)
                    else:
                        row.syntax_found, row.syntax_shown = found, shown
    return rows


def report(rows: Sequence[Row]) -> None:
    width = max(len(row.name) for row in rows)
    print(
        f"\n{'lookup':<{width}}  {'tree-sitter':>11}  {'with pyright':>12}  {'ratio':>5}  "
        f"{'(pyright alone)':>15}  {'uses ts':>7}  {'uses ls':>7}  header"
    )
    ratios = []
    for row in rows:
        syntax, served = statistics.median(row.syntax), statistics.median(row.served)
        alone = statistics.median(row.pyright)
        ratios.append(served / syntax)
        extra = len(row.served_found - row.syntax_found)  # uses tree-sitter did not list
        header = row.header + (f" ({extra} not in tree-sitter's)" if extra else "")
        print(
            f"{row.name:<{width}}  {syntax * 1000:8.1f} ms  {served * 1000:9.1f} ms  "
            f"{served / syntax:4.1f}×  {alone * 1000:12.1f} ms  "
            f"{row.syntax_shown:>7}  {row.served_shown:>7}  {header}"
        )
    syntax_total = sum(statistics.median(row.syntax) for row in rows)
    served_total = sum(statistics.median(row.served) for row in rows)
    print(
        f"\nmedian ratio {statistics.median(ratios):.1f}× (range {min(ratios):.1f}–"
        f"{max(ratios):.1f}×); all lookups: tree-sitter {syntax_total * 1000:.0f} ms, "
        f"with pyright {served_total * 1000:.0f} ms ({served_total / syntax_total:.1f}×)"
    )
    syntax_uses = sum(len(row.syntax_found) for row in rows)
    served_uses = sum(len(row.served_found) for row in rows)
    print(f"uses listed: tree-sitter {syntax_uses}, with pyright {served_uses}")


async def run(root: Path, pyright: str, lookups: int, repeat: int) -> None:
    names = shared_members(root, lookups)
    print(f"{len(names)} lookups over {root} ({sum(1 for _ in root.rglob('*.py'))} Python files)")
    started = time.perf_counter()
    client = await start_pyright(pyright, root)
    print(f"pyright started in {time.perf_counter() - started:.1f} s")
    try:
        rows = await measure(root, names, PyrightNavigator(client), repeat)
    finally:
        await stop_pyright(client)
    report(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=REPO / "server", help="the project")
    parser.add_argument("--lookups", type=int, default=24, help="Class.member names looked up")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds after the warm-up")
    parser.add_argument("--pyright", default=str(PYRIGHT), help="pyright-langserver")
    args = parser.parse_args(argv)
    if not os.access(args.pyright, os.X_OK):
        print(f"no pyright-langserver at {args.pyright}: npm ci --prefix tests/language-servers")
        return 1
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    asyncio.run(run(args.root.resolve(), args.pyright, args.lookups, args.repeat))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
