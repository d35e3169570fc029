"""Failures as data: each provider's words sorted into a code, a fix and a retry decision,
and worded for the reader: flags on the command line, settings in an editor."""

from __future__ import annotations

import time

import pytest
from lantern.agent.failure import EndpointError, Fix, ModelError
from lantern.agent.provider.classify import redirect_target, status_error, stream_error
from lantern.agent.provider.diagnose import fixed_url
from lantern.agent.provider.endpoint import resolve_endpoint
from lantern.agent.provider.error_body import describe, should_retry
from lantern.cli.output import failure_lines
from lantern.converter import to_json
from lantern.settings.sources import Settings

WHERE = "https://api.example.com/v1"


def error(status: int, body: object) -> ModelError:
    """As the SDK hands it over: a JSON body parsed, anything else as text."""
    return status_error(status, body, where=WHERE, model="m", tools_sent=True)


def test_openrouter_402_names_the_output_limit_it_affords() -> None:
    # OpenRouter's 402 for a request the account cannot pay for (its API error docs).
    failed = error(
        402,
        {
            "error": {
                "message": "This request requires more credits, or fewer max_tokens. You "
                "requested up to 65536 tokens, but can only afford 1234. To increase, visit "
                "https://openrouter.ai/settings/credits and upgrade to a paid account",
                "code": 402,
            }
        },
    )
    assert failed.kind == "quota"
    assert failed.fixes[0] == Fix(
        "maxOutputTokens", 1234, note="the most the endpoint said it takes"
    )
    assert not should_retry(402, "")


@pytest.mark.parametrize(
    "words",
    [
        "404 page not found",  # Ollama's gin router
        '{"detail":"Not Found"}',  # FastAPI / Starlette
        '{"error":"Unexpected endpoint or method. (POST /chat/completions)"}',  # LM Studio
        '{"error": {"message": "Invalid URL (POST /chat/completions)", "type": '
        '"invalid_request_error", "param": null, "code": null}}',  # OpenAI without /v1
    ],
)
def test_a_missing_route_blames_the_url(words: str) -> None:
    failed = error(404, words)
    assert failed.kind == "not_found" and failed.fixes[0].setting == "baseUrl"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        # A key that works on an account without credit: a fix of the plan, not of the key.
        (401, {"error": {"message": "Insufficient Balance", "code": "invalid_request"}}, "quota"),
        (403, {"error": {"message": "bad key"}}, "auth"),
        (429, {"error": {"code": "insufficient_quota"}}, "quota"),
        # A proxy's page is no answer of the API, whatever status it came with.
        (404, "<html><body><h1>Not Found</h1></body></html>", "not_api"),
        (401, "<html><body>Sign in to the network</body></html>", "not_api"),
        (302, "<html><body>Moved</body></html>", "redirected"),
        # What the body says comes before what the status says.
        (404, {"error": "model requires more system memory (5.8 GiB)"}, "out_of_memory"),
        (500, {"error": {"message": "maximum context length is 4096 tokens"}}, "context_length"),
        (500, {"error": {"message": "tools param requires --jinja flag"}}, "tools_unsupported"),
        (503, {"error": {"message": "no route to model"}}, "not_found"),
        (418, {"error": {"message": "teapot"}}, "bad_request"),
    ],
)
def test_the_first_rule_that_fits_decides(status: int, body: object, kind: str) -> None:
    assert error(status, body).kind == kind


def test_gemini_input_token_count_is_a_context_error() -> None:
    # Gemini's OpenAI-compatible endpoint: a JSON array of Google error objects.
    body = [
        {
            "error": {
                "code": 400,
                "message": "The input token count (1200000) exceeds the maximum number of "
                "tokens allowed (1048576).",
                "status": "INVALID_ARGUMENT",
            }
        }
    ]
    assert error(400, body).kind == "context_length"


def test_max_tokens_too_large_sets_the_most_it_takes() -> None:
    # OpenAI's 400 for an output limit past the model's.
    failed = error(
        400,
        {
            "error": {
                "message": "max_tokens is too large: 100000. This model supports at most 16384 "
                "completion tokens, whereas you provided 100000.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "invalid_value",
            }
        },
    )
    assert failed.kind == "bad_request"
    assert (failed.fixes[0].setting, failed.fixes[0].value) == ("maxOutputTokens", 16384)


def test_azure_prompt_filter_is_its_own_code() -> None:
    # Azure OpenAI's 400 when the prompt trips the content filter.
    failed = error(
        400,
        {
            "error": {
                "message": "The response was filtered due to the prompt triggering Azure "
                "OpenAI's content management policy.",
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
            }
        },
    )
    assert failed.kind == "filtered" and not failed.retryable


@pytest.mark.parametrize(
    ("status", "body", "again"),
    [
        (429, '{"error": {"code": "rate_limit_exceeded"}}', True),
        (429, '{"error": {"code": "insufficient_quota", "type": "insufficient_quota"}}', False),
        (503, '{"error": "model is loading"}', True),
        (502, "<html><head><title>502 Bad Gateway</title></head></html>", True),
        (500, '{"error": {"message": "model requires more system memory (5.8 GiB)"}}', False),
        (500, '{"error": {"message": "CUDA out of memory. Tried to allocate 2.00 GiB"}}', False),
        (500, '{"error": {"message": "tools param requires --jinja flag"}}', False),
        (500, '{"error": {"message": "maximum context length is 4096 tokens"}}', False),
        (400, '{"error": {"message": "bad"}}', False),
        (401, "", False),
    ],
)
def test_the_retry_table(status: int, body: str, again: bool) -> None:
    assert should_retry(status, body) is again


def test_tgi_stream_error_is_final_and_a_context_error() -> None:
    failed = stream_error(
        {
            "message": "Input validation error: `inputs` must have less than 4096 tokens. "
            "Given: 5120",
            "http_status_code": 422,
        }
    )
    assert failed.kind == "context_length" and not failed.retryable
    assert any("--max-input-tokens" in f.note for f in failed.fixes)


@pytest.mark.parametrize(
    ("base", "fixed"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1"),
        ("http://localhost:11434/", "http://localhost:11434/v1"),
        ("http://localhost:11434/api", "http://localhost:11434/v1"),
        ("http://localhost:8000/v1/chat/completions", "http://localhost:8000/v1"),
        ("http://proxy.local/llm", "http://proxy.local/llm/v1"),
        ("http://localhost:8000/v1", None),
        ("https://x.openai.azure.com/openai/v1/", None),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", None),
    ],
)
def test_the_url_people_meant(base: str, fixed: str | None) -> None:
    assert fixed_url(base) == fixed


def test_a_redirect_names_the_base_url_to_use() -> None:
    target = "https://llm.example.com/v1/chat/completions"
    assert redirect_target("http://llm.example.com/v1", target) == "https://llm.example.com/v1"
    assert redirect_target("http://a/v1?api-version=1", "https://a/v1/chat/completions") == (
        "https://a/v1?api-version=1"
    )


def test_a_web_page_is_reduced_to_its_words() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>Sign in &amp; go</title><style>b{}</style></head>"
        "<body><script>alert(1)</script><p>Accept\n the terms</p></body></html>"
    )
    assert describe(page) == "Sign in & go: Accept the terms"


def test_a_page_of_unclosed_tags_is_read_in_linear_time() -> None:
    # 200,000 unclosed <script> (1.6 MB): a lazy regex took minutes; a scan, milliseconds.
    # The bound only catches a hang; an unclosed script hides the rest, as in a browser.
    started = time.thread_time()
    assert describe("<html>" + "<script>" * 200_000) == ""
    assert describe("<html><p>Bad gateway</p>" + "<a" * 400_000).startswith("Bad gateway <a<a")
    assert time.thread_time() - started < 10


def test_the_cli_names_flags_and_escapes_only_outside_text() -> None:
    failed = error(
        404, {"error": {"message": 'model "x" not found\x1b[31m', "code": "model_not_found"}}
    ).with_fixes()
    failed = ModelError(
        failed.kind,
        failed.summary,
        words=failed.words,
        status=404,
        fixes=(Fix("model", choices=("qwen2.5-coder:7b", "bad\nname")),),
    )
    lines = failure_lines(failed.detail())
    assert lines[0] == f"model 'm' was not found at {WHERE} (404): model \"x\" not found\\u001b[31m"
    assert lines[1] == (
        "  fix: --model NAME (or LANTERN_MODEL, or model in config.toml); the endpoint has: "
        "qwen2.5-coder:7b, bad\\nname"
    )
    assert "--" not in failed.message and "`model`" in failed.message


def test_no_model_is_worded_for_each_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EndpointError) as caught:
        resolve_endpoint(Settings(), {"OLLAMA_HOST": "127.0.0.1:9"})
    editor, cli = str(caught.value), caught.value.cli
    for flag in ("--model", "--base-url", "LANTERN_", "lantern doctor", "lantern ask"):
        assert flag not in editor
    assert "`model`" in editor and "`baseUrl`" in editor and "Set API Key" in editor
    assert "--model" in cli and "\n" in cli  # the command line gets its own, multi-line help
    assert to_json(caught.value.detail())["fixes"][0] == {"setting": "model"}
