"""Failures as data: a stable code, the provider's own words, and fixes a client can render.

A `ModelError` says what happened in Lantern's words (`summary`), carries what
the provider said (`words`, already escaped onto one line: it is outside text),
the HTTP status when there was one, and `fixes`: which setting to change, to
what value when it is known, which values the endpoint offers, or a change on
the model server itself. Each client words the fix for its own users: the CLI
names flags and environment variables (`cli.output.failure_lines`), an editor
names settings (`message`, and the structured form `detail()` for buttons). No
text here names a command-line flag. `EndpointError` (no usable model) lives here
too, so the language server can catch it without loading the HTTP side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lantern.shapes import OPTIONAL, wire

ErrorKind = Literal[
    "auth", "not_found", "unreachable", "rate_limited", "context_length", "timeout",
    "stream", "bad_request", "server", "tools_unsupported",
    "wrong_url", "redirected", "not_api", "quota", "out_of_memory", "filtered", "truncated",
]  # fmt: skip

_CHOICES_SHOWN = 12


@dataclass(frozen=True)
class Fix:
    """One step that makes the failure go away.

    `setting` is a Lantern setting by name (`baseUrl`, `model`, `apiKey`,
    `maxOutputTokens`, `maxContextTokens`, `toolProtocol`, `headers`), `value` the
    value to give it when Lantern knows it, `choices` the values the endpoint offers
    (its models). `note` is Lantern's words on the step, fit for any client; a fix
    without a setting is a change on the model server (`OLLAMA_CONTEXT_LENGTH=16384`).
    """

    setting: str | None = field(default=None, metadata=OPTIONAL)
    value: str | int | None = field(default=None, metadata=OPTIONAL)
    choices: tuple[str, ...] = field(default=(), metadata=wire(optional=True, sent_as=list))
    note: str = field(default="", metadata=OPTIONAL)

    def editor_text(self) -> str:
        """The step in a setting's words: what an editor (or any LSP client) shows."""
        if self.setting is None:
            return self.note
        if self.setting == "apiKey":
            how = "set the right API key (the `apiKey` setting; in VS Code: Lantern: Set API Key)"
        elif self.value is not None:
            how = f"set `{self.setting}` to {self.value}"
        elif self.choices:
            how = f"set `{self.setting}` to one the endpoint has: {shown(self.choices)}"
        else:
            how = f"change the `{self.setting}` setting"
        return f"{how} ({self.note})" if self.note else how


@dataclass(frozen=True)
class Detail:
    """A failure or an outcome as data, for a client to render settings and buttons from
    (`detail` and `warnings` in docs/protocol.md#lanternask, `lantern/models`' `detail`).

    `code` is `model_<kind>`, `no_model`, or for what is not an error the outcome
    (`filtered`, `truncated`, `prompt_truncated`); `message` the whole human text.
    """

    code: str
    message: str
    summary: str
    status: int | None = field(default=None, metadata=OPTIONAL)
    provider_message: str | None = field(default=None, metadata=OPTIONAL)
    fixes: list[Fix] = field(default_factory=list)


def shown(choices: tuple[str, ...]) -> str:
    more = len(choices) - _CHOICES_SHOWN
    return ", ".join(choices[:_CHOICES_SHOWN]) + (f" and {more} more" if more > 0 else "")


class ModelError(Exception):
    """A failed model turn: what happened, the provider's words, and how to fix it.

    `retryable` marks failures worth one more try of the same request (a stream
    cut or stalled, a transient error reported inside the stream); deterministic
    ones (context size, invalid request, quota, out of memory) are never sent again.
    `message` is the whole text for an editor: no command-line flag in it.
    """

    def __init__(
        self,
        kind: ErrorKind,
        summary: str,
        *,
        words: str = "",
        status: int | None = None,
        fixes: tuple[Fix, ...] = (),
        retryable: bool | None = None,
    ) -> None:
        self.kind: ErrorKind = kind
        self.summary = summary
        self.words = words
        self.status = status
        self.fixes = fixes
        self.retryable = kind == "stream" if retryable is None else retryable
        super().__init__(self.message)

    @property
    def headline(self) -> str:
        """What happened and what the provider said, on one line."""
        return f"{self.summary}: {self.words}" if self.words else self.summary

    @property
    def message(self) -> str:
        steps = "; or ".join(f.editor_text() for f in self.fixes if f.editor_text())
        return f"{self.headline}; {steps}" if steps else self.headline

    def with_fixes(self, *fixes: Fix, kind: ErrorKind | None = None) -> ModelError:
        """The same failure with these fixes first (and another kind, when given)."""
        return ModelError(
            kind or self.kind,
            self.summary,
            words=self.words,
            status=self.status,
            fixes=(*fixes, *self.fixes),
            retryable=self.retryable,
        )

    @property
    def code(self) -> str:
        """The stable code a client recognises: `model_<kind>` (the result's `errorCode`)."""
        return f"model_{self.kind}"

    def detail(self, code: str | None = None) -> Detail:
        """This failure as data; `code` replaces `model_<kind>` for a stop that is not an
        error (`filtered`, `truncated`) or for a warning (`prompt_truncated`)."""
        return Detail(
            code or self.code,
            self.message,
            self.summary,
            status=self.status,
            provider_message=self.words or None,
            fixes=list(self.fixes),
        )


class EndpointError(Exception):
    """No usable model. `str()` says how to configure one in settings' words (for an
    editor); `cli` says it for the command line; `fixes` is the same as data."""

    code = "no_model"

    def __init__(self, message: str, *, cli: str | None = None, fixes: tuple[Fix, ...] = ()):
        super().__init__(message)
        self.cli = cli or message
        self.fixes = fixes

    def detail(self) -> Detail:
        return Detail(self.code, str(self), str(self), fixes=list(self.fixes))
