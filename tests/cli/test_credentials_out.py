"""The endpoint's credentials never leave the process, and never go to another origin.

The fake model answers a wrong key with a 401 that quotes the `Authorization` header it
got ("Incorrect API key provided: Bearer sk-…"), as some providers and gateways do. The
key — and a password in the base URL, a credential in the `headers` setting — must then
appear in none of what `lantern ask` (text and `--json`), `lantern doctor` and `lantern
doctor --probe` print, nor in the audit log. A server that answers 307 to another
origin (127.0.0.1 on another port) must not pass the key on: nothing reaches it.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Lantern, Project
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.hang import HANG_S

KEY = "sk-proj-CANARYKEY-4b1f9e27d3a8c6e05f"
PASSWORD = "pw-CANARY-88d1c3e7"
HEADER_TOKEN = "hdr-CANARY-0e5a7b9c2f"
RIGHT_KEY = "sk-the-right-key-000000"


def forms(secret: str, user: str | None = None) -> list[str]:
    """The secret, and how a request carries it: percent-encoded, in a Basic header."""
    found = [secret, secret[4:-4]]  # the middle too: a part shown is a part leaked
    if user is not None:
        found.append(base64.b64encode(f"{user}:{secret}".encode()).decode())
    return found


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lantern.cli", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


def audit_text(env: dict[str, str]) -> str:
    found = list(Path(env["XDG_STATE_HOME"]).rglob("audit.jsonl"))
    return "".join(p.read_text("utf-8") for p in found if p.is_file())


def assert_nowhere(secrets: list[str], *texts: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked in:\n{text}"


@pytest.fixture
def refusing(fake: FakeOpenAI) -> FakeOpenAI:
    fake.api_key = RIGHT_KEY  # any other key gets the echoing 401
    fake.add_turns([Turn(content="never sent")])
    return fake


def test_a_401_that_echoes_the_key_shows_it_nowhere(
    refusing: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    text = lantern.ask("What does app.py do?", "--api-key", KEY, as_json=False)
    as_json = lantern.ask("What does app.py do?", "--api-key", KEY)
    assert text.rc == as_json.rc == 3
    # The provider's words are still shown, with the key hidden in them.
    assert "rejected the API key (401)" in text.stderr
    assert "Incorrect API key provided: Bearer [REDACTED]" in text.stderr
    detail = as_json.json["detail"]
    assert detail["code"] == "model_auth"
    assert "[REDACTED]" in detail["providerMessage"]
    # The key did reach the server (it is the one that echoed it).
    assert any(KEY in r.headers.get("authorization", "") for r in refusing.requests)
    env = dict(env, LANTERN_API_KEY=KEY, LANTERN_BASE_URL=refusing.base_url)
    env["LANTERN_MODEL"] = "fake-model"
    doctor = run(env, project.tmp, "doctor")
    probe = run(env, project.tmp, "doctor", "--probe")
    assert doctor.returncode == probe.returncode == 3
    assert "rejected the API key (401)" in probe.stdout
    assert_nowhere(
        forms(KEY),
        text.stdout,
        text.stderr,
        as_json.stdout,
        as_json.stderr,
        doctor.stdout + doctor.stderr,
        probe.stdout + probe.stderr,
        audit_text(env),
    )


def test_a_key_cut_short_in_the_providers_words_is_hidden_too(
    refusing: FakeOpenAI, lantern: Lantern
) -> None:
    """The words are capped at 300 characters: a key that straddles the cut is hidden
    before the cut is made, so no first half of it is shown either."""
    long_key = "sk-" + "A1b2C3d4" * 40  # 323 characters: the cap falls inside it
    done = lantern.ask("q", "--api-key", long_key)
    assert done.rc == 3
    assert_nowhere([long_key[:40], long_key[-40:]], done.stdout, done.stderr)


def test_a_password_in_the_base_url_shows_nowhere(
    refusing: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    """httpx sends `user:password@` as a Basic header; the 401 quotes that header."""
    base = refusing.base_url.replace("http://", f"http://alice:{PASSWORD}@")
    done = lantern.ask("q", base_url=base)
    assert done.rc == 3 and "[REDACTED]" in done.json["detail"]["providerMessage"]
    sent = [r.headers.get("authorization", "") for r in refusing.requests]
    assert any(s.startswith("Basic ") for s in sent)  # it went, as Basic, to its own host
    env = dict(env, LANTERN_BASE_URL=base, LANTERN_MODEL="fake-model")
    doctor = run(env, project.tmp, "doctor", "--probe")
    assert doctor.returncode == 3
    assert "NOT reachable (HTTP Error 401" in doctor.stdout  # the host, not a DNS failure
    assert_nowhere(
        forms(PASSWORD, "alice"),
        done.stdout,
        done.stderr,
        doctor.stdout + doctor.stderr,
        audit_text(env),
    )


@pytest.mark.parametrize("char", ["/", "#", "?"])
def test_a_password_urllib_would_misread_is_never_echoed(
    char: str, env: dict[str, str], project: Project
) -> None:
    """An unescaped `/`, `#` or `?` makes urllib read part of the password as the host's
    port or the path: refused as a setting, and the message shows no part of it."""
    secret = f"pw{char}CANARY88d1c3e7"
    env = dict(env, LANTERN_BASE_URL=f"http://alice:{secret}@127.0.0.1:9/v1")
    env["LANTERN_MODEL"] = "m"
    done = run(env, project.tmp, "doctor", "--probe")
    assert done.returncode == 2
    assert "must be percent-encoded" in done.stderr
    assert "Traceback" not in done.stderr
    assert_nowhere(["CANARY88", "alice", "pw"], done.stdout, done.stderr)


def test_a_credential_in_the_headers_setting_shows_nowhere(
    refusing: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    lantern.config(f'[headers]\nAuthorization = "Bearer {HEADER_TOKEN}"\n')
    done = lantern.ask("q")
    assert done.rc == 3
    assert any(HEADER_TOKEN in r.headers.get("authorization", "") for r in refusing.requests)
    env = dict(env, LANTERN_BASE_URL=refusing.base_url, LANTERN_MODEL="fake-model")
    doctor = run(env, project.tmp, "doctor", "--probe")
    assert_nowhere(forms(HEADER_TOKEN), done.stdout, done.stderr, doctor.stdout + doctor.stderr)


def test_a_redirect_to_another_origin_gets_nothing(
    fake: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    """Every path that makes a request — ask, doctor's model list, the probe's address
    check and round trip — meets a 307 to another port on 127.0.0.1: none follows it."""
    elsewhere = FakeOpenAI([Turn(content="stolen")]).start()
    try:
        fake.redirect_to = elsewhere.base_url
        done = lantern.ask("q", "--api-key", KEY)
        env = dict(env, LANTERN_API_KEY=KEY, LANTERN_BASE_URL=fake.base_url)
        env["LANTERN_MODEL"] = "fake-model"
        doctor = run(env, project.tmp, "doctor", "--probe")
        assert elsewhere.requests == []
    finally:
        elsewhere.stop()
    assert done.rc == 3 and done.json["detail"]["code"] == "model_redirected"
    assert doctor.returncode == 3
    assert "redirect" in doctor.stdout
    paths = {r.path for r in fake.requests}
    assert "/v1/models" in paths and "/v1/chat/completions" in paths  # all were tried
    assert_nowhere(forms(KEY), done.stdout, done.stderr, doctor.stdout + doctor.stderr)


def test_an_unwritable_audit_log_stops_ask_before_anything_is_sent(
    fake: FakeOpenAI, lantern: Lantern, env: dict[str, str]
) -> None:
    fake.add_turns([Turn(content="never sent")])
    # A folder where the log file should be: no append can succeed, even as root.
    log = Path(env["XDG_STATE_HOME"]) / "lantern" / "log" / "audit.jsonl"
    log.mkdir(parents=True)
    done = lantern.ask("q", as_json=False)
    assert done.rc == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lantern: cannot write the audit log")
    assert "audit.jsonl" in lines[0]
    assert fake.requests == []  # the model was asked nothing
    assert json.dumps(done.stdout) == '""'


def _chunk(delta: dict[str, object], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return "data: " + json.dumps({**body, "choices": [choice]}) + "\n\n"


def test_a_server_that_echoes_the_key_in_its_reply_shows_it_nowhere(
    fake: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    """The key streamed back as the answer and as reasoning, cut across chunks (so no one
    chunk holds it whole), is hidden in the streamed answer, the result and the log."""
    cut = 11
    for _ in range(2):
        fake.add_turns(
            [
                Turn(
                    raw=[
                        _chunk({"role": "assistant", "reasoning_content": f"I see {KEY[:cut]}"}),
                        _chunk({"reasoning_content": f"{KEY[cut:]} in the header."}),
                        _chunk({"content": f"Your key is {KEY[:cut]}"}),
                        _chunk({"content": f"{KEY[cut:]}, as sent; app.py prints hello."}),
                        _chunk({}, "stop"),
                        "data: [DONE]\n\n",
                    ]
                )
            ]
        )
    text = lantern.ask("What does app.py do?", "--api-key", KEY, as_json=False)
    as_json = lantern.ask("What does app.py do?", "--api-key", KEY)
    assert text.rc == as_json.rc == 0, text.stderr
    assert "Your key is [REDACTED], as sent; app.py prints hello." in text.stdout
    assert as_json.json["answer"] == "Your key is [REDACTED], as sent; app.py prints hello."
    assert_nowhere(
        forms(KEY), text.stdout, text.stderr, as_json.stdout, as_json.stderr, audit_text(env)
    )
