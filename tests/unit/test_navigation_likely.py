"""Which lines make a candidate file look like it defines a name (find_symbol's order)."""

from __future__ import annotations

import base64
import json

import pytest
from lantern.tools.navigation.likely import INLINE_BYTES, Likely, Scores
from lantern.workspace.ignore.files import NeedsWorker, inline_only

DEFINED = [
    "def run(self, fast=True):",
    "    async def run():",
    "class Run(Base):",
    "fn run<T>(x: T) -> T {",
    "pub fn run(&self) {",
    "func (s *Server) run(ctx context.Context) error {",
    "func run() {",
    "export function run(a, b) {",
    "  run() {",
    "  public void run() throws IOException {",
    "    public override void run(int x)",
    "interface run {",
    "type run = string | number;",
    "struct run {",
    "struct run",
    "enum run { A, B };",
    "#define run(x) ((x) + 1)",
    "# define run 3",
    "} run;",
    "static int run(struct device *dev)",
    "static __always_inline __alloc_size(1) void *run(size_t size, gfp_t flags)",
    "RUN = 1",
    "const run: Handler = () => {};",
    "    run = None",
]
USED = [
    "    run(dev);",
    "\trc = run(dev, 1);",
    "\treturn run(dev);",
    "\tif (run(dev)) {",
    "\tstruct run *p = NULL;",
    "static void go(struct run *r);",
    "\tp->run(x);",
    "    self.run()",
    "from lib import run",
    "import { run } from './lib';",
    "// run is here",
    "x = run",
    "    if run == 3:",
    "int run(void);",
    "\tprun(x);",
    "\trun_all(x);",
]


@pytest.mark.parametrize("line", DEFINED)
def test_a_definition_like_line_scores(line: str) -> None:
    name = "RUN" if line.startswith("RUN") else "Run" if "Run" in line else "run"
    assert Likely(name).line(line) > 0


def test_a_name_opening_a_line_is_a_definition_only_in_c() -> None:
    assert Likely("run").line("run (void)", c_like=True) == 1
    assert Likely("run").line("run()") == 0


@pytest.mark.parametrize("line", USED)
def test_a_use_scores_nothing(line: str) -> None:
    assert Likely("run").line(line) == 0


def test_a_file_named_for_the_name_gets_a_bonus() -> None:
    likely = Likely("task_struct")
    assert likely.named("task_struct.h") == likely.named("TaskStruct.java") == 1
    assert likely.named("sched.h") == likely.named("task_structs.c") == 0


def _event(kind: str, path: dict[str, str], text: str | None = None) -> bytes:
    data: dict[str, object] = {"path": path}
    if text is not None:
        data["lines"] = {"text": text}
    # Compact, as ripgrep writes it.
    return json.dumps({"type": kind, "data": data}, separators=(",", ":")).encode() + b"\n"


def test_scores_keep_each_files_best_line_however_the_stream_is_cut() -> None:
    stream = b"".join(
        [
            _event("begin", {"text": "./a.c"}),
            _event("match", {"text": "./a.c"}, "\tx = run(1);\n"),
            _event("match", {"text": "./a.c"}, "run(int a)\n"),
            _event("match", {"text": "./b.c"}, "\trun();\n"),
            _event("match", {"text": "./c.py"}, "run(1)\n"),
            # A name that is not UTF-8 comes as base64 bytes, decoded as names are.
            _event("match", {"bytes": base64.b64encode(b"./\xc4xy.c").decode()}, "#define run 1\n"),
            _event("end", {"text": "./a.c"}),
        ]
    )
    for cut in (1, 7, 64, len(stream)):
        scores = Scores(Likely("run"))
        pieces = [stream[i : i + cut] for i in range(0, len(stream), cut)]
        for piece in pieces:
            scores.feed(piece, False)
        scores.feed(b"", True)
        assert scores.best == {"./a.c": 1, "./b.c": 0, "./c.py": 0, "./\udcc4xy.c": 2}


def test_a_big_piece_on_the_event_loop_is_left_for_a_worker() -> None:
    scores = Scores(Likely("run"))
    line = _event("match", {"text": "./a.c"}, "\trun();\n")
    big = line * (INLINE_BYTES // len(line) + 1) + _event("match", {"text": "./b.c"}, "fn run()\n")
    with inline_only(), pytest.raises(NeedsWorker):
        scores.feed(big, False)
    assert scores.best == {}
    scores.feed(b"", True)  # on the worker: what was kept is scored
    assert scores.best == {"./a.c": 0, "./b.c": 2}
