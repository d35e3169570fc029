#!/usr/bin/env python3
"""Benchmark `lantern serve`: start-up latency and resident memory.

    .venv/bin/python benchmarks/server_bench.py [--runs N] [--questions Q] [--direct]

Two figures, each with a baseline measured in the same run:

1. Start-up: wall time from spawning `lantern serve` to receiving the `initialize`
   response, over a tiny Content-Length framed JSON-RPC client on pipes. Interleaved
   with (a) `python -c pass` spawn-to-exit (the interpreter floor) and (b) a bare pygls 2
   server (`LanguageServer("bare", "1").start_io()`) spawn-to-initialize-response (the
   floor for any pygls server). The order of the three rotates every round so drift
   cancels out. Goal: lantern / bare <= 1.2x (median).
2. Memory: the server's VmRSS (/proc/PID/status) after `initialize` + `initialized`
   (right away, and once the background warm-up import has settled), and after Q
   questions (`lantern/ask`) answered against the instant fake OpenAI server
   (tests/fakes/openai_server.py), each question one read_file tool call on a small file
   in a temp workspace and then a text answer. The server's approval prompts
   (`window/showMessageRequest`) are answered "Allow"; `workspace/configuration` with
   `[{}]` and `window/workDoneProgress/create` with null. Goal: <= 75 MB after Q questions.
   The bare pygls server's RSS after `initialize` is printed for reference.
3. Exit: wall time from writing the `exit` notification (after `shutdown`) to the process
   having ended (`waitpid`), for the server that answered the Q questions above, for fresh
   servers right after `initialized` (interleaved with a bare pygls server, which shows what
   a plain pygls server's interpreter teardown costs). Goal: <= 200 ms (Emacs's eglot
   waits about 0.1 s after `exit` before it kills the server). The exit code must be 0.

4. Command line: wall time from spawning to exit of `lantern tool read_file` (one small
   file of the temp workspace) and of `lantern --version`, interleaved with `python -c
   pass` on the same interpreter. No goal: the ratio is reported, and what is imported
   without being needed is what to cut (`python -X importtime`).

Modules are compiled to `.pyc` files by the first, untimed round of each figure, as an
installed package has them: `PYTHONDONTWRITEBYTECODE` is left out of the children's
environment, or Lantern's sources (an editable install) would be compiled from source at
every start while pygls's are read from `.pyc` files.

`--direct` adds a fourth start-up row, `serve()` launched straight from
`lantern.lsp.server`, to tell the server's own import cost from what the `lantern.cli`
entry point imports before it dispatches to `serve`.

All state (XDG_STATE_HOME, XDG_DATA_HOME, XDG_CONFIG_HOME, the workspace) lives in a
temp dir. Every process started here is stopped through its own Popen handle. The script
exits 0 whatever the verdicts; "MISS" rows are the thing to look at.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

PYTHON = sys.executable
LANTERN_CLI: list[str] = [PYTHON, "-m", "lantern.cli"]
LANTERN_CMD: list[str] = [*LANTERN_CLI, "serve"]
# `--direct`: the server module's own cost, without what `lantern.cli` imports up front.
DIRECT_CMD: list[str] = [
    PYTHON,
    "-c",
    "import sys; from lantern.lsp.server import serve; sys.exit(serve())",
]
BARE_SERVER = (
    "from pygls.lsp.server import LanguageServer\n"
    'server = LanguageServer("bare", "1")\n'
    "server.start_io()\n"
)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
STARTUP_GOAL_RATIO = 1.2
MEMORY_GOAL_MB = 75.0
EXIT_GOAL_S = 0.2
IO_TIMEOUT_S = 30.0
WORKSPACE_FILE = "hello.py"
WORKSPACE_TEXT = (
    '"""A small module for the benchmark."""\n\n\ndef greet(name):\n    return f"hi {name}"\n'
)


# --------------------------------------------------------------------------- JSON-RPC client


class Sample(NamedTuple):
    wall: float
    """Seconds from spawn to the response (or to exit)."""
    cpu: float
    """User + system CPU seconds the child used by then (10 ms resolution); unlike wall
    time, barely affected by other load on the machine."""


class RpcError(Exception):
    """The server broke the protocol, answered with an error, or went quiet."""


class LspProcess:
    """A language server child process and a minimal Content-Length framed JSON-RPC client."""

    def __init__(
        self, argv: Sequence[str], *, env: dict[str, str] | None = None, stderr: IO[bytes] | None
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        self._buffer = b""
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- framing -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self._stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RpcError(f"no message from pid {self.pid} within {IO_TIMEOUT_S:.0f}s")
        ready, _, _ = select.select([self._fd], [], [], remaining)
        if not ready:
            raise RpcError(f"no message from pid {self.pid} within {IO_TIMEOUT_S:.0f}s")
        chunk = os.read(self._fd, 1 << 16)
        if not chunk:
            raise RpcError(f"pid {self.pid} closed its stdout (exit code {self.proc.poll()})")
        self._buffer += chunk

    def receive(self, timeout: float = IO_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self._buffer:
            self._fill(deadline)
        header, _, rest = self._buffer.partition(b"\r\n\r\n")
        length = None
        for line in header.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is None:
            raise RpcError(f"header without Content-Length: {header!r}")
        self._buffer = rest
        while len(self._buffer) < length:
            self._fill(deadline)
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        message: dict[str, Any] = json.loads(body)
        return message

    def wait_response(
        self,
        msg_id: int,
        on_request: Callable[[dict[str, Any]], Any] | None = None,
        timeout: float = IO_TIMEOUT_S,
    ) -> Any:
        """Read until the response to `msg_id`, answering the server's own requests."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.001, deadline - time.monotonic()))
            if "method" in message:
                if "id" in message:  # a request from the server
                    result = on_request(message) if on_request is not None else None
                    self.send({"id": message["id"], "result": result})
                continue  # notifications are ignored
            if message.get("id") == msg_id:
                if "error" in message:
                    raise RpcError(f"request {msg_id} failed: {message['error']}")
                return message.get("result")

    def wait_request(
        self,
        method: str,
        on_request: Callable[[dict[str, Any]], Any],
        timeout: float = IO_TIMEOUT_S,
    ) -> None:
        """Read until the server sends a `method` request, and answer it (and any before)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.001, deadline - time.monotonic()))
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": on_request(message)})
                if message["method"] == method:
                    return

    # -- lifecycle -----------------------------------------------------------------

    def timed_exit(self, timeout: float = IO_TIMEOUT_S) -> float:
        """`shutdown`, then `exit`: seconds from writing `exit` to the process having ended."""
        shutdown = self.request("shutdown", None)
        self.wait_response(shutdown, timeout=timeout)
        start = time.perf_counter()
        self.notify("exit", None)
        code = self.proc.wait(timeout=timeout)
        elapsed = time.perf_counter() - start
        if code != 0:
            raise RpcError(f"pid {self.pid} exited with {code} after shutdown + exit")
        return elapsed

    def stop(self, timeout: float = 5.0) -> None:
        """`shutdown` + `exit` when still alive, then wait; kill if it lingers."""
        try:
            if self.proc.poll() is None:
                with contextlib.suppress(RpcError, OSError, ValueError):
                    shutdown = self.request("shutdown", None)
                    self.wait_response(shutdown, timeout=timeout)
                    self.notify("exit", None)
                with contextlib.suppress(OSError):
                    self._stdin.close()
                try:
                    self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()


@contextlib.contextmanager
def spawned(
    argv: Sequence[str], *, env: dict[str, str] | None = None, stderr: IO[bytes] | None = None
) -> Iterator[LspProcess]:
    server = LspProcess(argv, env=env, stderr=stderr)
    try:
        yield server
    finally:
        server.stop()


def initialize_params(workspace: Path | None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "clientInfo": {"name": "server_bench", "version": "1"},
        "capabilities": {
            "workspace": {"configuration": True, "workspaceFolders": True},
            "window": {"workDoneProgress": True, "showMessage": {}},
        },
        "rootUri": None,
        "workspaceFolders": None,
    }
    if workspace is not None:
        params["rootUri"] = workspace.as_uri()
        params["workspaceFolders"] = [{"uri": workspace.as_uri(), "name": workspace.name}]
    return params


def answer_server_request(message: dict[str, Any]) -> Any:
    method = message.get("method")
    if method == "window/showMessageRequest":
        return {"title": "Allow"}
    if method == "workspace/configuration":
        return [{}]
    return None  # window/workDoneProgress/create and anything else


# --------------------------------------------------------------------------- /proc


def proc_status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def rss_mb(pid: int) -> float:
    return proc_status_kb(pid, "VmRSS") / 1024


def hwm_mb(pid: int) -> float:
    return proc_status_kb(pid, "VmHWM") / 1024


def settled_rss_mb(pid: int, *, quiet_s: float = 0.6, limit_s: float = 15.0) -> float:
    """RSS once it has stopped changing for `quiet_s` (a background import may be running)."""
    start = time.monotonic()
    last = rss_mb(pid)
    since = time.monotonic()
    while time.monotonic() - start < limit_s:
        time.sleep(0.05)
        now = rss_mb(pid)
        if abs(now - last) > 0.05:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
    return last


# --------------------------------------------------------------------------- start-up


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds a live process has used so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_python_pass(env: dict[str, str]) -> Sample:
    cpu_before = children_cpu_s()
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-c", "pass"], env=env)
    try:
        proc.wait(timeout=IO_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Sample(time.perf_counter() - start, children_cpu_s() - cpu_before)


def time_initialize(argv: Sequence[str], env: dict[str, str]) -> Sample:
    start = time.perf_counter()
    with spawned(argv, env=env) as server:
        msg_id = server.request("initialize", initialize_params(None))
        server.wait_response(msg_id, answer_server_request)
        elapsed = time.perf_counter() - start
        cpu = proc_cpu_s(server.pid)
    return Sample(elapsed, cpu)


def startup_bench(
    runs: int, bare_script: Path, env: dict[str, str], direct: bool
) -> dict[str, list[Sample]]:
    kinds: dict[str, Callable[[], Sample]] = {
        "python -c pass": lambda: time_python_pass(env),
        "bare pygls 2": lambda: time_initialize([PYTHON, str(bare_script)], env),
        "lantern serve": lambda: time_initialize(LANTERN_CMD, env),
    }
    if direct:
        kinds["lsp.server direct"] = lambda: time_initialize(DIRECT_CMD, env)
    names = list(kinds)
    for name in names:  # warm the page cache and .pyc files; not counted
        kinds[name]()
    times: dict[str, list[Sample]] = {name: [] for name in names}
    for i in range(runs):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            times[name].append(kinds[name]())
    return times


def time_exit_of(argv: Sequence[str], env: dict[str, str]) -> Sample:
    """Spawn to exit of a command that must succeed (its output read and dropped)."""
    cpu_before = children_cpu_s()
    start = time.perf_counter()
    done = subprocess.run(
        list(argv), env=env, capture_output=True, timeout=IO_TIMEOUT_S, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RpcError(f"{' '.join(argv[2:])} exited with {done.returncode}: {done.stderr!r}")
    return Sample(elapsed, children_cpu_s() - cpu_before)


def cli_bench(runs: int, workspace: Path, env: dict[str, str]) -> dict[str, list[Sample]]:
    tool = [*LANTERN_CLI, "tool", "read_file", json.dumps({"path": WORKSPACE_FILE})]
    kinds: dict[str, Callable[[], Sample]] = {
        "python -c pass": lambda: time_python_pass(env),
        "lantern tool": lambda: time_exit_of([*tool, "--workspace", str(workspace)], env),
        "lantern --version": lambda: time_exit_of([*LANTERN_CLI, "--version"], env),
    }
    names = list(kinds)
    for name in names:  # warm the page cache and .pyc files; not counted
        kinds[name]()
    times: dict[str, list[Sample]] = {name: [] for name in names}
    for i in range(runs):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            times[name].append(kinds[name]())
    return times


# --------------------------------------------------------------------------- memory


def ask_once(server: LspProcess, question: str) -> dict[str, Any]:
    msg_id = server.request("lantern/ask", {"question": question})
    result: dict[str, Any] = server.wait_response(msg_id, answer_server_request)
    if result.get("error") or not result.get("answer"):
        raise RpcError(f"question failed: {result}")
    return result


def memory_bench(
    questions: int, workspace: Path, env: dict[str, str], log: IO[bytes]
) -> dict[str, float]:
    fake = FakeOpenAI().start()
    try:
        env = {**env, "LANTERN_MODEL": "fake-model", "LANTERN_BASE_URL": fake.base_url}
        out: dict[str, float] = {}
        with spawned(LANTERN_CMD, env=env, stderr=log) as server:
            msg_id = server.request("initialize", initialize_params(workspace))
            server.wait_response(msg_id, answer_server_request)
            server.notify("initialized", {})
            # `initialized` pulls workspace/configuration; measure once that is answered.
            server.wait_request("workspace/configuration", answer_server_request)
            out["after_init"] = rss_mb(server.pid)
            out["after_init_settled"] = settled_rss_mb(server.pid)
            tool_calls = 0
            for i in range(questions):
                fake.add_turns(
                    [
                        {
                            "tool_calls": [
                                {
                                    "id": f"call_{i}",
                                    "name": "read_file",
                                    "arguments": {"path": WORKSPACE_FILE},
                                }
                            ]
                        },
                        {"content": f"Answer {i}: `greet` in {WORKSPACE_FILE} says hi."},
                    ]
                )
                result = ask_once(server, f"Question {i}: what does greet do?")
                tool_calls += len(result.get("toolCalls", []))
                if i == 0:
                    out["after_1"] = rss_mb(server.pid)
            out["after_q"] = rss_mb(server.pid)
            out["hwm"] = hwm_mb(server.pid)
            out["tool_calls"] = float(tool_calls)
            out["exit_after_q"] = server.timed_exit()
        return out
    finally:
        fake.stop()


def bare_rss(bare_script: Path, env: dict[str, str]) -> float:
    with spawned([PYTHON, str(bare_script)], env=env) as server:
        msg_id = server.request("initialize", initialize_params(None))
        server.wait_response(msg_id, answer_server_request)
        server.notify("initialized", {})
        return settled_rss_mb(server.pid, quiet_s=0.3)


# --------------------------------------------------------------------------- exit


def time_exit(argv: Sequence[str], env: dict[str, str], workspace: Path | None) -> float:
    """A fresh server: `initialize`, `initialized` (lantern then pulls its settings), exit."""
    with spawned(argv, env=env) as server:
        msg_id = server.request("initialize", initialize_params(workspace))
        server.wait_response(msg_id, answer_server_request)
        server.notify("initialized", {})
        if workspace is not None:
            server.wait_request("workspace/configuration", answer_server_request)
        return server.timed_exit()


def exit_bench(
    runs: int, bare_script: Path, env: dict[str, str], workspace: Path
) -> dict[str, list[float]]:
    kinds: dict[str, Callable[[], float]] = {
        "bare pygls 2": lambda: time_exit([PYTHON, str(bare_script)], env, None),
        "lantern serve": lambda: time_exit(LANTERN_CMD, env, workspace),
    }
    times: dict[str, list[float]] = {name: [] for name in kinds}
    names = list(kinds)
    for i in range(runs):
        for name in names[i % 2 :] + names[: i % 2]:
            times[name].append(kinds[name]())
    return times


# --------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f}"


def prepared(tmp: Path) -> tuple[dict[str, str], Path, Path]:
    """Under `tmp`: the environment (its own XDG folders, no model settings), a workspace
    holding WORKSPACE_FILE, and the bare pygls server's script."""
    for sub in ("state", "data", "config", "workspace"):
        (tmp / sub).mkdir()
    workspace = tmp / "workspace"
    (workspace / WORKSPACE_FILE).write_text(WORKSPACE_TEXT, encoding="utf-8")
    bare_script = tmp / "bare_pygls_server.py"
    bare_script.write_text(BARE_SERVER, encoding="utf-8")
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }
    for name in ("LANTERN_MODEL", "LANTERN_BASE_URL", "LANTERN_API_KEY"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see the module docstring
    return env, workspace, bare_script


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="start-up runs per kind")
    parser.add_argument("--questions", type=int, default=20, help="questions for the memory run")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="also time `serve()` started straight from lantern.lsp.server (no lantern.cli)",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="lantern-server-bench-") as tmp_name:
        tmp = Path(tmp_name)
        env, workspace, bare_script = prepared(tmp)

        print(
            f"server_bench: Python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} CPUs; {PYTHON}"
        )
        print(f"\n1. Start-up, spawn to response (median of {args.runs}, interleaved)")
        times = startup_bench(args.runs, bare_script, env, args.direct)
        print(f"   {'':<17} {'wall':>8}  {'min':>7} {'max':>7}   {'CPU':>7}")
        for name, samples in times.items():
            walls = [x.wall for x in samples]
            what = "exit" if name.startswith("python") else "initialize response"
            print(
                f"   {name:<17} {ms(walls)} ms {min(walls) * 1000:7.1f} {max(walls) * 1000:7.1f}"
                f"   {ms([x.cpu for x in samples])} ms  to {what}"
            )

        def median(name: str, attr: str) -> float:
            return float(statistics.median(getattr(x, attr) for x in times[name]))

        lantern, bare = median("lantern serve", "wall"), median("bare pygls 2", "wall")
        floor = median("python -c pass", "wall")
        ratio = lantern / bare
        print(
            f"   lantern / bare = {ratio:.2f}x wall (goal <= {STARTUP_GOAL_RATIO}x)  "
            f"{verdict(ratio <= STARTUP_GOAL_RATIO)}"
        )
        cpu_ratio = median("lantern serve", "cpu") / median("bare pygls 2", "cpu")
        print(f"   lantern / bare = {cpu_ratio:.2f}x CPU (less sensitive to a busy machine)")
        print(
            f"   above the interpreter floor: bare +{(bare - floor) * 1000:.1f} ms, "
            f"lantern +{(lantern - floor) * 1000:.1f} ms"
        )
        if args.direct:
            direct = median("lsp.server direct", "wall")
            direct_cpu = median("lsp.server direct", "cpu")
            print(
                f"   lsp.server direct / bare = {direct / bare:.2f}x wall, "
                f"{direct_cpu / median('bare pygls 2', 'cpu'):.2f}x CPU (diagnostic)"
            )
        load = os.getloadavg()
        print(f"   load average during the run: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)")

        print(f"\n2. Resident memory (VmRSS), {args.questions} questions against the fake model")
        log_path = tmp / "lantern-serve.stderr"
        with log_path.open("wb") as log:
            try:
                mem = memory_bench(args.questions, workspace, env, log)
            except RpcError as exc:
                log.flush()
                print(f"   FAILED: {exc}\n   server stderr:")
                print(log_path.read_text(encoding="utf-8", errors="replace")[-4000:])
                return 1
        bare_mb = bare_rss(bare_script, env)
        rows = [
            ("bare pygls 2 after initialize", bare_mb, ""),
            ("lantern after initialize + initialized", mem["after_init"], ""),
            ("lantern after warm-up import settled", mem["after_init_settled"], ""),
            ("lantern after 1 question", mem["after_1"], ""),
            (
                f"lantern after {args.questions} questions",
                mem["after_q"],
                f"   (peak {mem['hwm']:.1f} MB; {int(mem['tool_calls'])} tool calls)",
            ),
        ]
        for label, value, note in rows:
            print(f"   {label:<40} {value:7.1f} MB{note}")
        print(
            f"   goal <= {MEMORY_GOAL_MB:.0f} MB after {args.questions} questions  "
            f"{verdict(mem['after_q'] <= MEMORY_GOAL_MB)}"
        )

        print(f"\n3. Exit, from `exit` (after `shutdown`) to the process ended, {args.runs} runs")
        exits = exit_bench(args.runs, bare_script, env, workspace)
        for name, values in exits.items():
            print(
                f"   {name + ' fresh':<40} {ms(values)} ms  "
                f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"
            )
        after_q = mem["exit_after_q"]
        print(f"   {f'lantern after {args.questions} questions':<40} {after_q * 1000:8.1f} ms")
        worst = max(statistics.median(exits["lantern serve"]), after_q)
        print(f"   goal <= {EXIT_GOAL_S * 1000:.0f} ms  {verdict(worst <= EXIT_GOAL_S)}")
        load = os.getloadavg()
        print(f"   load average during the run: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)")

        print(f"\n4. Command line, spawn to exit (median of {args.runs}, interleaved)")
        try:
            cli = cli_bench(args.runs, workspace, env)
        except RpcError as exc:
            print(f"   FAILED: {exc}")
            return 1
        floor_cli = statistics.median(x.wall for x in cli["python -c pass"])
        floor_cpu = statistics.median(x.cpu for x in cli["python -c pass"])
        for name, samples in cli.items():
            walls, cpus = [x.wall for x in samples], [x.cpu for x in samples]
            ratio_note = (
                ""
                if name.startswith("python")
                else f"   {statistics.median(walls) / floor_cli:5.1f}x wall, "
                f"{statistics.median(cpus) / floor_cpu:5.1f}x CPU of python -c pass"
            )
            print(f"   {name:<17} {ms(walls)} ms   {ms(cpus)} ms CPU{ratio_note}")
        load = os.getloadavg()
        print(f"   load average during the run: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
