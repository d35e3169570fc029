"""`lantern ask` end to end: a real subprocess, a real workspace, a scripted model server.

What is asserted is what a user (or a script driving the CLI) notices: the
exit code, the one JSON object on stdout, the message on stderr, and what the
model was sent (the requests the fake server recorded). How the loop copes with a
model's mistakes (broken arguments, empty replies, unknown tools) is tested in
process, in tests/unit/test_loop_model_mistakes.py.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern, Project

EXIT_OK, EXIT_USAGE, EXIT_MODEL, EXIT_LIMIT, EXIT_INTERRUPTED = 0, 2, 3, 4, 130
Q = "Where is the greeting built?"
USAGE = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def read(call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    return call(call_id, "read_file", {"path": path, **extra})


def tool_message(request: dict[str, Any], call_id: str) -> dict[str, Any] | None:
    for message in request["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return message
    return None


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- answers -------------------------------------------------------------------------------


def test_multi_step_answer_with_checked_references(fake: FakeOpenAI, lantern: Lantern) -> None:
    answer = (
        "`greet` builds it at src/util.py:1-2, imported at src/app.py:1-3, called from "
        "src/app.py:8; "
        "the entry point is at src/app.py:12-13, and src/missing.py:3 does not exist."
    )
    fake.add_turns(
        [
            Turn(tool_calls=[call("s1", "search", {"pattern": "def greet"})], usage=USAGE),
            Turn(
                content="Reading both files.",
                tool_calls=[read("r1", "src/util.py"), read("r2", "src/app.py", offset=1, limit=9)],
                usage=USAGE,
            ),
            Turn(content=answer, usage=USAGE),
        ]
    )
    run = lantern.ask(Q)
    assert run.rc == EXIT_OK, run.stderr
    out = run.json
    assert out["stopReason"] == "done"
    assert out["answer"] == answer
    assert out["usage"] == {"promptTokens": 300, "completionTokens": 15}
    assert [(c["id"], c["name"], c["status"]) for c in out["toolCalls"]] == [
        ("s1", "search", "done"),
        ("r1", "read_file", "done"),
        ("r2", "read_file", "done"),
    ]
    assert all(c["bytes"] > 0 and "code" not in c for c in out["toolCalls"])

    refs = {answer[r["span"][0] : r["span"][1]]: r for r in out["references"]}
    assert list(refs) == [
        "src/util.py:1-2",
        "src/app.py:1-3",
        "src/app.py:8",
        "src/app.py:12-13",
        "src/missing.py:3",
    ]
    util, app1, app8, app12, missing = refs.values()
    assert (util["path"], util["startLine"], util["endLine"]) == ("src/util.py", 1, 2)
    assert util["verified"] and util["seen"]  # whole file was read
    assert app1["verified"] and app1["seen"]  # inside the lines 1-9 that were read
    assert app8["verified"] and app8["seen"]  # lines 1-9 were read
    assert app12["verified"] and not app12["seen"]  # exists, never shown to the model
    assert not missing["verified"] and not missing["seen"] and missing["path"] == "src/missing.py"
    assert util["uri"].endswith("/proj/src/util.py")

    # Tool activity goes to stderr, one line per call, never to stdout.
    assert "search /def greet/ in ." in run.stderr
    assert "read_file src/util.py" in run.stderr and "done" in run.stderr

    chats = fake.chat_requests()
    assert len(chats) == 3
    last = chats[-1]
    assert [m["role"] for m in last["messages"]][1:] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
    ]
    assert "def greet" in tool_message(last, "r1")["content"]  # type: ignore[index]
    assert all(c["stream"] is True and c["model"] == "fake-model" for c in chats)


def test_text_output_lists_references(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(
        [
            Turn(tool_calls=[read("r1", "src/util.py")]),
            Turn(content="See src/util.py:2 and nowhere.py:4."),
        ]
    )
    run = lantern.ask(Q, as_json=False)
    assert run.rc == EXIT_OK, run.stderr
    assert run.stdout.startswith("See src/util.py:2 and nowhere.py:4.\n")
    assert "References:" in run.stdout
    assert "src/util.py:2 (verified, seen)" in run.stdout
    assert "nowhere.py:4 (unverified)" in run.stdout


def test_follow_up_through_conversation_file(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    conv = project.tmp / "conv.json"
    fake.add_turns(
        [
            Turn(tool_calls=[read("r1", "src/util.py")]),
            Turn(content="greet is defined at src/util.py:1."),
            Turn(content="It returns a formatted string, see src/util.py:2."),
        ]
    )
    first = lantern.ask("Where is greet?", "--conversation-file", str(conv))
    assert first.rc == EXIT_OK, first.stderr
    assert conv.exists()
    second = lantern.ask("What does it return?", "--conversation-file", str(conv))
    assert second.rc == EXIT_OK, second.stderr
    out = second.json
    assert out["conversationId"] == first.json["conversationId"]
    # Lines read in the first question still count as seen in the follow-up.
    assert out["references"][0]["seen"] is True

    follow_up = fake.chat_requests()[-1]["messages"]
    contents = [m.get("content") for m in follow_up]
    assert "Where is greet?" in contents
    assert "greet is defined at src/util.py:1." in contents
    assert contents[-1] == "What does it return?"
    assert tool_message({"messages": follow_up}, "r1") is not None
    assert sum(1 for m in follow_up if m["role"] == "system") == 1


def test_conversation_file_of_another_workspace_is_refused(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    conv = project.tmp / "conv.json"
    conv.write_text(
        json.dumps({"version": 1, "id": "c0", "workspace": "0123456789abcdef", "messages": []})
    )
    run = lantern.ask("q", "--conversation-file", str(conv))
    assert run.rc == EXIT_USAGE
    assert "another workspace" in run.stderr and "new file" in run.stderr
    assert run.stdout == ""
    assert fake.requests == []


@pytest.mark.parametrize("protocol", ["auto", "text"])
def test_prose_and_a_fenced_call_runs_the_call(
    fake: FakeOpenAI, lantern: Lantern, protocol: str
) -> None:
    # A call in a ```tool_call fence after some prose: the stream hid it, and it once came
    # back as the answer, markup and all, with no tool run and exit 0.
    fenced = json.dumps({"name": "read_file", "arguments": {"path": "src/util.py"}})
    fake.add_turns(
        [
            Turn(content=f"I will read the helper.\n```tool_call\n{fenced}\n```"),
            Turn(content="`greet` builds it at src/util.py:2."),
        ]
    )
    run = lantern.ask(Q, "--tool-protocol", protocol)
    assert run.rc == EXIT_OK, run.stderr
    out = run.json
    assert out["answer"] == "`greet` builds it at src/util.py:2."
    assert [(c["name"], c["status"]) for c in out["toolCalls"]] == [("read_file", "done")]
    second = fake.chat_requests()[1]
    assert "tools" not in second and "def greet" in second["messages"][-1]["content"]


# --- endpoint faults -----------------------------------------------------------------------


def test_rate_limited_once_then_answered(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(status=429, headers={"Retry-After": "0.1"}), Turn(content="Answer.")])
    run = lantern.ask(Q)
    assert run.rc == EXIT_OK, run.stderr
    assert run.json["answer"] == "Answer."
    assert len(fake.chat_requests()) == 2


def test_rate_limited_says_so_with_the_wait(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(status=429, headers={"Retry-After": "0.1"})] * 3)
    run = lantern.ask(Q)
    assert run.rc == EXIT_MODEL
    assert "429" in run.stderr and "rate limit" in run.stderr
    assert "retry after 0.1 s" in run.stderr
    out = run.json
    assert out["stopReason"] == "error" and "429" in out["error"]
    assert len(fake.chat_requests()) == 3  # the SDK's own two retries, then give up


def test_server_error_500(fake: FakeOpenAI, lantern: Lantern) -> None:
    # The SDK tries twice more, waiting as long as the server says (`retry-after-ms`, as
    # OpenAI sends it), else backing off for about 1.5 s in all.
    fake.add_turns([Turn(status=500, headers={"retry-after-ms": "10"})] * 3)
    run = lantern.ask(Q)
    assert run.rc == EXIT_MODEL
    assert "answered 500" in run.stderr
    assert run.json["stopReason"] == "error"
    assert len(fake.chat_requests()) == 3


def test_wrong_api_key_401(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(status=401)])
    run = lantern.ask(Q, "--api-key", "sk-wrong-key-1234567890")
    assert run.rc == EXIT_MODEL
    assert "API key" in run.stderr and "401" in run.stderr
    assert "--api-key" in run.stderr or "LANTERN_API_KEY" in run.stderr
    assert "sk-wrong-key-1234567890" not in run.stderr + run.stdout
    assert len(fake.chat_requests()) == 1  # a wrong key is not retried


def test_unknown_model_404(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(status=404)])
    run = lantern.ask(Q, model="no-such-model")
    assert run.rc == EXIT_MODEL
    assert "'no-such-model'" in run.stderr and "404" in run.stderr
    assert "--model" in run.stderr


def test_context_too_long(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(
        [
            Turn(
                status=400,
                error_message="This model's maximum context length is 8192 tokens. "
                "However, your messages resulted in 9001 tokens.",
            )
        ]
    )
    run = lantern.ask(Q)
    assert run.rc == EXIT_MODEL
    assert "context window" in run.stderr
    assert "maxContextTokens" in run.stderr or "new conversation" in run.stderr


def test_unreachable_endpoint(lantern: Lantern) -> None:
    port = closed_port()
    run = lantern.ask(Q, base_url=f"http://127.0.0.1:{port}/v1", timeout=HANG_S)
    assert run.rc == EXIT_MODEL
    assert "cannot reach" in run.stderr and f"127.0.0.1:{port}" in run.stderr
    assert run.json["stopReason"] == "error"


def test_hang_before_first_byte_times_out(fake: FakeOpenAI, lantern: Lantern) -> None:
    lantern.config("requestTimeoutSeconds = 1\n")
    fake.add_turns([Turn(fault="hang")] * 3)
    run = lantern.ask(Q, timeout=HANG_S)  # the fake never answers: only the 1 s ends it
    assert run.rc == EXIT_MODEL
    assert "requestTimeoutSeconds" in run.stderr
    assert "within 1 s" in run.stderr  # the configured timeout, not the 120 s default


def test_stream_cut_mid_reply_is_retried_once(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(
        [
            Turn(content="A long answer that will be cut off halfway through", fault="cut"),
            Turn(content="The whole answer."),
        ]
    )
    run = lantern.ask(Q)
    assert run.rc == EXIT_OK, run.stderr
    assert run.json["answer"] == "The whole answer."  # nothing of the cut attempt
    assert "retrying" in run.stderr
    chats = fake.chat_requests()
    assert len(chats) == 2
    assert chats[0]["messages"] == chats[1]["messages"]


def test_stream_cut_twice_is_an_error(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(content="cut off in the middle of it all", fault="cut")] * 3)
    run = lantern.ask(Q)
    assert run.rc == EXIT_MODEL
    assert "stream" in run.stderr
    assert run.json["stopReason"] == "error"
    assert len(fake.chat_requests()) == 2  # retried at most once


def test_stream_stall_ends_in_bounded_time(fake: FakeOpenAI, lantern: Lantern) -> None:
    lantern.config("requestTimeoutSeconds = 1\n")
    fake.add_turns([Turn(content="starts and then never finishes", fault="stall")] * 3)
    run = lantern.ask(Q, timeout=HANG_S)  # the stream never ends: only the 1 s ends it
    assert run.rc == EXIT_MODEL
    assert "requestTimeoutSeconds" in run.stderr or "stalled" in run.stderr
    assert "1 s" in run.stderr  # the configured timeout, not the 120 s default


# --- limits --------------------------------------------------------------------------------


def test_max_steps(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns(
        [
            Turn(content=f"Step {i}.", tool_calls=[call(f"s{i}", "search", {"pattern": f"x{i}"})])
            for i in range(5)
        ]
    )
    run = lantern.ask(Q, "--max-steps", "2")
    assert run.rc == EXIT_LIMIT
    out = run.json
    assert out["stopReason"] == "max_steps"
    assert out["answer"]  # the best partial answer
    assert "maxSteps" in run.stderr
    chats = fake.chat_requests()
    assert len(chats) == 2
    assert "tools" in chats[0] and "tool_choice" not in chats[0]
    assert chats[1]["tool_choice"] == "none"  # the last step may not call tools
    assert [c["id"] for c in out["toolCalls"]] == ["s0"]  # the last reply's call never ran


def test_tool_output_budget(fake: FakeOpenAI, lantern: Lantern) -> None:
    lantern.config("maxToolOutputBytes = 300\n")
    fake.add_turns(
        [
            Turn(tool_calls=[read("b1", "notes.txt")]),
            Turn(content="From what I could see: nothing."),
            Turn(content="(not used)"),
        ]
    )
    run = lantern.ask(Q)
    assert run.rc == EXIT_LIMIT
    out = run.json
    assert out["stopReason"] == "budget"
    assert out["answer"] == "From what I could see: nothing."
    assert out["toolCalls"][0]["code"] == "too_large"
    assert "maxToolOutputBytes" in run.stderr
    chats = fake.chat_requests()
    assert len(chats) == 2 and chats[1]["tool_choice"] == "none"  # no more calls
    assert "note 001" not in json.dumps(chats[1])  # the content over budget was not sent
    assert "budget" in tool_message(chats[1], "b1")["content"]  # type: ignore[index]


def test_question_timeout_returns_partial_answer(fake: FakeOpenAI, lantern: Lantern) -> None:
    lantern.config("questionTimeoutSeconds = 1.5\n")
    full = "slowly " * 200
    fake.add_turns([Turn(content=full, chunk_delay=0.05)])  # 10 s of streaming
    run = lantern.ask(Q, timeout=HANG_S)
    assert run.rc == EXIT_LIMIT
    out = run.json
    assert out["stopReason"] == "timeout"
    # The answer is what streamed before the limit, and only that. How much streamed in
    # 1.5 s depends on the machine (on a busy one the limit can pass before the first
    # word); that the words said so far are kept is tests/unit/test_agent_loop.py's
    # test_question_timeout, without a process start in the way.
    assert full.startswith(out["answer"]) and len(out["answer"]) < len(full.strip())
    assert "questionTimeoutSeconds" in run.stderr


def test_sigint_cancels_with_partial_answer(fake: FakeOpenAI, lantern: Lantern) -> None:
    """Ctrl-C while the model is working: the words said so far, exit 130, no traceback."""
    fake.add_turns(
        [
            Turn(content="word word word.", tool_calls=[read("r1", "src/util.py")]),
            Turn(fault="hang"),  # the next model call never answers
        ]
    )
    proc = lantern.popen(Q)
    try:
        deadline = time.monotonic() + HANG_S
        while len(fake.chat_requests()) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        assert len(fake.chat_requests()) == 2, "lantern never asked the model again"
        proc.send_signal(signal.SIGINT)
        # The model call hangs forever: lantern ends at all only because Ctrl-C reached it.
        stdout, stderr = proc.communicate(timeout=HANG_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == EXIT_INTERRUPTED, stderr
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["stopReason"] == "cancelled"
    assert out["answer"] == "word word word."
    assert [c["status"] for c in out["toolCalls"]] == ["done"]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


# --- approvals -----------------------------------------------------------------------------


def test_approve_deny(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(tool_calls=[read("r1", "src/util.py")]), Turn(content="Could not read.")])
    run = lantern.ask(Q, approve="deny")
    assert run.rc == EXIT_OK, run.stderr
    (record,) = run.json["toolCalls"]
    assert record["code"] == "denied_by_user" and record["status"] == "denied"
    message = tool_message(fake.chat_requests()[1], "r1")
    assert message is not None and "def greet" not in message["content"]


def test_approve_ask_without_a_terminal_denies(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(tool_calls=[read("r1", "src/util.py")]), Turn(content="Could not read.")])
    run = lantern.ask(Q, approve=None)  # the default is --approve ask
    assert run.rc == EXIT_OK, run.stderr
    assert run.json["toolCalls"][0]["code"] == "denied_by_user"
    assert "no terminal" in run.stderr and "--approve allow" in run.stderr


class Terminal:
    """`lantern ask --approve ask` with stdin and stderr on a pseudo-terminal, asking
    `question` with `extra` arguments."""

    def __init__(self, lantern: Lantern, question: str = Q, *extra: str) -> None:
        import pty

        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            lantern.command(question, *extra, approve="ask"),
            env=lantern.env,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
        )
        os.close(slave)
        self.screen = ""

    def wait_for(self, text: str, timeout: float = HANG_S) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r} on the terminal: {self.screen!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:  # EIO: the other end is closed
                    data = b""
                assert data, f"terminal closed before {text!r}: {self.screen!r}"
                self.screen += data.decode("utf-8", "replace")

    def finish(self, timeout: float = HANG_S) -> dict[str, Any]:
        stdout, _ = self.proc.communicate(timeout=timeout)
        return json.loads(stdout)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        os.close(self.master)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pty")
def test_approve_on_a_terminal(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(tool_calls=[read("r1", "src/util.py")]), Turn(content="Read it.")])
    term = Terminal(lantern)
    try:
        term.wait_for("Lantern wants to read src/util.py")
        term.wait_for("[d] Deny (default): ")
        os.write(term.master, b"a\n")
        out = term.finish()
    finally:
        term.close()
    assert term.proc.returncode == EXIT_OK, term.screen
    assert out["toolCalls"][0]["status"] == "done"
    assert out["answer"] == "Read it."


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pty")
def test_sigint_at_the_approval_prompt_exits_promptly(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(tool_calls=[read("r1", "src/util.py")]), Turn(content="unused")])
    term = Terminal(lantern)
    try:
        term.wait_for("[d] Deny (default): ")
        term.proc.send_signal(signal.SIGINT)
        out = term.finish(timeout=HANG_S)  # no Enter needed
    finally:
        term.close()
    assert term.proc.returncode == EXIT_INTERRUPTED, term.screen
    assert out["stopReason"] == "cancelled"
    assert len(fake.chat_requests()) == 1


# --- choosing a model ----------------------------------------------------------------------


def test_no_model_configured(lantern: Lantern, fake: FakeOpenAI) -> None:
    run = lantern.ask(Q, base_url=None, model=None)
    assert run.rc == EXIT_USAGE
    assert run.stdout == ""
    assert "no model is configured" in run.stderr
    assert "OpenAI" in run.stderr and "Ollama" in run.stderr
    assert "--model" in run.stderr and "--base-url" in run.stderr
    assert fake.requests == []


def test_key_without_model_says_to_name_one(lantern: Lantern) -> None:
    lantern.env["LANTERN_API_KEY"] = "sk-test-not-a-real-key"
    run = lantern.ask(Q, base_url=None, model=None)
    assert run.rc == EXIT_USAGE
    assert "--model" in run.stderr and "LANTERN_MODEL" in run.stderr
    assert "sk-test-not-a-real-key" not in run.stderr


def test_uses_a_running_ollama(lantern: Lantern, project: Project) -> None:
    with FakeOpenAI([Turn(content="Hi from Ollama.")], models=["qwen-fake", "other"]) as ollama:
        lantern.env["OLLAMA_HOST"] = f"127.0.0.1:{ollama.port}"
        run = lantern.ask(Q, base_url=None, model=None)
        chats = ollama.chat_requests()
    assert run.rc == EXIT_OK, run.stderr
    assert run.json["answer"] == "Hi from Ollama."
    assert "Ollama" in run.stderr and "'qwen-fake'" in run.stderr
    assert [c["model"] for c in chats] == ["qwen-fake"]


def test_environment_settings_are_used(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(content="From the environment.")])
    lantern.env["LANTERN_BASE_URL"] = fake.base_url
    lantern.env["LANTERN_MODEL"] = "env-model"
    lantern.env["LANTERN_API_KEY"] = "sk-env-key"
    run = lantern.ask(Q, base_url=None, model=None)
    assert run.rc == EXIT_OK, run.stderr
    assert fake.chat_requests()[0]["model"] == "env-model"
    assert fake.requests[0].headers["authorization"] == "Bearer sk-env-key"


# --- what the model may never see ----------------------------------------------------------


def test_no_canary_or_absolute_path_reaches_the_model(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    root = project.root
    fake.add_turns(
        [
            Turn(
                tool_calls=[
                    read("c1", ".env"),
                    read("c2", "../outside/canary.txt"),
                    read("c3", "link.txt"),
                    read("c4", "env-link.txt"),
                    read("c5", "deploy.key"),
                    call("c8", "search", {"pattern": "CANARY"}),
                    call("c9", "list_files", {"path": "."}),
                    call("c10", "search", {"pattern": "CANARY", "path": ".."}),
                ]
            ),
            Turn(
                tool_calls=[
                    read("d1", "src/app.py"),
                    read("d2", "nope/missing.py"),
                    read("d3", "src"),
                ]
            ),
            Turn(content="Nothing secret here; see src/app.py:1 and /etc/passwd:1."),
        ]
    )
    run = lantern.ask(f"{Q} Also show me the .env file.")
    assert run.rc == EXIT_OK, run.stderr
    codes = {c["id"]: c.get("code") for c in run.json["toolCalls"]}
    assert codes["c1"] == "sensitive_path"
    assert codes["c2"] == "outside_workspace"
    assert codes["c3"] == "symlink" and codes["c4"] == "symlink"
    assert codes["c5"] == "sensitive_path"
    assert codes["c8"] is None and codes["c9"] is None  # ran, but found no secrets
    refs = run.json["references"]
    assert [r["verified"] for r in refs] == [True, False]
    assert refs[1]["path"] == ""  # an absolute citation never carries its path

    forbidden = [*project.canaries, str(project.tmp), os.path.realpath(project.tmp)]
    forbidden += [str(root), os.path.realpath(root)]
    bodies = [r.raw for r in fake.requests]
    assert len(fake.chat_requests()) == 3
    for body in bodies:
        for secret in forbidden:
            assert secret not in body
            assert json.dumps(secret)[1:-1] not in body
    # ...and nothing of the kind was printed either, apart from the file links.
    assert not any(c in run.stdout + run.stderr for c in project.canaries)


def test_absolute_paths_are_refused_without_echo(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    outside = str(project.outside / "canary.txt")
    inside = str(project.root / "src" / "util.py")
    fake.add_turns(
        [
            Turn(tool_calls=[read("a1", outside), read("a2", inside)]),
            Turn(content="Absolute paths are not allowed."),
        ]
    )
    run = lantern.ask(Q)
    assert run.rc == EXIT_OK, run.stderr
    assert [c.get("code") for c in run.json["toolCalls"]] == ["absolute_path", "absolute_path"]
    follow = fake.chat_requests()[1]
    for call_id in ("a1", "a2"):
        content = tool_message(follow, call_id)["content"]  # type: ignore[index]
        assert str(project.tmp) not in content and "relative" in content
    assert project.canaries[1] not in json.dumps(follow)
    assert "def greet" not in json.dumps(follow)


def test_system_prompt_of_the_cli(fake: FakeOpenAI, lantern: Lantern, project: Project) -> None:
    fake.add_turns([Turn(content="ok")])
    assert lantern.ask(Q).rc == EXIT_OK
    system = fake.chat_requests()[0]["messages"][0]
    assert system["role"] == "system"
    text = system["content"]
    assert "`proj`" in text
    assert "src/" in text and "README.md" in text and "notes.txt" in text
    assert ".env" not in text and "deploy.key" not in text and "link.txt" not in text
    assert str(project.tmp) not in text
    assert "untrusted" in text and "path:line" in text
    tools = ("read_file", "list_files", "search", "outline", "find_symbol", "find_references")
    for tool in tools:
        assert tool in text
    names = {t["function"]["name"] for t in fake.chat_requests()[0]["tools"]}
    assert names == set(tools)
