"""`lantern ask --file PATH[:START-END]`: files the user names with the question are read
(folders listed) without another prompt — still through the read path, audited as
mentioned — and a name the read path refuses never reaches the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import ENV_CANARY, KEY_CANARY, OUTSIDE_CANARY, Lantern
from tests.fakes.openai_server import FakeOpenAI, Turn

Q = "What does this do?"


def audit_records(lantern: Lantern) -> list[dict[str, Any]]:
    [path] = Path(lantern.env["XDG_STATE_HOME"]).rglob("audit.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def first_request(fake: FakeOpenAI) -> str:
    return json.dumps(fake.chat_requests()[0]["messages"])


def test_a_mentioned_file_is_read_with_the_question_without_a_prompt(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    fake.add_turns([Turn(content="It greets at src/util.py:1.")])
    # Every read the model asks for would be denied: the mention is the user's own choice.
    run = lantern.ask(Q, "--file", "src/util.py", approve="deny", as_json=False)
    assert run.rc == 0, run.stderr
    sent = first_request(fake)
    assert "def greet" in sent and "The user named src/util.py with the question" in sent
    assert "src/util.py" in run.stderr and "done" in run.stderr  # the read, as a tool line
    [record] = [r for r in audit_records(lantern) if r.get("tool") == "read_file"]
    assert record["decision"] == "mention" and record["path"] == "src/util.py"


def test_a_line_range_reads_only_those_lines(fake: FakeOpenAI, lantern: Lantern) -> None:
    lines = "".join(f"line {i}\n" for i in range(1, 51))
    (lantern.project.root / "many.txt").write_text(lines, "utf-8")
    fake.add_turns([Turn(content="Lines.")])
    run = lantern.ask(Q, "--file", "many.txt:10-12")
    assert run.rc == 0, run.stderr
    sent = first_request(fake)
    assert "line 10" in sent and "line 12" in sent
    assert "line 13\\n" not in sent and "line 9\\n" not in sent


def test_names_the_read_path_refuses_never_reach_the_model(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    fake.add_turns([Turn(content="I could not read those.")])
    refused = (".env", "deploy.key", "link.txt", "env-link.txt")
    run = lantern.ask(Q, *(arg for name in refused for arg in ("--file", name)), approve="allow")
    assert run.rc == 0, run.stderr
    sent = first_request(fake)
    for canary in (ENV_CANARY, KEY_CANARY, OUTSIDE_CANARY):
        assert canary not in sent and canary not in run.stdout + run.stderr
    assert sent.count("which did not succeed") == len(refused)


def test_a_file_outside_the_workspace_cannot_be_mentioned(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    outside = lantern.project.outside / "canary.txt"
    run = lantern.ask(Q, "--file", str(outside))
    assert run.rc == 2
    assert "not in the workspace" in run.stderr and OUTSIDE_CANARY not in run.stderr
    assert fake.chat_requests() == []  # nothing was asked


def test_a_backwards_line_range_is_a_usage_error(fake: FakeOpenAI, lantern: Lantern) -> None:
    run = lantern.ask(Q, "--file", "src/util.py:9-3")
    assert run.rc == 2 and "ends before it starts" in run.stderr
    assert fake.chat_requests() == []


def test_a_mentioned_folder_is_listed_with_the_question_without_a_prompt(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    fake.add_turns([Turn(content="It holds src/util.py:1.")])
    run = lantern.ask(Q, "--file", "src", approve="deny", as_json=False)
    assert run.rc == 0, run.stderr
    sent = first_request(fake)
    assert "The user named src with the question; Lantern listed it with list_files" in sent
    assert "src/app.py" in sent and "src/util.py" in sent
    assert "def greet" not in sent  # listed, not read
    [record] = [r for r in audit_records(lantern) if r.get("tool") == "list_files"]
    assert record["decision"] == "mention" and record["path"] == "src"


def test_the_workspace_folder_is_listed_through_the_read_path(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    fake.add_turns([Turn(content="A greeter: README.md:1.")])
    run = lantern.ask(Q, "--file", str(lantern.project.root), approve="deny", as_json=False)
    assert run.rc == 0, run.stderr
    sent = first_request(fake)
    assert "Lantern listed it with list_files" in sent
    assert "README.md" in sent and "notes.txt" in sent
    assert "deploy.key" not in sent and "link.txt" not in sent  # refused names stay out
    for canary in (ENV_CANARY, KEY_CANARY, OUTSIDE_CANARY):
        assert canary not in sent
