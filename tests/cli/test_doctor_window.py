"""`lantern doctor`'s context window, as a real subprocess against servers replayed byte for byte.

Every report says the window and where it came from; `--probe` asks again after its
round trip and says when the window is small for Lantern, or too small for any
question (then it fails), with the fix in settings' and the server's own words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.cli.test_doctor_probe import EXIT_ENDPOINT, EXIT_OK, doctor, line
from tests.fakes import window_answers
from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Project

QWEN = "qwen2.5-coder:7b"
ANSWER = Turn(content="It is noon.", tool_calls=[])


def ollama_env(env: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    """The fake answers where Ollama is said to run (`OLLAMA_HOST`, as `lantern ask` reads it)."""
    return dict(env, OLLAMA_HOST=f"127.0.0.1:{fake.port}")


def test_doctor_says_the_window_ollama_runs_the_loaded_model_with(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.models = [QWEN]
    fake.routes.update(window_answers.ollama(model=QWEN, loaded=8192, trained=131072))
    done = doctor(ollama_env(env, fake), project.root, model=QWEN, base_url=fake.base_url)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert line(done.stdout, "Context window:") == (
        "Context window: 8,192 tokens (Ollama /api/ps: the loaded model; trained for 131,072)"
    )
    assert fake.chat_requests() == []  # without --probe, no model call


def test_doctor_says_ollamas_default_for_a_model_not_loaded(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.models = [QWEN]
    fake.routes.update(window_answers.ollama(model=QWEN, trained=32768))
    done = doctor(ollama_env(env, fake), project.root, model=QWEN, base_url=fake.base_url)
    window = line(done.stdout, "Context window:")
    assert window.startswith("Context window: 4,096 tokens (default: Ollama's own")
    assert "OLLAMA_CONTEXT_LENGTH" in window and window.endswith("trained for 32,768)")


def test_the_setting_wins_over_what_the_server_says(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.routes.update(window_answers.vllm(model="fake-model", max_model_len=4096))
    config = Path(env["XDG_CONFIG_HOME"]) / "lantern" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("maxContextTokens = 24000\n", "utf-8")
    done = doctor(env, project.root, model="fake-model", base_url=fake.base_url)
    assert line(done.stdout, "Context window:") == (
        "Context window: 24,000 tokens (the maxContextTokens setting)"
    )
    lists = [r for r in fake.requests if r.method == "GET" and r.path == "/v1/models"]
    assert len(lists) == 1  # the report's model list; nothing asked about the window


def test_doctor_finds_a_vllm_behind_any_address(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # Not vLLM's default port: its model list tells what it is.
    fake.routes.update(window_answers.vllm(model="Qwen/Qwen2.5-Coder-7B-Instruct"))
    done = doctor(env, project.root, model="Qwen/Qwen2.5-Coder-7B-Instruct", base_url=fake.base_url)
    assert line(done.stdout, "Context window:") == (
        "Context window: 32,768 tokens (vLLM /v1/models: max_model_len)"
    )


def test_doctor_without_a_model_says_the_window_waits_for_one(
    env: dict[str, str], project: Project
) -> None:
    done = doctor(env, project.root)
    assert line(done.stdout, "Context window:") == "Context window: unknown until a model is set"


def test_probe_says_a_modelfile_window_is_small_and_how_to_raise_it(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    fake.models = [QWEN]
    fake.routes.update(window_answers.ollama(model=QWEN, num_ctx=8192, trained=32768))
    fake.add_turns([ANSWER])
    done = doctor(
        ollama_env(env, fake), project.root, "--probe", model=QWEN, base_url=fake.base_url
    )
    assert done.returncode == EXIT_OK, done.stdout + done.stderr  # small, but questions fit
    window = line(done.stdout, "context window:")
    assert window.startswith(
        "context window: 8,192 tokens (Ollama /api/show: the model's num_ctx; trained for 32,768)"
    )
    assert "Lantern's system prompt and tools take about" in window
    assert "small for Lantern" in line(done.stdout, "warning:")
    fixes = [ln.strip() for ln in done.stdout.splitlines() if ln.strip().startswith("fix:")]
    assert "OLLAMA_CONTEXT_LENGTH=16384" in fixes[0]
    assert any("`model`" in fix for fix in fixes)
    assert "--" not in done.stdout  # doctor takes none of ask's flags


def test_probe_reads_the_window_again_once_the_model_is_loaded(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # Not loaded when the report starts; the probe's round trip loads it (here: the
    # replayed /api/ps changes under it), and the probe says the loaded window.
    fake.models = [QWEN]
    fake.routes.update(window_answers.ollama(model=QWEN, trained=32768))
    fake.routes_after_chat = window_answers.ollama(model=QWEN, trained=32768, loaded=32768)
    fake.add_turns([ANSWER])
    done = doctor(
        ollama_env(env, fake), project.root, "--probe", model=QWEN, base_url=fake.base_url
    )
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "4,096 tokens (default: Ollama's own" in line(done.stdout, "Context window:")
    assert line(done.stdout, "context window:").startswith(
        "context window: 32,768 tokens (Ollama /api/ps: the loaded model)"
    )
    assert "warning:" not in done.stdout


def test_probe_fails_a_window_that_cannot_hold_lanterns_prompt_and_tools(
    fake: FakeOpenAI, env: dict[str, str], project: Project
) -> None:
    # llama-server started with -c 2048 and 2 slots: each slot has 1,024 tokens.
    fake.routes.update(window_answers.llamacpp(n_ctx=1024, alias="fake-model"))
    fake.add_turns([ANSWER])
    done = doctor(env, project.root, "--probe", model="fake-model", base_url=fake.base_url)
    assert done.returncode == EXIT_ENDPOINT, done.stdout + done.stderr
    assert line(done.stdout, "context window:").startswith(
        "context window: 1,024 tokens (llama.cpp /props: the slot's n_ctx; trained for 32,768)"
    )
    assert "cannot hold Lantern's system prompt" in line(done.stdout, "FAILED:")
    fixes = [ln.strip() for ln in done.stdout.splitlines() if ln.strip().startswith("fix:")]
    assert "start llama-server with a larger context" in fixes[0]
    assert "`model`" in fixes[1] and len(fixes) == 2  # the server said it: no setting to fix
