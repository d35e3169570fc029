"""From what a server answered to a `ModelError`: its code, the provider's words, the fixes.

`status_error` reads an HTTP error status and its body, `stream_error` an error
object inside a 200 stream. Both word the failure in Lantern's terms and name
the setting that fixes it; what only the endpoint can tell (which path answers,
which models it has) is found by `diagnose`. Server-side knobs (a context
window) depend on which server it is: `guess_server` tells from the URL and the
words, `context_fixes` names that server's knob.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

from lantern.agent.failure import ErrorKind, Fix, ModelError
from lantern.agent.provider import error_body as pe
from lantern.agent.provider.diagnose import origin
from lantern.agent.provider.redirects import MAX_HOPS, same_origin
from lantern.escaping import escape_line, public_url

Server = Literal["ollama", "llama.cpp", "vllm", "tgi", "lmstudio", "openai", "azure", "other"]

_AT_MOST = re.compile(
    r"(?:at most|can only afford|maximum (?:value|of)(?: is)?)\D{0,20}(\d+)", re.IGNORECASE
)


def guess_server(base_url: str, words: str = "") -> Server:
    """Which server this probably is, from its URL (default ports, hosts) and its words."""
    parts = urlsplit(base_url)
    host, port = (parts.hostname or "").lower(), parts.port
    lowered = words.lower()
    if "exceed_context_size_error" in lowered or "n_ctx" in lowered or "--jinja" in lowered:
        return "llama.cpp"
    if "input validation error" in lowered or "http_status_code" in lowered:
        return "tgi"
    if host.endswith((".openai.azure.com", ".cognitiveservices.azure.com")):
        return "azure"
    if host == "api.openai.com":
        return "openai"
    if port == 11434 or "ollama" in host or "ollama" in lowered:
        return "ollama"
    if port == 8080:
        return "llama.cpp"
    if port == 8000 or '"object": "error"' in lowered:
        return "vllm"
    if port == 1234:
        return "lmstudio"
    return "other"


_CONTEXT_KNOBS: dict[Server, str] = {
    "ollama": "raise Ollama's context window: start it with OLLAMA_CONTEXT_LENGTH=16384 "
    "(or set num_ctx in the model's Modelfile)",
    "llama.cpp": "start llama-server with a larger context: -c 16384 (--ctx-size)",
    "vllm": "start vLLM with a larger --max-model-len (up to what the model supports)",
    "tgi": "start TGI with larger --max-input-tokens and --max-total-tokens",
    "lmstudio": "load the model in LM Studio with a larger context length",
}


def server_knob(server: Server) -> Fix | None:
    """How to give `server`'s model a larger window, in the server's own words."""
    return Fix(note=_CONTEXT_KNOBS[server]) if server in _CONTEXT_KNOBS else None


def context_fixes(server: Server, *, truncated_prompt: bool = False) -> tuple[Fix, ...]:
    """How to fit the conversation into the window: the server's knob, then Lantern's budget."""
    knob = server_knob(server)
    fixes = [knob] if knob else []
    if truncated_prompt:  # Lantern sent more than the server runs with: tell it the window
        fixes = fixes or [Fix(note="raise the model server's context window")]
        fixes += [
            Fix(note="use a model with a longer context window"),
            Fix("maxContextTokens", note="set it to the window the server really runs with"),
        ]
    else:
        fixes.append(
            Fix("maxContextTokens", note="lower it, or start a new conversation, to send less")
        )
    return tuple(fixes)


def output_fix(words: str) -> Fix | None:
    """A provider naming the most output tokens it takes ("at most 16384", "can only afford
    1234"): set `maxOutputTokens` to that."""
    found = _AT_MOST.search(words)
    if found is None or "token" not in words.lower():
        return None
    return Fix("maxOutputTokens", int(found[1]), note="the most the endpoint said it takes")


def tools_fix(words: str) -> Fix:
    lowered = words.lower()
    if "jinja" in lowered:
        server = "start llama-server with --jinja"
    elif "auto-tool-choice" in lowered or "tool-call-parser" in lowered:
        server = "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>"
    else:
        server = "pick a model with tool support"
    return Fix("toolProtocol", "auto", note=f"Lantern's text tool protocol; or {server}")


def redirect_target(base_url: str, location: str) -> str | None:
    """The base URL to use instead of one that redirects to `location`."""
    target = urlsplit(location)
    if not target.scheme and not target.netloc and not target.path:
        return None
    base = urlsplit(base_url)
    path = target.path if target.netloc or target.path.startswith("/") else base.path
    for tail in ("/chat/completions", "/chat/completions/"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    if not target.path:
        path = base.path
    # The Location header is the server's text: escaped, as everything from outside.
    return escape_line(
        urlunsplit(
            (target.scheme or base.scheme, target.netloc or base.netloc, path, base.query, "")
        )
    )


@dataclass(frozen=True)
class _Answer:
    """An HTTP error answer, as the rules of `status_error` read it."""

    status: int
    body: Any
    words: str  # the provider's words, without a closing full stop
    code: Any
    where: str
    model: str
    tools_sent: bool
    retry_after: str | None
    location: str | None

    @property
    def at(self) -> str:
        return f"{self.where} answered {self.status}"

    @cached_property
    def target(self) -> str | None:
        return redirect_target(self.where, self.location or "")

    @cached_property
    def redirected_to(self) -> str:
        """Where a redirect points, as an absolute URL (the chat request's own, if none)."""
        return urljoin(self.where + "/chat/completions", self.location or "")

    @property
    def to_web_page(self) -> bool:
        """A redirect away from the API's path (a network login page, a proxy's)."""
        path = urlsplit(self.redirected_to).path.rstrip("/")
        return bool(self.location) and not path.endswith("/chat/completions")

    @property
    def page_origin(self) -> str:
        """The origin a redirect away from the API points at, as it may be shown."""
        return escape_line(public_url(origin(self.redirected_to)))

    @property
    def looping(self) -> bool:
        """A 307 or 308 on the same origin that is still answered: followed too often."""
        return self.status in (307, 308) and same_origin(self.where, self.redirected_to)

    @property
    def redirect_why(self) -> str:
        """What to do about this redirect, and why Lantern did not follow it (`redirects.py`)."""
        if not same_origin(self.where, self.redirected_to):
            return (
                ", another origin: use that address if you trust it (Lantern never follows a "
                "redirect to another origin: the API key and headers would go with it)"
            )
        if self.looping:
            return (
                " again and again: use the address it settles on (Lantern follows a 307 or "
                f"308 on the same origin at most {MAX_HOPS} times)"
            )
        return (
            ": use that address (Lantern follows only a 307 or 308 on the same origin: a "
            f"{self.status} can turn the request into a GET without its body)"
        )

    @cached_property
    def model_missing(self) -> bool:
        return pe.is_model_missing(self.body)


@dataclass(frozen=True)
class _Rule:
    """One row of `_STATUS_RULES`: when it applies, and the error it gives."""

    when: Callable[[_Answer], bool]
    kind: ErrorKind
    summary: Callable[[_Answer], str]
    fixes: Callable[[_Answer], tuple[Fix, ...]] = lambda a: ()
    words: Callable[[_Answer], str] = lambda a: a.words  # what the provider said, as shown

    def error(self, a: _Answer) -> ModelError:
        return ModelError(
            self.kind, self.summary(a), words=self.words(a), status=a.status, fixes=self.fixes(a)
        )


def _maybe(fix: Fix | None) -> tuple[Fix, ...]:
    return (fix,) if fix else ()


def _output_limit(words: str) -> tuple[Fix, ...]:
    """`output_fix`, when the provider's words are about the output limit."""
    named = "max_tokens" in words or "max_completion_tokens" in words
    return _maybe(output_fix(words)) if named else ()


# Read top to bottom: the first rule that applies gives the error; the last applies always.
_STATUS_RULES = (
    _Rule(
        lambda a: 300 <= a.status < 400 and a.to_web_page,
        "not_api",
        lambda a: (
            f"a web page answered instead of the API (a network login or proxy): {a.where} "
            f"redirects ({a.status}) to a page at {a.page_origin}"
        ),
        lambda a: (
            Fix(note="open any web page in a browser to log in to the network, or check the proxy"),
            Fix("baseUrl", note="check the address"),
        ),
    ),
    _Rule(
        lambda a: 300 <= a.status < 400,
        "redirected",
        lambda a: (
            f"{a.where} redirects ({a.status}) to {a.target}{a.redirect_why}"
            if a.target
            else f"{a.where} answered a redirect ({a.status}) that names no address"
        ),
        lambda a: (
            (Fix("baseUrl", a.target, note="the address the endpoint redirects to"),)
            if a.target and not a.looping
            else (Fix("baseUrl"),)
        ),
        words=lambda a: "",
    ),
    _Rule(
        lambda a: pe.is_html(a.body),
        "not_api",
        lambda a: (
            f"something between you and the endpoint answered {a.status} with a web "
            f"page, not the API ({a.where})"
        ),
        lambda a: (Fix("baseUrl", note="check the address, and any proxy or network login page"),),
    ),
    # Before `auth`: a 401 or 403 that says the account has no credit is about credit.
    _Rule(
        lambda a: pe.is_quota(a.status, a.body),
        "quota",
        lambda a: f"{a.where} refused for lack of credit ({a.status}); asking again will not help",
        lambda a: (
            *_maybe(output_fix(a.words)),
            Fix(note="add credit or check the plan and billing of the account the key is for"),
        ),
    ),
    _Rule(
        lambda a: a.status in (401, 403),
        "auth",
        lambda a: f"{a.where} rejected the API key ({a.status})",
        lambda a: (Fix("apiKey"),),
    ),
    _Rule(
        lambda a: a.status == 429,
        "rate_limited",
        lambda a: f"{a.where} is rate limiting requests (429)",
        lambda a: (
            Fix(note=f"retry after {a.retry_after} s")
            if a.retry_after
            else Fix(note="wait a little and try again"),
        ),
    ),
    _Rule(
        lambda a: a.tools_sent and pe.is_tools_unsupported(a.body),
        "tools_unsupported",
        lambda a: f"{a.where} does not take tools with model {a.model!r} ({a.status})",
        lambda a: (tools_fix(a.words),),
    ),
    _Rule(
        lambda a: pe.is_context_error(a.body, a.code),
        "context_length",
        lambda a: f"the conversation is longer than the model's context window ({a.status})",
        lambda a: context_fixes(guess_server(a.where, pe.flat_text(a.body))),
    ),
    _Rule(
        lambda a: pe.is_out_of_memory(a.body),
        "out_of_memory",
        lambda a: (
            f"{a.where} cannot load model {a.model!r}: not enough memory ({a.status}); "
            "asking again will not help"
        ),
        lambda a: (
            Fix("model", note="a smaller model, or a smaller quantization"),
            Fix(note="free memory on the model server (stop other models or programs)"),
        ),
    ),
    _Rule(
        lambda a: a.code == "content_filter",
        "filtered",
        lambda a: (
            f"{a.where} refused the request: its content filter matched the question or "
            f"what Lantern read ({a.status})"
        ),
    ),
    _Rule(
        lambda a: a.status in (404, 405) or pe.is_route_missing(a.words),
        "not_found",
        lambda a: (
            f"model {a.model!r} was not found at {a.where} ({a.status})"
            if a.model_missing
            else f"{a.where}/chat/completions is not there ({a.status})"
        ),
        lambda a: (Fix("model"),) if a.model_missing else (Fix("baseUrl"),),
    ),
    _Rule(
        lambda a: a.status >= 500,
        "server",
        lambda a: f"{a.at}: the server failed (try again, or see its log)",
    ),
    _Rule(
        lambda a: True,
        "bad_request",
        lambda a: f"{a.at}: the endpoint refused the request",
        lambda a: (
            _output_limit(a.words)
            or (Fix(note="check the model name, the base URL and the server's settings"),)
        ),
        words=lambda a: a.words or "no explanation",
    ),
)


def status_error(
    status: int,
    body: Any,
    *,
    where: str,
    model: str,
    tools_sent: bool,
    retry_after: str | None = None,
    location: str | None = None,
) -> ModelError:
    """The error a user can act on for an HTTP error status and the body that came with it:
    the first of `_STATUS_RULES` that applies."""
    answer = _Answer(
        status, body, pe.describe(body).rstrip(". "), pe.error_code(body), where, model,
        tools_sent, retry_after, location,
    )  # fmt: skip
    return next(rule for rule in _STATUS_RULES if rule.when(answer)).error(answer)


def stream_error(body: Any) -> ModelError:
    """An error object a server sent inside a 200 stream (or as a 200 JSON body), in the
    provider's own words."""
    words = pe.describe(body) or "the provider reported an error mid-reply"
    code = pe.error_code(body)
    status = pe.status_code(code)
    if pe.is_route_missing(words):  # LM Studio answers 200 for a path it does not serve
        return ModelError(
            "not_found", "the endpoint has no chat route at this address", words=words,
            fixes=(Fix("baseUrl"),),
        )  # fmt: skip
    if pe.is_context_error(body, code):
        return ModelError(
            "context_length", "the conversation is longer than the model's context window",
            words=words, fixes=context_fixes(guess_server("", pe.flat_text(body))),
        )  # fmt: skip
    if pe.is_tools_unsupported(body):
        return ModelError(
            "tools_unsupported", "the endpoint does not take tools", words=words,
            fixes=(tools_fix(words),),
        )  # fmt: skip
    if pe.is_out_of_memory(body):
        return ModelError(
            "out_of_memory", "the model's server ran out of memory mid-reply", words=words,
            fixes=(Fix("model", note="a smaller model, or a smaller quantization"),),
        )  # fmt: skip
    if pe.is_quota(status, body):
        return ModelError("quota", "the provider refused for lack of credit", words=words)
    if pe.is_transient(body):
        return ModelError(
            "server", "the model's server failed mid-reply", words=words, retryable=True
        )
    return ModelError("bad_request", "the model's server rejected the request", words=words)
