"""Failures as data: a stable code, the provider's own words, and fixes a client can render.

A `ModelError` says what happened in Lantern's words (`summary`), carries what
the provider said (`words`, already escaped onto one line: it is outside text),
the HTTP status when there was one, and `fixes`: which setting to change, to
what value when it is known, which values the endpoint offers, or a change on
the model server itself. Each client words the fix for its own users: the CLI
names flags and environment variables (`cli.output.failure_lines`), an editor
names settings (`message`, and the structured form `to_dict` for buttons). No
text here names a command-line flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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

    setting: str | None = None
    value: str | int | None = None
    choices: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.setting:
            data["setting"] = self.setting
        if self.value is not None:
            data["value"] = self.value
        if self.choices:
            data["choices"] = list(self.choices)
        if self.note:
            data["note"] = self.note
        return data

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

    def to_dict(self) -> dict[str, Any]:
        """The structured form a client renders settings and buttons from (docs/protocol.md)."""
        data: dict[str, Any] = {"code": f"model_{self.kind}", "message": self.message}
        data["summary"] = self.summary
        if self.status is not None:
            data["status"] = self.status
        if self.words:
            data["providerMessage"] = self.words
        data["fixes"] = [f.to_dict() for f in self.fixes]
        return data
