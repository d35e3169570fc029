"""`lantern/models` and `lantern/localServers` below the LSP layer: real HTTP servers on
127.0.0.1 (the fake OpenAI server, and a tiny scripted one for refusals and redirects)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.provider.endpoint import OPENAI
from lantern.agent.provider.model_lists import (
    configured_base_url,
    endpoint_models,
    local_candidates,
    probe_local_servers,
)
from lantern.converter import to_json
from lantern.settings.sources import Settings

from tests.conftest import call, ctx_for, write
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

KEY = "sk-canary-7Qx"


class Scripted:
    """An HTTP server on 127.0.0.1 answering every GET with one status, headers and body."""

    def __init__(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None):
        self.seen: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Scripted:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def closed_url() -> Iterator[str]:
    """An address on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"


def model_gets(fake: FakeOpenAI) -> list[Any]:
    return [r for r in fake.requests if r.method == "GET"]


# --- local servers ----------------------------------------------------------------------


async def test_only_servers_that_list_models_are_offered(fake: FakeOpenAI, closed_url: str) -> None:
    elsewhere = FakeOpenAI(models=["elsewhere-model"]).start()
    try:
        redirect = Scripted(302, headers={"Location": elsewhere.base_url + "/models"})
        page = Scripted(200, b"<html><title>Router login</title></html>")
        with redirect, page:
            found = await probe_local_servers(
                [
                    ("Ollama", fake.base_url),
                    ("LM Studio", closed_url),
                    ("llama.cpp", redirect.base_url),
                    ("vLLM", page.base_url),
                ]
            )
            assert redirect.seen and page.seen  # both were asked
        assert [to_json(s) for s in found] == [
            {"name": "Ollama", "baseUrl": fake.base_url, "models": ["fake-model"]}
        ]
        assert model_gets(elsewhere) == []  # the redirect was not followed
    finally:
        elsewhere.stop()
    [get] = model_gets(fake)
    assert "authorization" not in get.headers


async def test_one_probe_per_address(fake: FakeOpenAI) -> None:
    found = await probe_local_servers([("Ollama", fake.base_url), ("vLLM", fake.base_url)])
    assert [s.name for s in found] == ["Ollama"]
    assert len(model_gets(fake)) == 1


def test_candidates_follow_ollama_host() -> None:
    names = [name for name, _ in local_candidates({})]
    assert names == ["Ollama", "LM Studio", "llama.cpp", "vLLM"]
    assert local_candidates({})[0][1] == "http://127.0.0.1:11434/v1"
    assert local_candidates({"OLLAMA_HOST": "10.0.0.5:9999"})[0][1] == "http://10.0.0.5:9999/v1"


async def test_no_key_reaches_a_probed_server(fake: FakeOpenAI) -> None:
    """Even with a key and headers configured: a guessed address gets neither."""
    found = await probe_local_servers(local_candidates({"OLLAMA_HOST": fake.base_url[:-3]}))
    assert found and found[0].name == "Ollama" and found[0].models == ["fake-model"]
    for get in model_gets(fake):
        assert "authorization" not in get.headers and KEY not in str(get.headers)


class Drip:
    """A server on 127.0.0.1 that answers every connection one byte at a time, a byte
    every 0.2 s, for as long as the client stays (a status line that never ends)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.open = 0  # connections the client has not closed yet
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.open += 1
                self.accepted += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            while not self.stopping.wait(0.2):
                conn.sendall(b"H")
        except OSError:
            pass  # the client closed the connection
        finally:
            conn.close()
            with self.lock:
                self.open -= 1

    def __enter__(self) -> Drip:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.listener.close()


async def test_probes_of_a_dripping_server_end_and_never_hold_up_file_reads(ws: Path) -> None:
    """40 `lantern/localServers` at once against a server that sends a byte at a time:
    each probe gives up at its timeout and closes its connection, and a file read after
    them (on a worker thread, as every read is) is not queued behind them."""
    write(ws, "notes.txt", "still readable\n")
    with Drip() as drip:
        rounds = [probe_local_servers([("vLLM", drip.base_url)]) for _ in range(40)]
        found = await asyncio.wait_for(asyncio.gather(*rounds), HANG_S)
        result = await asyncio.wait_for(call(ctx_for(ws), "read_file", path="notes.txt"), HANG_S)
        assert "still readable" in result.content
        assert found == [[]] * 40 and drip.accepted == 40  # each probe was sent
        for _ in range(int(HANG_S / 0.05)):  # each probe closed its connection
            if drip.open == 0:
                break
            await asyncio.sleep(0.05)
        assert drip.open == 0


# --- the configured endpoint ------------------------------------------------------------


def settings(**values: Any) -> Settings:
    return Settings.model_validate(values)


def test_which_endpoint_the_settings_resolve_to() -> None:
    env = {"OLLAMA_HOST": "127.0.0.1:4321"}
    assert configured_base_url(settings(), env) == "http://127.0.0.1:4321/v1"
    assert configured_base_url(settings(apiKey=KEY), env) == OPENAI
    assert configured_base_url(settings(model="gpt-4o-mini"), env) == OPENAI
    assert configured_base_url(settings(baseUrl="http://127.0.0.1:1/v1"), env) == (
        "http://127.0.0.1:1/v1"
    )


async def test_models_are_asked_with_the_configured_key_and_shown_publicly(
    fake: FakeOpenAI,
) -> None:
    fake.models = ["m-1", "m-2"]
    base = fake.base_url + "?api-key=" + KEY
    listed = await endpoint_models(
        settings(baseUrl=base, apiKey=KEY, headers={"X-Team": "blue"}), {}
    )
    assert to_json(listed) == {"baseUrl": fake.base_url, "models": ["m-1", "m-2"]}
    [get] = model_gets(fake)
    assert get.headers["authorization"] == f"Bearer {KEY}"
    assert get.headers["x-team"] == "blue"


def assert_editor_words(detail: dict[str, Any]) -> None:
    text = str(detail)
    assert "--" not in text and KEY not in text


async def test_a_refused_key_names_the_api_key_setting() -> None:
    with Scripted(401, b'{"error": {"message": "bad key"}}') as server:
        listed = to_json(await endpoint_models(settings(baseUrl=server.base_url, apiKey=KEY), {}))
    assert listed["models"] == [] and listed["baseUrl"] == server.base_url
    detail = listed["detail"]
    assert detail["code"] == "model_auth" and detail["status"] == 401
    assert detail["fixes"][0] == {"setting": "apiKey"}
    assert "apiKey" in detail["message"] and detail["summary"] in detail["message"]
    assert_editor_words(detail)


async def test_nothing_listening_names_the_base_url_setting(closed_url: str) -> None:
    listed = to_json(await endpoint_models(settings(baseUrl=closed_url), {}))
    detail = listed["detail"]
    assert listed["models"] == []
    assert detail["code"] == "model_unreachable"
    assert detail["summary"] == f"nothing answers at {closed_url}"
    assert [f.get("setting") for f in detail["fixes"]] == ["baseUrl"]
    assert_editor_words(detail)


async def test_a_redirect_is_not_followed(fake: FakeOpenAI) -> None:
    with Scripted(307, headers={"Location": fake.base_url + "/models"}) as server:
        listed = to_json(await endpoint_models(settings(baseUrl=server.base_url, apiKey=KEY), {}))
    assert listed["detail"]["code"] == "model_redirected"
    assert model_gets(fake) == []  # neither the key nor the request went on
    assert_editor_words(listed["detail"])


async def test_a_same_origin_308_is_followed_with_the_key(fake: FakeOpenAI) -> None:
    fake.routes[("GET", "/v1/models")] = Turn(
        raw="", raw_status=308, raw_headers={"Location": "/v2/models"}
    )
    fake.routes[("GET", "/v2/models")] = Turn(raw='{"object": "list", "data": [{"id": "m2"}]}')
    listed = to_json(await endpoint_models(settings(baseUrl=fake.base_url, apiKey=KEY), {}))
    assert listed["models"] == ["m2"], listed
    gets = model_gets(fake)
    assert [g.path for g in gets] == ["/v1/models", "/v2/models"]
    assert all(g.headers["authorization"] == f"Bearer {KEY}" for g in gets)


async def test_an_azure_deployment_url_gets_the_key_as_api_key(fake: FakeOpenAI) -> None:
    base = f"http://127.0.0.1:{fake.port}/openai/deployments/gpt4o?api-version=2024-10-21"
    fake.routes[("GET", "/openai/deployments/gpt4o/models")] = Turn(raw='{"data": []}')
    await endpoint_models(settings(baseUrl=base, apiKey=KEY), {})
    [get] = model_gets(fake)
    assert get.headers["api-key"] == KEY and "authorization" not in get.headers


async def test_a_missing_v1_is_suggested() -> None:
    with Scripted(404, b"404 page not found") as server:
        root = server.base_url[: -len("/v1")]
        listed = to_json(await endpoint_models(settings(baseUrl=root), {}))
    detail = listed["detail"]
    assert detail["code"] == "model_wrong_url"
    assert detail["fixes"] == [{"setting": "baseUrl", "value": root + "/v1"}]


async def test_a_web_page_is_not_a_model_list() -> None:
    with Scripted(200, b"<html>hello</html>") as server:
        listed = to_json(await endpoint_models(settings(baseUrl=server.base_url), {}))
    assert listed["detail"]["code"] == "model_not_api"
