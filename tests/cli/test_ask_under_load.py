"""`lantern ask` under load: a turn of very many tool calls in a process with few file
descriptors (`ulimit -n 1024`) still ends with an answer, every call read its file, and
every call is audited."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

from tests.cli.conftest import Lantern
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

CALLS = 1500
DESCRIPTORS = 1024  # `ulimit -n 1024`: a common default
ANSWER = "Read them all."


def _few_descriptors() -> None:
    """In the child, before `lantern` starts: at most `DESCRIPTORS` open files."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = DESCRIPTORS if hard == resource.RLIM_INFINITY else min(DESCRIPTORS, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def test_a_turn_of_1500_calls_under_ulimit_1024_ends_with_an_answer(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    folder = lantern.project.root / "many"
    folder.mkdir()
    (folder / ".gitignore").write_text("*.log\n", "utf-8")
    for i in range(CALLS):
        (folder / f"f{i:04d}.txt").write_text(f"line of file {i}\n", "utf-8")
    calls = [
        {"id": f"c{i}", "name": "read_file", "arguments": {"path": f"many/f{i:04d}.txt"}}
        for i in range(CALLS)
    ]
    fake.add_turns([Turn(tool_calls=calls), Turn(content=ANSWER)])
    done = subprocess.run(
        lantern.command("Read every file in many/."),
        env=lantern.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_S * 2,
        cwd=lantern.project.tmp,
        preexec_fn=_few_descriptors,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Too many open files" not in done.stderr
    out = json.loads(done.stdout)
    assert out["answer"] == ANSWER
    codes = [c.get("code") for c in out["toolCalls"]]
    # A turn's calls run a few at a time, so none runs out of descriptors: each read its file.
    assert codes == [None] * CALLS, sorted({str(c) for c in codes})
    audit = next(Path(lantern.env["XDG_STATE_HOME"]).rglob("audit.jsonl"))
    records = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    assert sum(r["kind"] == "tool" for r in records) == CALLS
