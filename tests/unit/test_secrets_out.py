"""`secrets_out`: every form a credential takes in a server's answer is hidden."""

from __future__ import annotations

import base64
import io
import json
import logging
from urllib.parse import quote

from lantern.agent.failure import Fix, ModelError
from lantern.agent.provider.secrets_out import HIDDEN, Secrets, StreamScrubber, guard_logging
from lantern.converter import to_json
from lantern.escaping import public_url

KEY = "sk-live/Canary+Key=0123456789"
PASSWORD = "p@ss/CANARY#9"


def test_every_form_of_the_key_is_hidden() -> None:
    secrets = Secrets.of(api_key=KEY, base_url=None)
    for form in (
        KEY,
        quote(KEY, safe=""),
        json.dumps(KEY)[1:-1].replace("/", "\\/"),
        base64.b64encode(KEY.encode()).decode(),
        base64.b64encode(f"{KEY}:".encode()).decode(),
    ):
        said = f"Incorrect API key provided: {form}. See the docs."
        assert secrets.scrub(said) == f"Incorrect API key provided: {HIDDEN}. See the docs."


def test_userinfo_query_and_headers_are_credentials() -> None:
    userinfo = f"alice:{quote(PASSWORD, safe='')}"
    base = f"https://{userinfo}@llm.example/v1?key=QKEY-12345678&api-version=2024"
    secrets = Secrets.of(api_key=None, base_url=base, headers={"api-key": "AZ-0a1b2c3d4e"})
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    text = (
        f"got Basic {basic}, {PASSWORD}, key=QKEY-12345678, api-key AZ-0a1b2c3d4e, api-version=2024"
    )
    shown = secrets.scrub(text)
    for secret in (basic, PASSWORD, "QKEY-12345678", "AZ-0a1b2c3d4e"):
        assert secret not in shown
    assert "api-version=2024" in shown  # not a credential
    assert public_url(base) == "https://llm.example/v1"


def test_a_key_cut_off_by_an_ellipsis_is_hidden() -> None:
    secrets = Secrets.of(api_key=KEY, base_url=None)
    assert secrets.scrub(f"provided: {KEY[:15]}…") == f"provided: {HIDDEN}…"
    assert secrets.scrub("sk-live…") == "sk-live…"  # fewer than 8 characters: a common prefix


def test_a_short_key_is_hidden_only_where_it_stands_alone() -> None:
    secrets = Secrets.of(api_key="ollama", base_url=None)
    assert secrets.scrub("key ollama refused; run ollama-serve") == (
        f"key {HIDDEN} refused; run ollama-serve"
    )


def test_a_model_error_is_scrubbed_everywhere() -> None:
    error = ModelError(
        "auth",
        f"refused {KEY}",
        words=f"Bearer {KEY}",
        fixes=(Fix("model", KEY, choices=(KEY,), note=KEY),),
    )
    scrubbed = Secrets.of(api_key=KEY, base_url=None).error(error)
    assert KEY not in json.dumps(to_json(scrubbed.detail()))
    assert KEY not in str(scrubbed)
    assert scrubbed.kind == "auth"


def test_log_records_are_scrubbed() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        guard_logging()
        Secrets.of(api_key="sk-logged-CANARY-1234", base_url=None)
        logging.getLogger("httpx2").warning("HTTP Request: %s", "Bearer sk-logged-CANARY-1234")
    finally:
        root.removeHandler(handler)
    assert "sk-logged-CANARY-1234" not in stream.getvalue()
    assert HIDDEN in stream.getvalue()


def test_adversarial_text_is_scrubbed_in_one_pass() -> None:
    """3 MB of key prefixes and ellipses (a hostile error page): done well inside the
    test timeout (a rescan per `…` would take hours), with every whole key hidden."""
    secrets = Secrets.of(api_key=KEY, base_url=None, headers={"api-key": "AZ-0a1b2c3d4e"})
    text = (KEY[:12] + "…") * 150_000 + KEY + "…" * 1_000_000
    shown = secrets.scrub(text)
    assert KEY not in shown
    assert shown.endswith("…" * 1_000)


def test_a_streamed_key_is_hidden_wherever_the_chunks_are_cut() -> None:
    """A reply streamed in pieces: for every place one cut (or two) can fall, what reaches
    the sink is the whole text scrubbed."""
    key = "sk-stream-CANARY-3c9e1d7a"
    secrets = Secrets.of(api_key=key, base_url=None)
    text = f"first {key} then {key}{key} and sk-stream-not-it."
    for one in range(len(text) + 1):
        for two in (one, min(len(text), one + 5), min(len(text), one + 17)):
            pieces: list[str] = []
            scrubber = StreamScrubber(secrets, pieces.append)
            for piece in (text[:one], text[one:two], text[two:]):
                scrubber(piece)
            scrubber.flush()
            # The sink got the whole text scrubbed: no key, also none split over pieces.
            assert "".join(pieces) == secrets.scrub(text)
            assert key not in "".join(pieces)


def test_without_credentials_streamed_text_passes_at_once() -> None:
    pieces: list[str] = []
    scrubber = StreamScrubber(Secrets.of(api_key=None, base_url=None), pieces.append)
    scrubber("sk-")
    assert pieces == ["sk-"]
