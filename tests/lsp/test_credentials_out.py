"""`lantern serve`: a provider's 401 that quotes the key shows it in no `lantern/ask`
result, no `lantern/event`, and no line of the server's stderr log."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.lsp.conftest import server_env
from tests.lsp.test_framing import RawServer

KEY = "sk-proj-CANARYKEY-lsp-7c2e91d04b"
PASSWORD = "pw-CANARY-lsp-5a0d"


@pytest.mark.parametrize("where", ["apiKey", "baseUrl userinfo"])
def test_a_401_that_echoes_the_key_leaves_no_trace(
    where: str, tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.api_key = "sk-the-right-key-000000"
    fake.add_turns([Turn(content="never sent")])
    root = tmp_path / "ws"
    root.mkdir()
    (root / "main.py").write_text("print('hello')\n", "utf-8")
    base = fake.base_url
    if where == "apiKey":
        secrets = (KEY, KEY[8:-4])
    else:  # sent as a Basic header, which the 401 quotes
        base = base.replace("http://", f"http://alice:{PASSWORD}@")
        secrets = (PASSWORD, base64.b64encode(f"alice:{PASSWORD}".encode()).decode())
    env = server_env(tmp_path / "home", base)
    if where == "apiKey":
        env["LANTERN_API_KEY"] = KEY
    server = RawServer(env, tmp_path / "stderr.log")
    try:
        server.initialize(root)
        server.request(2, "lantern/ask", {"question": "What does main.py print?"})
        result = server.response(2)["result"]
        assert result["stopReason"] == "error"
        assert result["detail"]["code"] == "model_auth"
        assert "[REDACTED]" in result["detail"]["providerMessage"]
        assert server.shutdown() == 0
    finally:
        server.close()
    quoted = [r.headers.get("authorization", "") for r in fake.requests]
    assert any(s in q for q in quoted for s in secrets), "the secret reached its own server"
    sent = json.dumps(server.arrived)
    log = server.stderr_path.read_text("utf-8", "replace")
    assert "lantern/event" in sent
    for secret in secrets:
        assert secret not in sent
        assert secret not in log
