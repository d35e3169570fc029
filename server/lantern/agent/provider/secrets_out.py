"""The endpoint's credentials never leave the process in any text, nor go to another origin.

A provider's 401 may echo the request's `Authorization` header; an HTML error page may
show every header; a URL may carry `user:password@`. `Secrets` knows the credentials of
one resolved endpoint — the API key, the base URL's userinfo and query values (but
Azure's `api-version`), every value of the `headers` setting — in each form a request
carries them (as written, percent-encoded, JSON-escaped, inside a `Basic` header's
base64) and replaces them with `[REDACTED]` in any text: a provider's error body before
its words are taken, a `ModelError` (summary, words, fixes), a doctor line, a log record.
Every `Secrets` made is also remembered for the process, and a filter on the log's
handlers (`guard_logging`, installed then) hides them in what any library logs.

No request follows a redirect to another origin (`redirects.py`: the chat request,
`http.SameOriginRedirects`, and the model list, `endpoint.NO_REDIRECTS`, follow only
a 307 or 308 on the endpoint's own origin; `diagnose.Prober` follows none): any other
redirect is reported, and its target is a fix the user applies. So no header — the
key, a credential in `headers`, the userinfo's `Basic` — reaches an origin the user
did not configure.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from lantern.agent.failure import Fix, ModelError
from lantern.agent.provider.stream import ReplyAssembler
from lantern.agent.reply import Reply
from lantern.escaping import split_userinfo

HIDDEN = "[REDACTED]"
#: A shorter value is hidden only where it stands alone (`ollama` as a key must not
#: turn every "ollama pull" hint into a mask); from this length on, anywhere.
ANYWHERE = 8
SHORTEST = 4  # shorter values are not hidden at all: they would mask ordinary words
_ELLIPSIS = "…"
_CUTS_LOOKED_AT = 32
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


def url_secrets(url: str | None, keep: tuple[str, ...] = ("api-version",)) -> list[str]:
    """The credentials a base URL carries: its userinfo's parts, its query's values."""
    if not url:
        return []
    userinfo, rest = split_userinfo(url)
    found: list[str] = []
    if userinfo:
        user, _, password = userinfo.partition(":")
        found += [userinfo, user, password, unquote(user), unquote(password)]
        decoded = f"{unquote(user)}:{unquote(password)}"
        found.append(base64.b64encode(decoded.encode()).decode())
    try:
        query = urlsplit(rest).query
    except ValueError:
        query = ""
    found += [v for k, v in parse_qsl(query, keep_blank_values=True) if k not in keep]
    return found


def _forms(value: str) -> list[str]:
    """The ways one credential appears in text a server sends back."""
    scheme, _, token = value.partition(" ")
    parts = [value]
    if scheme.lower() in ("bearer", "basic", "token") and token.strip():
        parts.append(token.strip())  # a `headers` value "Bearer …": the token alone too
    forms: list[str] = []
    for part in parts:
        forms += [part, quote(part, safe=""), quote_plus(part), json.dumps(part)[1:-1]]
        forms.append(part.replace("/", "\\/"))
        for raw in (part, f"{part}:", f":{part}"):
            forms.append(base64.b64encode(raw.encode()).decode())
    return forms


class Secrets:
    """The credentials of one endpoint, and `scrub` that hides them in any text."""

    def __init__(self, values: Iterable[str]) -> None:
        forms: set[str] = set()
        for value in values:
            value = value.strip()
            if len(value) >= SHORTEST:
                forms.update(f for f in _forms(value) if len(f) >= SHORTEST)
        self.forms = tuple(sorted(forms, key=len, reverse=True))  # longest first
        _remember(self.forms)

    @classmethod
    def of(
        cls,
        *,
        api_key: str | None,
        base_url: str | None,
        headers: Mapping[str, str] | None = None,
    ) -> Secrets:
        values = [api_key or "", *url_secrets(base_url), *(headers or {}).values()]
        return cls(values)

    def scrub(self, text: str) -> str:
        return scrub_forms(text, self.forms)

    def scrub_value(self, value: Any) -> Any:
        """A parsed body (JSON of any shape) with every string in it scrubbed."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {self.scrub_value(k): self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub_value(v) for v in value]
        return value

    def error(self, error: ModelError) -> ModelError:
        """The same failure with no credential in its summary, words or fixes."""
        if not self.forms:
            return error
        fixes = tuple(self._fix(f) for f in error.fixes)
        scrubbed = ModelError(
            error.kind,
            self.scrub(error.summary),
            words=self.scrub(error.words),
            status=error.status,
            fixes=fixes,
            retryable=error.retryable,
        )
        return scrubbed.with_traceback(error.__traceback__)

    def _fix(self, fix: Fix) -> Fix:
        value = self.scrub(fix.value) if isinstance(fix.value, str) else fix.value
        return Fix(
            fix.setting,
            value,
            choices=tuple(self.scrub(c) for c in fix.choices),
            note=self.scrub(fix.note),
        )


class StreamScrubber:
    """A sink for streamed text that passes it on with the credentials hidden, holding back
    only a tail that could be the start of one (a key split across chunks); `flush` gives
    the rest at the end of the reply. Without credentials it passes text straight on."""

    def __init__(self, secrets: Secrets, sink: Callable[[str], None]) -> None:
        self.secrets, self.sink, self._held = secrets, sink, ""

    def __call__(self, text: str) -> None:
        if not self.secrets.forms:
            self.sink(text)
            return
        pending = self._held + text
        cut = self._safe_end(pending)
        self._held = pending[cut:]
        if cut:
            self.sink(self.secrets.scrub(pending[:cut]))

    def flush(self) -> None:
        if self._held:
            self.sink(self.secrets.scrub(self._held))
            self._held = ""

    def _safe_end(self, text: str) -> int:
        """Where the text that is safe to pass on ends: before any tail that is (the start
        of) a credential, and before any credential that reaches into that tail."""
        cut = len(text)
        for form in self.secrets.forms:
            for size in range(min(len(form), len(text)), 0, -1):
                if text.endswith(form[:size]):
                    cut = min(cut, len(text) - size)
                    break
        moved = True
        while moved:  # a whole credential that crosses the cut is held whole
            moved = False
            for form in self.secrets.forms:
                start = text.find(form, max(0, cut - len(form) + 1))
                if 0 <= start < cut < start + len(form):
                    cut, moved = start, True
        return cut


class ScrubbingAssembler(ReplyAssembler):
    """A `ReplyAssembler` whose answer and reasoning reach their sinks with the endpoint's
    credentials hidden as they stream, and whose finished reply (text, reasoning, call
    arguments) has none: a server that echoes the key into its reply shows it to no one."""

    def __init__(
        self,
        secrets: Secrets,
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None,
        *,
        hold_leading: bool,
    ) -> None:
        self._text = StreamScrubber(secrets, on_text)
        self._reasoning = None if on_reasoning is None else StreamScrubber(secrets, on_reasoning)
        super().__init__(self._text, self._reasoning, hold_leading=hold_leading)
        self._secrets = secrets

    def finish(self) -> Reply:
        reply = super().finish()
        self._text.flush()
        if self._reasoning is not None:
            self._reasoning.flush()
        if self._secrets.forms:
            reply.content = self._secrets.scrub(reply.content)
            reply.reasoning = self._secrets.scrub(reply.reasoning)
            for call in reply.tool_calls:
                call.arguments = self._secrets.scrub(call.arguments)
        return reply


def scrub_forms(text: str, forms: tuple[str, ...]) -> str:
    """`text` with each form (longest first) replaced by `[REDACTED]`, and a form's start
    cut off by a `…` (a provider's words are capped) hidden as well."""
    if not forms or not text:
        return text
    for form in forms:
        if form in text:
            text = text.replace(form, HIDDEN) if len(form) >= ANYWHERE else _alone(text, form)
    if _ELLIPSIS in text:
        text = _cut_forms(text, forms)
    return text


def _alone(text: str, form: str) -> str:
    """`form` replaced where no word character touches it."""
    out: list[str] = []
    start = 0
    at = text.find(form)
    while at >= 0:
        end = at + len(form)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if before not in _WORD and after not in _WORD:
            out += [text[start:at], HIDDEN]
            start = end
        at = text.find(form, end if start == end else at + 1)
    return "".join(out) + text[start:]


def _cut_forms(text: str, forms: tuple[str, ...]) -> str:
    """A credential's first characters (at least `ANYWHERE`) right before a `…`. Bounded:
    Lantern's own cuts are in short texts, so only the first `_CUTS_LOOKED_AT` count."""
    pieces = text.split(_ELLIPSIS, _CUTS_LOOKED_AT)
    for index, piece in enumerate(pieces[:-1]):
        for form in forms:
            cut = _prefix_at_end(piece, form)
            if cut >= ANYWHERE:
                pieces[index] = piece[:-cut] + HIDDEN
                break
    return _ELLIPSIS.join(pieces)


def _prefix_at_end(piece: str, form: str) -> int:
    """The length of the longest end of `piece` that begins `form`."""
    start = max(0, len(piece) - len(form) + 1)
    at = piece.find(form[0], start)
    while at >= 0:
        if form.startswith(piece[at:]):
            return len(piece) - at
        at = piece.find(form[0], at + 1)
    return 0


# ---------------------------------------------------------------- the process's log

_known: set[str] = set()
_known_sorted: tuple[str, ...] = ()
_lock = threading.Lock()


def _remember(forms: tuple[str, ...]) -> None:
    global _known_sorted
    if not forms or _known.issuperset(forms):
        return
    with _lock:
        _known.update(forms)
        _known_sorted = tuple(sorted(_known, key=len, reverse=True))
    guard_logging()  # logging is set up when the process starts, before any endpoint


def scrub_known(text: str) -> str:
    """`text` without any credential this process has been configured with."""
    return scrub_forms(text, _known_sorted)


class _HideSecrets(logging.Filter):
    """Formats each record's message once, with every known credential hidden."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _known_sorted:
            message = record.getMessage()
            hidden = scrub_known(message)
            if hidden != message:
                record.msg, record.args = hidden, None
            if record.exc_info and record.exc_info[1] is not None:
                shown = logging.Formatter().formatException(record.exc_info)
                record.exc_text = scrub_known(shown)
        return True


def guard_logging() -> None:
    """Hide every credential the process knows in what the root logger's handlers write
    (the HTTP libraries log request URLs, which may hold userinfo or a query key)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _HideSecrets) for f in handler.filters):
            handler.addFilter(_HideSecrets())


class ScrubbingWriter:
    """A text stream that writes through to `stream` with `secrets` hidden, line by line
    (doctor's report: every line it prints passes here)."""

    def __init__(self, stream: TextIO, secrets: Secrets) -> None:
        self.stream, self.secrets, self._line = stream, secrets, ""

    def write(self, text: str) -> int:
        self._line += text
        if "\n" in self._line:
            whole, _, self._line = self._line.rpartition("\n")
            self.stream.write(self.secrets.scrub(whole) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._line:
            self.stream.write(self.secrets.scrub(self._line))
            self._line = ""
        self.stream.flush()
