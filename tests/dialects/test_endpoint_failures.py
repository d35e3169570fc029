"""When the endpoint says no: each failure a newcomer meets, as the server writes it.

Every case replays the server's own bytes, named in its comment, through
`lantern ask`, and checks what a user can act on: the stable code, how many
requests reached the server (nothing deterministic is resent), the fix (the
setting and, where known, its value), the exit code, and the text a person
reads on the terminal (line breaks kept, no literal `\\n`, the fix as a flag).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.cli.conftest import Lantern, Project, Run
from tests.cli.test_doctor_probe import doctor
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

EXIT_MODEL = 3
LANTERN_FLAGS = re.compile(r"--(model|base-url|api-key|max-steps|tool-protocol|approve)\b|LANTERN_")


def detail(run: Run, code: str) -> dict[str, Any]:
    """The run stopped on an error with this code; its structured detail."""
    assert run.rc == EXIT_MODEL, run.stderr
    out = run.json
    assert out["stopReason"] == "error" and out["errorCode"] == code, out
    assert out["detail"]["code"] == code
    # A model server's own flags (`--max-model-len`) may be named; Lantern's never are.
    assert not LANTERN_FLAGS.search(out["error"]), "the editor-facing text names a flag"
    return dict(out["detail"])


def fix_for(found: dict[str, Any], setting: str) -> dict[str, Any]:
    fixes = [f for f in found["fixes"] if f.get("setting") == setting]
    assert fixes, found["fixes"]
    return dict(fixes[0])


def readable(run: Run) -> list[str]:
    """stderr as lines a person reads: no escaped line breaks, no bare status codes."""
    assert "\\n" not in run.stderr, run.stderr
    assert "Error code:" not in run.stderr
    return run.stderr.splitlines()


def chat_paths(fake: FakeOpenAI) -> list[str]:
    return [r.path for r in fake.requests if r.method == "POST"]


# --- the wrong path: a base URL without /v1 ----------------------------------------------------


@pytest.mark.parametrize(
    ("off_route", "server"),
    [
        # Ollama's gin router: an unknown route is answered by gin's serveError with its
        # default404Body, "404 page not found", as text/plain (gin.go).
        (Turn(raw="404 page not found", raw_status=404, raw_content_type="text/plain"), "ollama"),
        # vLLM and other FastAPI servers: Starlette's router raises HTTPException(404),
        # which FastAPI's handler writes as JSONResponse({"detail": "Not Found"}).
        (Turn(raw='{"detail":"Not Found"}', raw_status=404), "fastapi"),
        # LM Studio answers a path it does not serve with 200 and an error object.
        (
            Turn(raw='{"error":"Unexpected endpoint or method. (POST /chat/completions)"}'),
            "lmstudio",
        ),
    ],
    ids=["ollama-gin-404", "fastapi-404", "lmstudio-200"],
)
def test_a_base_url_without_v1_is_diagnosed(
    fake: FakeOpenAI, lantern: Lantern, off_route: Turn, server: str
) -> None:
    fake.off_route = off_route
    root = f"http://127.0.0.1:{fake.port}"
    run = lantern.ask(replay.QUESTION, base_url=root)
    found = detail(run, "model_wrong_url")
    assert fix_for(found, "baseUrl")["value"] == f"{root}/v1"
    assert chat_paths(fake) == ["/chat/completions"]  # asked once, never resent
    probes = [r.path for r in fake.requests if r.method == "GET"]
    assert probes == ["/v1/models"]  # one cheap probe at the fixed URL
    assert "was not found" not in found["message"]  # the URL is blamed, not the model

    text = lantern.ask(replay.QUESTION, base_url=root, as_json=False)
    lines = readable(text)
    assert text.rc == EXIT_MODEL
    assert lines[0].startswith(f"lantern: nothing answers chat requests at {root}")
    assert lines[1] == f"  fix: --base-url {root}/v1 (or LANTERN_BASE_URL, or baseUrl in " \
        "config.toml) — the API answers there"  # fmt: skip


def test_ollama_found_at_its_root_names_ollama(fake: FakeOpenAI, lantern: Lantern) -> None:
    # A base URL with some other path on Ollama's port: its own /api/tags tells it is Ollama.
    fake.off_route = Turn(raw="404 page not found", raw_status=404, raw_content_type="text/plain")
    fake.ollama_native = True
    fake.models = ["qwen2.5-coder:7b"]
    root = f"http://127.0.0.1:{fake.port}"
    run = lantern.ask(replay.QUESTION, base_url=f"{root}/v2", model="llama9")
    found = detail(run, "model_wrong_url")
    assert fix_for(found, "baseUrl")["value"] == f"{root}/v1"
    assert fix_for(found, "model")["choices"] == ["qwen2.5-coder:7b"]
    assert "Ollama answers at" in found["summary"]
    assert len(chat_paths(fake)) == 1


def test_a_key_in_the_base_urls_query_is_never_shown(
    fake: FakeOpenAI, lantern: Lantern, env: dict[str, str], project: Project
) -> None:
    # A gateway that takes its key in the query, asked without /v1: its router's 404 for the
    # chat route, while /v1/models answers. The diagnosis names the URLs without the query.
    fake.off_route = Turn(raw='{"detail":"Not Found"}', raw_status=404)
    root = f"http://127.0.0.1:{fake.port}"
    keyed = f"{root}?key=SECRET123&api-version=2024-10-21"
    run = lantern.ask(replay.QUESTION, base_url=keyed)
    found = detail(run, "model_wrong_url")
    fix = fix_for(found, "baseUrl")
    assert fix["value"] == f"{root}/v1?api-version=2024-10-21"  # the non-secret part kept
    assert "keep the query" in fix["note"]
    assert [r.path for r in fake.requests if r.method == "GET"] == [
        "/v1/models?key=SECRET123&api-version=2024-10-21"  # the key still reaches the server
    ]
    assert "SECRET123" not in run.stdout + run.stderr

    text = lantern.ask(replay.QUESTION, base_url=keyed, as_json=False)
    assert text.rc == EXIT_MODEL
    assert readable(text)[0].startswith(f"lantern: nothing answers chat requests at {root} ")
    assert "SECRET123" not in text.stdout + text.stderr

    for extra in ((), ("--probe",)):
        done = doctor(env, project.root, *extra, model="m", base_url=keyed)
        assert f"{root}/v1?api-version=2024-10-21" in done.stdout or not extra, done.stdout
        assert "SECRET123" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_missing_model_lists_the_models_there(fake: FakeOpenAI, lantern: Lantern) -> None:
    # Ollama's handleScheduleError (server/routes.go), wrapped by its OpenAI middleware
    # (openai.NewError: 404 is "not_found_error"); Go's json.Encoder ends with a newline.
    fake.models = ["qwen2.5-coder:7b", "llama3.1:8b"]
    body = (
        '{"error":{"message":"model \\"llama9\\" not found, try pulling it first",'
        '"type":"not_found_error","param":null,"code":null}}\n'
    )
    fake.add_turns([Turn(raw=body, raw_status=404)])
    run = lantern.ask(replay.QUESTION, model="llama9")
    found = detail(run, "model_not_found")
    assert fix_for(found, "model")["choices"] == ["qwen2.5-coder:7b", "llama3.1:8b"]
    assert found["providerMessage"] == 'model "llama9" not found, try pulling it first'
    assert len(fake.chat_requests()) == 1

    fake.add_turns([Turn(raw=body, raw_status=404)])
    lines = readable(lantern.ask(replay.QUESTION, model="llama9", as_json=False))
    assert lines[0].startswith(f"lantern: model 'llama9' was not found at {fake.base_url} (404)")
    assert lines[1] == "  fix: --model NAME (or LANTERN_MODEL, or model in config.toml); the " \
        "endpoint has: qwen2.5-coder:7b, llama3.1:8b"  # fmt: skip


# --- redirects and web pages -------------------------------------------------------------------

# nginx's special response for 301 (ngx_http_special_response.c: ngx_http_error_301_page
# and the tail with NGINX_VER), with the Location `return 301 https://$host$request_uri;`
# writes.
NGINX_301 = (
    "<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n"
    "<center><h1>301 Moved Permanently</h1></center>\r\n"
    "<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"
)
# nginx's 502 page (ngx_http_error_502_page and the same tail), sent as text/html.
NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n"
    "<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"
)


def test_a_redirect_to_https_is_not_followed(fake: FakeOpenAI, lantern: Lantern) -> None:
    secure = f"https://127.0.0.1:{fake.port}/v1/chat/completions"
    fake.add_turns(
        [
            Turn(
                raw=NGINX_301,
                raw_status=301,
                raw_content_type="text/html",
                raw_headers={"Location": secure},
            )
        ]
    )
    run = lantern.ask(replay.QUESTION)
    found = detail(run, "model_redirected")
    assert fix_for(found, "baseUrl")["value"] == f"https://127.0.0.1:{fake.port}/v1"
    # One POST and the context window's lookup (the model list, at the same origin); no GET
    # to the redirect target, no probe: the model is not blamed.
    sent = [(r.method, r.path) for r in fake.requests]
    assert sent == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert "model" not in found["message"].split(";")[0]


REDIRECT_KEY = "sk-redirect-" + "5d0c1e9a7b"


def _posts(fake: FakeOpenAI) -> list[Any]:
    return [r for r in fake.requests if r.method == "POST"]


@pytest.mark.parametrize("status", [307, 308])
def test_a_same_origin_307_or_308_is_followed_with_method_body_and_key(
    fake: FakeOpenAI, lantern: Lantern, status: int
) -> None:
    # RFC 9110 15.4.8 and 15.4.9: the request is repeated to the new URI with the same
    # method and content; the target stays on the endpoint's own origin.
    moved = f"http://127.0.0.1:{fake.port}/v2/chat/completions"
    fake.add_turns(
        [Turn(raw="", raw_status=status, raw_headers={"Location": moved}), Turn(content="Hi.")]
    )
    run = lantern.ask(replay.QUESTION, "--api-key", REDIRECT_KEY)
    assert run.rc == 0, run.stderr
    assert run.json["answer"] == "Hi."
    first, second = _posts(fake)
    assert (first.path, second.path) == ("/v1/chat/completions", "/v2/chat/completions")
    assert second.raw == first.raw  # the same body, byte for byte
    for sent in (first, second):
        assert sent.headers["authorization"] == f"Bearer {REDIRECT_KEY}"


def test_same_origin_redirects_are_followed_a_few_times_only(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    again = f"http://127.0.0.1:{fake.port}/v1/chat/completions"
    loop = Turn(raw="", raw_status=307, raw_headers={"Location": again})
    fake.add_turns([loop] * 10)
    found = detail(lantern.ask(replay.QUESTION), "model_redirected")
    assert "again and again" in found["summary"]
    assert len(_posts(fake)) == 6  # the request, then five redirects followed


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_redirect_that_would_change_the_method_is_refused_and_explained(
    fake: FakeOpenAI, lantern: Lantern, status: int
) -> None:
    moved = f"http://127.0.0.1:{fake.port}/v2/chat/completions"
    fake.add_turns([Turn(raw="", raw_status=status, raw_headers={"Location": moved})])
    run = lantern.ask(replay.QUESTION, "--api-key", REDIRECT_KEY)
    found = detail(run, "model_redirected")
    assert fix_for(found, "baseUrl")["value"] == f"http://127.0.0.1:{fake.port}/v2"
    assert "307 or 308" in found["summary"]
    assert [r.path for r in _posts(fake)] == ["/v1/chat/completions"]


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_to_another_origin_never_receives_the_key(
    fake: FakeOpenAI, lantern: Lantern, status: int
) -> None:
    elsewhere = FakeOpenAI([Turn(content="stolen")]).start()
    try:
        moved = elsewhere.base_url + "/chat/completions"
        fake.add_turns([Turn(raw="", raw_status=status, raw_headers={"Location": moved})])
        run = lantern.ask(replay.QUESTION, "--api-key", REDIRECT_KEY)
        assert elsewhere.requests == []
    finally:
        elsewhere.stop()
    found = detail(run, "model_redirected")
    assert "another origin" in found["summary"]
    assert fix_for(found, "baseUrl")["value"] == elsewhere.base_url
    assert REDIRECT_KEY not in run.stdout + run.stderr


def test_a_captive_portal_is_a_web_page_not_a_moved_api(fake: FakeOpenAI, lantern: Lantern) -> None:
    # A network login (hotel, office guest Wi-Fi): any request is answered 302 to the
    # portal's own page, with a small HTML body that links there.
    portal = f"http://127.0.0.1:{fake.port + 1 if fake.port < 65535 else 1}/login?continue=x"
    page = f'<html><body>Redirecting to <a href="{portal}">the login page</a></body></html>\n'
    fake.add_turns(
        [
            Turn(
                raw=page,
                raw_status=302,
                raw_content_type="text/html",
                raw_headers={"Location": portal},
            )
        ]
    )
    run = lantern.ask(replay.QUESTION, "--api-key", REDIRECT_KEY)
    found = detail(run, "model_not_api")
    assert "a web page answered" in found["summary"]
    assert "network login or proxy" in found["summary"]
    assert all("login" not in str(f.get("value", "")) for f in found["fixes"])
    assert len(_posts(fake)) == 1


@pytest.mark.parametrize(
    ("status", "page", "content_type", "requests", "title"),
    [
        (502, NGINX_502, "text/html", 3, "502 Bad Gateway"),
        # A captive portal (hotel or office network login) answering 200 with its page.
        (
            200,
            "<!DOCTYPE html>\n<html><head><title>Guest Wi-Fi &ndash; Sign in</title>"
            "<script>var x = 1;</script></head><body><h1>Welcome</h1><p>Accept the terms "
            "to continue.</p></body></html>\n",
            "text/html; charset=utf-8",
            1,
            "Guest Wi-Fi – Sign in",
        ),
    ],
    ids=["nginx-502", "captive-portal-200"],
)
def test_a_web_page_is_named_as_such(
    fake: FakeOpenAI,
    lantern: Lantern,
    status: int,
    page: str,
    content_type: str,
    requests: int,
    title: str,
) -> None:
    fake.add_turns(
        [Turn(raw=page, raw_status=status, raw_content_type=content_type)] * requests
    )  # a gateway error is retried by the SDK: the server behind it may be restarting
    run = lantern.ask(replay.QUESTION)
    found = detail(run, "model_not_api")
    assert "something between you and the endpoint answered" in found["summary"]
    assert found["providerMessage"].startswith(title)
    assert "<" not in found["providerMessage"] and "var x" not in found["providerMessage"]
    assert fix_for(found, "baseUrl")
    assert len(fake.chat_requests()) == requests


# --- what asking again cannot fix --------------------------------------------------------------


def test_insufficient_quota_is_not_retried(fake: FakeOpenAI, lantern: Lantern) -> None:
    # OpenAI's 429 for an account without credit (platform.openai.com/docs/guides/
    # error-codes: "You exceeded your current quota"), pretty-printed as its API writes it.
    body = (
        "{\n"
        '    "error": {\n'
        '        "message": "You exceeded your current quota, please check your plan and '
        "billing details. For more information on this error, read the docs: "
        'https://platform.openai.com/docs/guides/error-codes/api-errors.",\n'
        '        "type": "insufficient_quota",\n'
        '        "param": null,\n'
        '        "code": "insufficient_quota"\n'
        "    }\n"
        "}\n"
    )
    fake.add_turns([Turn(raw=body, raw_status=429)] * 3)
    run = lantern.ask(replay.QUESTION)
    found = detail(run, "model_quota")
    assert "billing" in found["fixes"][-1]["note"]
    assert "wait" not in found["message"]
    assert len(fake.chat_requests()) == 1


def test_ollama_out_of_memory_is_sent_once(fake: FakeOpenAI, lantern: Lantern) -> None:
    # ollama llm/server.go: "model requires more system memory (%s) than is available (%s)",
    # a 500 from handleScheduleError, wrapped by the OpenAI middleware as "api_error".
    body = (
        '{"error":{"message":"model requires more system memory (5.8 GiB) than is available '
        '(4.7 GiB)","type":"api_error","param":null,"code":null}}\n'
    )
    fake.add_turns([Turn(raw=body, raw_status=500)] * 3)
    run = lantern.ask(replay.QUESTION, model="llama3.1:70b")
    found = detail(run, "model_out_of_memory")
    assert fix_for(found, "model")
    assert "5.8 GiB" in found["providerMessage"]
    assert len(fake.chat_requests()) == 1  # each try would reload the model


def test_tgi_input_too_long_in_the_stream_is_a_context_error(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    # text-generation-inference router: a validation error inside the chat stream is
    # InferError::into_openai_event, {"error": {"message", "http_status_code": 422}}, framed
    # by axum's Sse ("data:" with no space), then "data:[DONE]".
    message = "Input validation error: `inputs` must have less than 4096 tokens. Given: 5120"
    event = json.dumps(
        {"error": {"message": message, "http_status_code": 422}}, separators=(",", ":")
    )
    fake.add_turns([Turn(raw=[f"data:{event}\n\n", "data:[DONE]\n\n"])] * 2)
    run = lantern.ask(replay.QUESTION, base_url=f"http://127.0.0.1:{fake.port}/v1")
    found = detail(run, "model_context_length")
    notes = " ".join(f.get("note", "") for f in found["fixes"])
    assert "--max-input-tokens" in notes
    assert fix_for(found, "maxContextTokens")
    assert len(fake.chat_requests()) == 1


# --- Azure OpenAI: both surfaces, and its content filter ---------------------------------------

AZURE_KEY = "azure-key-0123456789abcdef"


def _azure(delta: dict[str, Any], finish: str | None, filters: dict[str, Any]) -> str:
    # Azure OpenAI chunks: keys in alphabetical order, `content_filter_results` on each choice.
    return replay.data(
        {
            "choices": [
                {
                    "content_filter_results": filters,
                    "delta": delta,
                    "finish_reason": finish,
                    "index": 0,
                    "logprobs": None,
                }
            ],
            "created": 1733000000,
            "id": "chatcmpl-AZ1",
            "model": "gpt-4o-2024-11-20",
            "object": "chat.completion.chunk",
            "system_fingerprint": "fp_04751d0b65",
        }
    )


_SAFE = {
    name: {"filtered": False, "severity": "safe"}
    for name in ("hate", "self_harm", "sexual", "violence")
}
# The first event of an Azure stream: the prompt's filter results, no choices.
_PROMPT_FILTER = replay.data(
    {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"content_filter_results": _SAFE, "prompt_index": 0}],
    }
)


def _answer(text: str) -> list[str]:
    return [
        _PROMPT_FILTER,
        _azure({"content": "", "refusal": None, "role": "assistant"}, None, {}),
        _azure({"content": text}, None, _SAFE),
        _azure({}, "stop", {}),
        replay.DONE,
    ]


def test_azure_deployment_url_with_api_version_and_api_key_header(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    lantern.config(f'[headers]\n"api-key" = "{AZURE_KEY}"\n')
    fake.add_turns([Turn(raw=_answer("It greets."))])
    base = f"http://127.0.0.1:{fake.port}/openai/deployments/gpt4o?api-version=2024-10-21"
    run = lantern.ask(replay.QUESTION, base_url=base, model="gpt4o")
    assert run.rc == 0, run.stderr
    assert run.json["answer"] == "It greets."
    (request,) = fake.requests
    assert request.path == "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == AZURE_KEY
    assert "authorization" not in request.headers  # no made-up bearer token beside the key
    assert AZURE_KEY not in run.stderr + run.stdout


def test_azure_deployment_url_sends_the_api_key_as_api_key(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    """Azure's deployment ("classic") surface takes the key in an `api-key` header, not as
    a bearer token (which it answers with 401): recognised by its path."""
    fake.add_turns([Turn(raw=_answer("It greets."))])
    base = f"http://127.0.0.1:{fake.port}/openai/deployments/gpt4o?api-version=2024-10-21"
    run = lantern.ask(replay.QUESTION, "--api-key", AZURE_KEY, base_url=base, model="gpt4o")
    assert run.rc == 0, run.stderr
    (request,) = fake.requests
    assert request.headers["api-key"] == AZURE_KEY
    assert "authorization" not in request.headers
    assert AZURE_KEY not in run.stderr + run.stdout


def test_azure_v1_surface_takes_the_api_key(fake: FakeOpenAI, lantern: Lantern) -> None:
    fake.add_turns([Turn(raw=_answer("It greets."))])
    base = f"http://127.0.0.1:{fake.port}/openai/v1/"
    run = lantern.ask(replay.QUESTION, "--api-key", AZURE_KEY, base_url=base, model="gpt-4o")
    assert run.rc == 0, run.stderr
    (request,) = fake.requests
    assert request.path == "/openai/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {AZURE_KEY}"


def test_azure_content_filter_ends_the_answer_as_filtered(
    fake: FakeOpenAI, lantern: Lantern
) -> None:
    hit = {**_SAFE, "violence": {"filtered": True, "severity": "medium"}}
    fake.add_turns(
        [
            Turn(
                raw=[
                    _PROMPT_FILTER,
                    _azure({"content": "", "refusal": None, "role": "assistant"}, None, {}),
                    _azure({"content": "The retry loop sleeps and"}, None, _SAFE),
                    _azure({}, "content_filter", hit),
                    replay.DONE,
                ]
            )
        ]
    )
    run = lantern.ask(replay.QUESTION)
    assert run.rc == 5, run.stderr
    out = run.json
    assert out["stopReason"] == "filtered"
    assert out["answer"] == "The retry loop sleeps and"
    assert out["detail"]["code"] == "filtered" and "errorCode" not in out
    assert len(fake.chat_requests()) == 1

    fake.add_turns([Turn(raw=[_azure({}, "content_filter", hit), replay.DONE])])
    text = lantern.ask(replay.QUESTION, as_json=False)
    assert text.rc == 5
    lines = readable(text)
    said = [i for i, line in enumerate(lines) if line.startswith("lantern: the provider's content")]
    assert len(said) == 1, lines
    assert lines[said[0] + 1].startswith("  fix: ask differently"), lines
