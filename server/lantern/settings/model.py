"""What Lantern's settings are: one pydantic model, its defaults and its checks.

The model's camelCase aliases are the settings' names everywhere: the keys of
``initializationOptions``, of the ``lantern`` configuration section, of VS Code's
``lantern.<name>`` settings and of ``config.toml``. Each value is checked by our
own function so that a message says what was expected and what came, and never
echoes the API key. Where the values come from, and which wins, is
:mod:`lantern.settings.sources`; the reference for users is docs/settings.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from lantern.escaping import public_url

__all__ = ["Settings", "SettingsError", "ToolProtocol", "describe", "setting_names"]

ApprovalMode = Literal["ask", "workspace"]
#: ``native`` tool calls, a ``text`` protocol described in the system prompt, or
#: ``auto``: native until the endpoint rejects tools or the model writes calls as text.
ToolProtocol = Literal["auto", "native", "text"]


class SettingsError(ValueError):
    """A setting is invalid; ``key`` is its dotted name, ``source`` the layer's label."""

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.source = source


# --------------------------------------------------------------------------- values


def describe(value: object) -> str:
    """A short rendering of a bad value for an error message (never a long string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float):
        return repr(value)
    kinds = {Mapping: "an object", list: "a list", tuple: "a list"}
    kind = next((v for k, v in kinds.items() if isinstance(value, k)), None)
    return kind or f"a value of type {type(value).__name__}"


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {describe(value)}")
    return value.strip() or None


def _secret(value: object) -> str | None:
    if not isinstance(value, str):  # the type only: a misplaced key must not be echoed
        raise ValueError(f"must be a string, got {type(value).__name__}")
    return value.strip() or None


def _url(value: object) -> str | None:
    text = _text(value)
    if text is None:
        return None
    parts = urlsplit(text)
    # A password may be there: what is shown stops at the last `@`.
    shown = describe(f"…@{text.rpartition('@')[2]}" if "@" in text else text)
    if not text.lower().startswith(("http://", "https://")):
        raise ValueError(f"must start with http:// or https://, got {shown}")
    if not parts.netloc:
        raise ValueError(f"must name a host after {parts.scheme}://, got {shown}")
    try:
        parts.port  # noqa: B018 (it checks the port)
    except ValueError:
        raise ValueError(
            f"is not a valid URL (a password with / ? # or @ in it must be percent-encoded), "
            f"got {shown}"
        ) from None
    return text


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: Headers the HTTP client sets itself: a setting must not change how the body is framed.
_RESERVED_HEADERS = {"host", "content-length", "content-type", "transfer-encoding", "connection"}


def kind(value: object) -> str:
    """`a string`, `a list`, …: what a value is, without showing it."""
    if isinstance(value, str):
        return "a string"
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return "a number" if number else describe(value)


def _headers(value: object) -> dict[str, str]:
    """Extra HTTP headers for every model request, e.g. Azure's ``api-key``. Values may be
    credentials: a message names the header, never its value."""
    if not isinstance(value, Mapping):
        # The value is not echoed: it may be a key put in the wrong place.
        raise ValueError(f"must be an object of header names and values, got {kind(value)}")
    headers: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name.strip()):
            raise ValueError(f"{describe(name)} is not a header name")
        if name.strip().lower() in _RESERVED_HEADERS:
            raise ValueError(f"header {name.strip()!r} is set by Lantern itself")
        if not isinstance(item, str) or any(c in item for c in "\r\n\0"):
            raise ValueError(f"header {name.strip()!r} must be a one-line string")
        headers[name.strip()] = item.strip()
    return headers


def _globs(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        single = "a single string " if isinstance(value, str) else ""
        raise ValueError(f"must be a list of strings, got {single}{describe(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise ValueError(
                f"must be a list of non-empty strings, item {index} is {describe(item)}"
            )
    return tuple(item.strip() for item in value)


def _number(value: object) -> float | None:
    """A finite int or float (not a bool), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _count(value: object) -> int:
    number = _number(value)
    if number is not None and number >= 1 and number.is_integer():
        return int(number)
    raise ValueError(f"must be an integer ≥ 1, got {describe(value)}")


def _seconds(value: object) -> float:
    number = _number(value)
    if number is not None and number > 0:
        return number
    raise ValueError(f"must be a number > 0, got {describe(value)}")


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"must be true or false, got {describe(value)}")


def _one_of(choices: Any) -> Callable[[object], Any]:
    names = [repr(c) for c in get_args(choices)]
    expected = f"{', '.join(names[:-1])} or {names[-1]}"

    def check(value: object) -> Any:
        if isinstance(value, str) and value.strip() in get_args(choices):
            return value.strip()
        raise ValueError(f"must be {expected}, got {describe(value)}")

    return check


def _checked(check: Callable[[object], object]) -> BeforeValidator:
    """Our own check first, for our messages; pydantic's then only sees good values."""
    return BeforeValidator(lambda value: value if value is None else check(value))


Text = Annotated[str | None, _checked(_text)]
Secret = Annotated[str | None, _checked(_secret)]
Url = Annotated[str | None, _checked(_url)]
Globs = Annotated[tuple[str, ...], _checked(_globs)]
Count = Annotated[int, Field(ge=1), _checked(_count)]
Seconds = Annotated[float, Field(gt=0), _checked(_seconds)]
OptionalCount = Annotated[int | None, _checked(_count)]
Headers = Annotated[dict[str, str], _checked(_headers)]
Flag = Annotated[bool, _checked(_flag)]


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, frozen=True, extra="forbid")


class ApprovalSettings(_Section):
    mode: Annotated[ApprovalMode, _checked(_one_of(ApprovalMode))] = "ask"
    allow: Globs = ()
    deny: Globs = ()
    timeout_seconds: Seconds = 120.0


class Settings(_Section):
    """Every setting and its default; the camelCase alias is the setting's name."""

    model: Text = None
    base_url: Url = None
    api_key: Secret = Field(default=None, repr=False)
    approval: ApprovalSettings = Field(default_factory=ApprovalSettings)
    max_steps: Count = 20
    max_tool_output_bytes: Count = 262144
    max_context_tokens: OptionalCount = None  # None: the endpoint's own window
    request_timeout_seconds: Seconds = 120.0
    question_timeout_seconds: Seconds = 300.0
    tool_protocol: Annotated[ToolProtocol, _checked(_one_of(ToolProtocol))] = "auto"
    max_output_tokens: OptionalCount = None
    headers: Headers = Field(default={}, repr=False)
    project_instructions: Flag = True  # offer AGENTS.md & co. with a first question

    def public_dict(self) -> dict[str, Any]:
        """The settings by name, safe to print or log: the API key masked, the base URL
        without userinfo or query (but Azure's api-version): a key may be there."""
        data = self.model_dump(mode="json", by_alias=True)
        if self.base_url is not None:
            data["baseUrl"] = public_url(self.base_url, keep=("api-version",))
        key = self.api_key
        data["apiKey"] = None if key is None else "…" if len(key) < 12 else f"{key[:3]}…{key[-4:]}"
        data["headers"] = {name: "…" for name in self.headers}  # values may be keys
        return data


def setting_names(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    """Every setting's dotted name, in declaration order: ``model``, …, ``approval.mode``, …"""
    names: list[str] = []
    for name, field in model.model_fields.items():
        alias = f"{prefix}{field.alias or name}"
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            names += setting_names(sub, f"{alias}.")
        else:
            names.append(alias)
    return names
