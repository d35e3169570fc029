"""`lantern doctor` and `lantern doctor --probe`, as a real subprocess against the fake model.

The probe makes one tiny tool-call round trip with a dummy `get_time` tool and
reports what the endpoint does; these tests check the report a user reads, the
exit code, and that nothing from any workspace went to the model.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Project

EXIT_OK, EXIT_ENDPOINT = 0, 3


def doctor(
    env: dict[str, str], cwd: Path, *extra: str, **settings: str
) -> subprocess.CompletedProcess[str]:
    run_env = dict(env)
    names = {
        "model": "LANTERN_MODEL",
        "base_url": "LANTERN_BASE_URL",
        "protocol": "LANTERN_TOOL_PROTOCOL",
    }
    for key, value in settings.items():
        run_env[names[key]] = value
    return subprocess.run(
        [sys.executable, "-m", "lantern.cli", "doctor", *extra],
        env=run_env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def line(output: str, label: str) -> str:
    found = [ln.strip() for ln in output.splitlines() if ln.strip().startswith(label)]
    assert len(found) == 1, f"expected one {label!r} line in:\n{output}"
    return found[0]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_probe_reports_an_openai_compatible_endpoint(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.add_turns(
        [
            Turn(
                tool_calls=[
                    {"id": "call_a", "name": "get_time", "arguments": {"timezone": "UTC"}},
                    {"id": "call_b", "name": "get_time", "arguments": {"timezone": "Europe/Paris"}},
                ]
            ),
            Turn(content="It is 12:00 in UTC and 12:00 in Paris."),
        ]
    )
    done = doctor(env, project.root, "--probe", model="fake-model", base_url=fake.base_url)
    out = done.stdout
    assert done.returncode == EXIT_OK, out + done.stderr
    assert "2 calls to get_time" in line(out, "tools:")
    assert "auto uses native tool calls" in line(out, "tools:")
    assert line(out, "parallel calls:").endswith("yes")
    assert line(out, "reasoning:").endswith("none seen")
    assert line(out, "usage:").endswith("sent in the stream")
    assert line(out, "stream_options:").endswith("accepted")
    assert "It is 12:00 in UTC" in line(out, "answer:")

    first, second = fake.chat_requests()
    assert [t["function"]["name"] for t in first["tools"]] == ["get_time"]
    assert second["messages"][-2:] == [
        {"role": "tool", "tool_call_id": "call_a", "content": "12:00 in UTC"},
        {"role": "tool", "tool_call_id": "call_b", "content": "12:00 in Europe/Paris"},
    ]
    sent = json.dumps(fake.chat_requests())
    assert "proj" not in sent and "greet" not in sent and "README" not in sent
    assert not any(canary in sent for canary in project.canaries)


def _deepseek(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    chunk = {
        "id": "p",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "deepseek-reasoner",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return "data: " + json.dumps(chunk) + "\n\n"


def test_probe_reports_reasoning_one_call_and_refused_stream_options(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # A DeepSeek-style stream (reasoning_content, usage on the finish chunk) behind a
    # server that refuses stream_options with a 422, as Mistral's API does.
    usage = {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}
    call = {
        "index": 0,
        "id": "call_00_x",
        "type": "function",
        "function": {"name": "get_time", "arguments": '{"timezone": "UTC"}'},
    }
    fake.reject_stream_options = Turn(
        raw='{"object":"error","message":{"detail":[{"loc":["body","stream_options"]}]}}',
        raw_status=422,
    )
    fake.add_turns(
        [
            Turn(
                raw=[
                    _deepseek({"role": "assistant", "reasoning_content": "Need the time."}),
                    _deepseek({"tool_calls": [call]}),
                    _deepseek({}, "tool_calls", usage=usage),
                    "data: [DONE]\n\n",
                ]
            ),
            Turn(
                raw=[
                    _deepseek({"reasoning_content": "Got it."}),
                    _deepseek({"content": "It is 12:00 UTC."}, "stop", usage=usage),
                    "data: [DONE]\n\n",
                ]
            ),
        ]
    )
    done = doctor(env, project.root, "--probe", model="deepseek-reasoner", base_url=fake.base_url)
    out = done.stdout
    assert done.returncode == EXIT_OK, out + done.stderr
    assert "1 call to get_time" in line(out, "tools:")
    assert line(out, "parallel calls:").endswith("no (one call per reply)")
    assert line(out, "reasoning:").endswith("reasoning_content")
    assert line(out, "usage:").endswith("sent in the stream")
    assert "rejected" in line(out, "stream_options:")
    # The reasoning went back with the call, as DeepSeek requires.
    answered = [r for r in fake.chat_requests() if "stream_options" not in r]
    assert answered[1]["messages"][2]["reasoning_content"] == "Need the time."


OLLAMA_NO_TOOLS = Turn(
    raw='{"error":{"message":"registry.ollama.ai/library/gemma2:2b does not support tools",'
    '"type":"invalid_request_error","param":null,"code":null}}',
    raw_status=400,
)


def test_probe_without_tool_support_says_auto_uses_text(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.reject_tools = OLLAMA_NO_TOOLS
    fake.add_turns(
        [
            Turn(
                content="I cannot check the time.",
                usage={"prompt_tokens": 5, "completion_tokens": 5},
            )
        ]
    )
    done = doctor(env, project.root, "--probe", model="gemma2:2b", base_url=fake.base_url)
    out = done.stdout
    assert done.returncode == EXIT_OK, out + done.stderr
    tools = line(out, "tools:")
    assert "NOT supported" in tools and "gemma2:2b does not support tools" in tools
    assert "auto uses the text tool protocol" in tools
    assert "I cannot check the time." in line(out, "answer:")
    requests = fake.chat_requests()
    assert len(requests) == 2 and requests[0]["tools"] and "tools" not in requests[1]


def test_probe_without_tool_support_fails_when_native_is_required(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.reject_tools = OLLAMA_NO_TOOLS
    fake.add_turns([Turn(content="plain chat works")])
    done = doctor(
        env, project.root, "--probe", model="gemma2:2b", base_url=fake.base_url, protocol="native"
    )
    assert done.returncode == EXIT_ENDPOINT, done.stdout + done.stderr
    assert "does not support tools" in line(done.stdout, "tools:")
    assert "toolProtocol is 'native'" in done.stdout


def test_probe_failure_exits_with_the_servers_words(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    words = 'model "qwen9:1b" not found, try pulling it first'
    fake.add_turns(
        [Turn(raw=json.dumps({"error": {"message": words, "type": "api_error"}}), raw_status=404)]
    )
    done = doctor(env, project.root, "--probe", model="qwen9:1b", base_url=fake.base_url)
    assert done.returncode == EXIT_ENDPOINT
    failed = line(done.stdout, "FAILED:")
    assert "try pulling it first" in failed
    assert "--model" not in done.stdout  # doctor takes no such flag


def test_probe_of_an_unreachable_endpoint_fails(env: dict[str, str], project: Project) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = doctor(env, project.root, "--probe", model="m", base_url=url)
    assert done.returncode == EXIT_ENDPOINT
    assert "NOT reachable" in line(done.stdout, "Endpoint:")
    failed = line(done.stdout, "FAILED:")
    assert "cannot reach the model endpoint" in failed and url in failed
    assert "--base-url" not in done.stdout and "`baseUrl`" in line(done.stdout, "fix:")


def test_doctor_finds_ollama_through_ollama_host(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # No model or URL configured: doctor looks where `lantern ask` would, OLLAMA_HOST included.
    fake.add_turns([Turn(content="no tools needed", tool_calls=[])])
    host_env = dict(env, OLLAMA_HOST=f"127.0.0.1:{fake.port}")
    done = doctor(host_env, project.root)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    endpoint = line(done.stdout, "Endpoint:")
    assert endpoint == f"Endpoint:     {fake.base_url} reachable; models: fake-model"
    assert fake.chat_requests() == []  # without --probe, no model call
    assert "flags" not in done.stdout and "--" not in done.stdout  # it takes none of ask's

    probed = doctor(host_env, project.root, "--probe")
    assert f"model 'fake-model' at {fake.base_url}" in line(probed.stdout, "Probe:")
    assert "without calling the tool" in line(probed.stdout, "tools:")


def test_probe_without_any_model_says_how_to_set_one(env: dict[str, str], project: Project) -> None:
    # Nothing configured and no Ollama (the env fixture points OLLAMA_HOST at a closed port).
    done = doctor(env, project.root, "--probe")
    assert done.returncode == EXIT_ENDPOINT
    assert line(done.stdout, "Probe:").startswith("Probe:        not run — no model is configured")
    assert "LANTERN_MODEL" in done.stdout


def test_probe_sees_calls_written_as_text(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # Tools accepted, but the model writes Hermes markup instead of a native call.
    fake.add_turns(
        [
            Turn(
                content='<tool_call>{"name": "get_time", '
                '"arguments": {"timezone": "UTC"}}</tool_call>'
            )
        ]
    )
    done = doctor(env, project.root, "--probe", model="qwen2.5:7b", base_url=fake.base_url)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "switches to the text tool protocol" in line(done.stdout, "tools:")
    assert len(fake.chat_requests()) == 1


def test_probe_finds_the_url_that_answers(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # Ollama asked without /v1: its router answers gin's "404 page not found".
    fake.off_route = Turn(raw="404 page not found", raw_status=404, raw_content_type="text/plain")
    fake.ollama_native = True
    fake.models = ["qwen2.5-coder:7b"]
    root = f"http://127.0.0.1:{fake.port}"
    done = doctor(env, project.root, "--probe", model="qwen2.5-coder:7b", base_url=root)
    assert done.returncode == EXIT_ENDPOINT, done.stdout + done.stderr
    out = done.stdout
    assert line(out, "address:") == (
        f"address:        NOT the API: {root} lists no models, {root}/v1 does → set `baseUrl` "
        f"to {root}/v1"
    )
    assert line(out, "models:") == "models:         qwen2.5-coder:7b"
    assert f"set `baseUrl` to {root}/v1" in line(out, "fix:")
    assert len(fake.chat_requests()) == 1
    assert "--" not in out.replace("…/models", "")  # doctor takes none of ask's flags
