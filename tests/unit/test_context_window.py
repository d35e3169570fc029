"""The context window of an endpoint's model: asked of the server, or the setting, the table
of known families, the default; each with where it came from.

Servers are the fake on 127.0.0.1 replaying each server's own bytes
(`tests/fakes/window_answers.py`). Ollama is found where `OLLAMA_HOST` says; vLLM and
llama.cpp on any port, by their model lists; LM Studio and OpenRouter, known by their
address only, are asked through `ask_server` with their names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.context import fixed_cost_tokens
from lantern.agent.provider.diagnose import Prober
from lantern.agent.provider.endpoint import Endpoint
from lantern.agent.provider.window import (
    DEFAULT_WINDOW,
    KNOWN_FAMILIES,
    ContextWindow,
    context_window,
    server_of,
)
from lantern.agent.provider.window_servers import ask_server
from lantern.settings.sources import Settings
from lantern.workspace.roots import Workspace

from tests.fakes import window_answers
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

QWEN = "qwen2.5-coder:7b"
KEY = "sk-canary-window-51c"
NEVER = 3600.0  # a server that does not answer (until it is stopped)


@pytest.fixture
def other() -> Iterator[FakeOpenAI]:
    """A second server, where nothing should arrive."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


def ollama_at(fake: FakeOpenAI) -> dict[str, str]:
    return {"OLLAMA_HOST": f"127.0.0.1:{fake.port}"}


async def window_of(
    fake: FakeOpenAI,
    model: str,
    environ: Mapping[str, str] | None = None,
    *,
    settings: Settings | None = None,
    key: str | None = None,
    fresh: bool = False,
) -> ContextWindow:
    endpoint = Endpoint(model, fake.base_url, key)
    found = context_window(endpoint, settings or Settings(), environ or {}, fresh=fresh)
    return await asyncio.wait_for(found, HANG_S)


def asked(fake: FakeOpenAI) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests]


# --------------------------------------------------------------------------- Ollama


async def test_ollama_says_the_window_of_the_loaded_model(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, num_ctx=4096, loaded=8192, trained=131072))
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert window == ContextWindow(8192, "Ollama /api/ps: the loaded model", 131072, kind="server")
    assert window.describe() == (
        "8,192 tokens (Ollama /api/ps: the loaded model; trained for 131,072)"
    )
    show = next(r for r in fake.requests if r.path == "/api/show")
    assert show.method == "POST" and show.body == {"model": QWEN}


async def test_ollama_names_without_a_tag_are_its_latest(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.ollama(model="qwen2.5-coder:latest", loaded=16384))
    window = await window_of(fake, "qwen2.5-coder", ollama_at(fake))
    assert (window.tokens, window.kind) == (16384, "server")


async def test_a_modelfile_num_ctx_is_the_window_until_the_model_is_loaded(
    fake: FakeOpenAI,
) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, num_ctx=16384, trained=32768))
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert window == ContextWindow(
        16384, "Ollama /api/show: the model's num_ctx", 32768, kind="server"
    )


async def test_ollama_runs_a_model_no_longer_than_it_was_trained_for(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, num_ctx=65536, trained=32768))
    assert (await window_of(fake, QWEN, ollama_at(fake))).tokens == 32768


async def test_a_model_not_loaded_gets_ollamas_default_and_is_asked_again(
    fake: FakeOpenAI,
) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, trained=32768))
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert (window.tokens, window.kind, window.trained) == (4096, "default", 32768)
    assert window.source.startswith("default: Ollama's own for a model not loaded yet")
    assert "OLLAMA_CONTEXT_LENGTH" in window.source
    before = len(fake.requests)
    fake.routes.update(window_answers.ollama(model=QWEN, trained=32768, loaded=32768))
    again = await window_of(fake, QWEN, ollama_at(fake))
    assert len(fake.requests) > before
    assert (again.tokens, again.source) == (32768, "Ollama /api/ps: the loaded model")


async def test_a_small_model_gets_no_more_than_it_was_trained_for(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, trained=2048))
    assert (await window_of(fake, QWEN, ollama_at(fake))).tokens == 2048


async def test_ollama_not_answering_falls_back_and_says_so(fake: FakeOpenAI) -> None:
    for route in (("POST", "/api/show"), ("GET", "/api/ps")):
        fake.routes[route] = Turn(raw='{"error":"busy"}', raw_status=503)
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert window == ContextWindow(
        DEFAULT_WINDOW, "default: Ollama /api/show and /api/ps did not answer", kind="default"
    )


async def test_a_server_that_never_answers_holds_nothing_up(fake: FakeOpenAI) -> None:
    # Bounded by the discovery's own timeouts: `window_of` gives up only after HANG_S.
    for route in (("POST", "/api/show"), ("GET", "/api/ps")):
        fake.routes[route] = Turn(raw="{}", delay=NEVER)
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert window.kind == "default" and "did not answer" in window.source


async def test_a_server_that_drips_its_answer_holds_nothing_up(fake: FakeOpenAI) -> None:
    # Each byte in time for the request's own timeout; the whole discovery is bounded.
    drip = Turn(raw=['{"data":[', *([" "] * 200), "]}"], chunk_delay=0.5)
    fake.routes[("GET", "/v1/models")] = drip
    window = await window_of(fake, "some-model")
    assert window == ContextWindow(
        DEFAULT_WINDOW, "default: the endpoint did not answer in time", kind="default"
    )


async def test_answers_of_the_wrong_shape_fall_back(fake: FakeOpenAI) -> None:
    fake.routes[("POST", "/api/show")] = Turn(raw='{"model_info":[],"parameters":7}')
    fake.routes[("GET", "/api/ps")] = Turn(raw='{"models":[{"name":1,"context_length":"x"}]}')
    window = await window_of(fake, QWEN, ollama_at(fake))
    assert (window.tokens, window.kind) == (4096, "default")


# --------------------------------------------------------------------------- llama.cpp, vLLM


async def test_llamacpp_on_any_port_says_its_slots_window(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.llamacpp(n_ctx=4096, n_ctx_train=131072, alias="m"))
    window = await window_of(fake, "m")
    assert window == ContextWindow(
        4096, "llama.cpp /props: the slot's n_ctx", 131072, kind="server"
    )
    assert ("GET", "/props") in asked(fake)


async def test_vllm_on_any_port_says_max_model_len(fake: FakeOpenAI) -> None:
    fake.routes.update(
        window_answers.vllm(model="Qwen/Qwen2.5-Coder-7B-Instruct", max_model_len=24576)
    )
    window = await window_of(fake, "Qwen/Qwen2.5-Coder-7B-Instruct")
    assert window == ContextWindow(24576, "vLLM /v1/models: max_model_len", kind="server")


async def test_a_vllm_lora_adapter_has_its_base_models_window(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.vllm(max_model_len=16384, lora="sql-lora"))
    assert (await window_of(fake, "sql-lora")).tokens == 16384


# --------------------------------------------------------------------------- LM Studio


async def ask_lmstudio(fake: FakeOpenAI, model: str = "qwen2.5-coder-7b-instruct") -> Any:
    return await ask_server("lmstudio", fake.base_url, model, Prober(None, {}, timeout=5.0))


async def test_lmstudio_says_the_length_it_loaded_the_model_with(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.lmstudio_v1(loaded=8192))
    found = await ask_lmstudio(fake)
    assert (found.tokens, found.source, found.trained) == (
        8192,
        "LM Studio: the loaded length",
        32768,
    )


async def test_an_older_lmstudio_says_it_in_its_v0_list(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.lmstudio_v0(loaded=12288))
    found = await ask_lmstudio(fake)
    assert (found.tokens, found.trained) == (12288, 32768)


async def test_lmstudio_before_loading_gives_no_window_yet(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.lmstudio_v1())
    found = await ask_lmstudio(fake)
    assert found.tokens is None and not found.settled
    assert (found.source, found.trained) == ("LM Studio has not loaded the model yet", 32768)


# --------------------------------------------------------------------------- OpenRouter


async def test_openrouter_says_the_models_context_length(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.openrouter(context_length=32768))
    base = f"http://127.0.0.1:{fake.port}/api/v1"
    # A routing suffix (`:nitro`) names the same model.
    model = "qwen/qwen-2.5-coder-32b-instruct:nitro"
    found = await ask_server("openrouter", base, model, Prober(KEY, {}, timeout=5.0))
    assert (found.tokens, found.source) == (32768, "OpenRouter: context_length")
    assert server_of("https://openrouter.ai/api/v1", {}) == "openrouter"


async def test_another_endpoint_listing_context_length_is_read(fake: FakeOpenAI) -> None:
    fake.routes[("GET", "/v1/models")] = window_answers.openrouter()[("GET", "/api/v1/models")]
    window = await window_of(fake, "openai/gpt-4o-mini")
    assert window == ContextWindow(128000, "the endpoint's /models: context_length", kind="server")


# --------------------------------------------------------------------------- setting, table


async def test_the_setting_is_the_window_and_nothing_is_asked(fake: FakeOpenAI) -> None:
    fake.routes.update(window_answers.vllm(max_model_len=4096))
    window = await window_of(fake, "m", settings=Settings(max_context_tokens=50000))
    assert window == ContextWindow(50000, "the maxContextTokens setting", kind="setting")
    assert fake.requests == []


async def test_a_hosted_api_is_not_asked_its_families_come_from_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[str] = []

    async def record(self: Prober, url: str, body: Any = None, **_: Any) -> None:
        sent.append(url)

    monkeypatch.setattr(Prober, "json", record)
    cases = {
        ("gpt-4o-mini", None): (128_000, "gpt-4o"),
        ("o1-mini", "https://api.openai.com/v1"): (128_000, "o1-mini"),
        ("claude-sonnet-4-5", "https://gateway.example.openai.azure.com/v1"): (200_000, "claude-"),
        ("deepseek-chat", "https://api.deepseek.com/v1"): (65_536, "deepseek-chat"),
        ("meta-llama/llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"): (
            131_072,
            "llama-3.3",
        ),
    }
    for (model, base_url), (tokens, family) in cases.items():
        endpoint = Endpoint(model, base_url, KEY)
        window = await context_window(endpoint, Settings(), {})
        assert window == ContextWindow(tokens, f"known model family: {family}", kind="table")
        assert KNOWN_FAMILIES[family] == tokens
    unknown = await context_window(
        Endpoint("mistral-tiny-x", "https://api.mistral.ai/v1", KEY), Settings(), {}
    )
    assert unknown == ContextWindow(
        DEFAULT_WINDOW, "default: the endpoint reports no window", kind="default"
    )
    assert sent == []


async def test_a_local_server_that_does_not_say_gets_the_default_not_the_table(
    fake: FakeOpenAI,
) -> None:
    # A llama-3.1 model on Ollama runs with Ollama's window, not the 131,072 it was
    # trained for: the table is only for hosted APIs.
    fake.routes[("POST", "/api/show")] = Turn(raw='{"error":"x"}', raw_status=500)
    fake.routes[("GET", "/api/ps")] = Turn(raw='{"error":"x"}', raw_status=500)
    window = await window_of(fake, "llama-3.1-8b", ollama_at(fake))
    assert (window.tokens, window.kind) == (DEFAULT_WINDOW, "default")


# --------------------------------------------------------------------------- cache, keys


async def test_a_servers_answer_is_kept_the_second_question_asks_nothing(
    fake: FakeOpenAI,
) -> None:
    fake.routes.update(window_answers.ollama(model=QWEN, loaded=8192))
    first = await window_of(fake, QWEN, ollama_at(fake))
    count = len(fake.requests)
    assert count >= 1
    assert await window_of(fake, QWEN, ollama_at(fake)) == first
    assert len(fake.requests) == count
    await window_of(fake, QWEN, ollama_at(fake), fresh=True)
    assert len(fake.requests) > count


async def test_the_key_goes_only_to_the_endpoints_own_origin(
    fake: FakeOpenAI, other: FakeOpenAI
) -> None:
    # Ollama said to run elsewhere; the endpoint, a llama-server with a key, is asked at
    # its own origin only (its model list, then /props at its root).
    fake.api_key = KEY
    fake.routes.update(window_answers.llamacpp(n_ctx=8192, alias="m"))
    window = await window_of(fake, "m", ollama_at(other), key=KEY)
    assert (window.tokens, window.source) == (8192, "llama.cpp /props: the slot's n_ctx")
    assert other.requests == []
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in fake.requests)


async def test_a_redirect_is_not_followed_so_the_key_stays_home(
    fake: FakeOpenAI, other: FakeOpenAI
) -> None:
    other.routes.update(window_answers.vllm(max_model_len=4096))
    fake.redirect_to = other.base_url
    window = await window_of(fake, "m", key=KEY)
    assert window.kind == "default" and fake.requests
    assert other.requests == []


# --------------------------------------------------------------------------- fixed cost


def test_the_fixed_cost_grows_with_the_workspace_listing(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"module_with_a_long_name_{i:02d}.py").write_text("", "utf-8")
    least = fixed_cost_tokens()
    assert least > 500  # a system prompt and six tool definitions
    assert fixed_cost_tokens(Workspace([tmp_path])) > least
