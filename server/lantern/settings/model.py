"""What Lantern's settings are: two frozen dataclasses, their defaults and their checks.

Each field's camelCase name (`lantern.shapes.camel`: ``max_steps`` → ``maxSteps``) is
the setting's name everywhere: the keys of ``initializationOptions``, of the
``lantern`` configuration section, of VS Code's ``lantern.<name>`` settings and of
``config.toml``. Each value is checked by our own function (the field's
:class:`Setting`) so that a message says what was expected and what came, and never
echoes the API key. Only the standard library: `lantern serve` resolves its settings
before it answers ``initialize``, and a pydantic model made half of what Lantern added
to a bare pygls server's start-up (`benchmarks/server_bench.py`). Where the values come
from, and which wins, is :mod:`lantern.settings.sources`; the reference for users is
docs/settings.md.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit

from lantern.escaping import public_url
from lantern.shapes import camel

__all__ = [
    "Settings",
    "SettingsError",
    "ToolProtocol",
    "checked",
    "describe",
    "setting_names",
]

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


@dataclass(frozen=True)
class Setting:
    """What a field's metadata says of it: the check its value passes (what the check
    returns is kept), or the section of settings it holds; and the bounds the check
    holds a number to, as JSON schema names them (``minimum``, ``exclusiveMinimum``),
    which the extension's settings must not go beyond
    (`tests/unit/test_extension_settings.py`)."""

    check: Callable[[object], object] | None = None
    section: type[Section] | None = None
    bounds: Mapping[str, float] = field(default_factory=dict)


_KEY = "lantern.setting"


def rule(check: Callable[[object], object], **bounds: float) -> Mapping[str, Setting]:
    """A field's metadata: `field(default=20, metadata=rule(_count, minimum=1))`."""
    return MappingProxyType({_KEY: Setting(check=check, bounds=bounds)})


def nested(model: type[Section]) -> Mapping[str, Setting]:
    """The metadata of a field that holds a section of settings (``approval``)."""
    return MappingProxyType({_KEY: Setting(section=model)})


def setting_of(item: dataclasses.Field[Any]) -> Setting:
    found: Setting = item.metadata[_KEY]
    return found


#: (dotted name, what is wrong) for one bad key; ``None``: no setting has that name.
Problem = tuple[str, str | None]
_S = TypeVar("_S", bound="Section")


def checked(
    model: type[Section], data: Mapping[Any, object], prefix: str = ""
) -> tuple[dict[str, Any], list[Problem]]:
    """The values `data` gives by setting name, each through its check, a section's as a
    dict of its own; and a problem for each bad or unknown key, which is left out. A
    ``null`` where the default is ``null`` is left out too (not set here).

    Problems come in the order of the fields, a section's at its place, then the unknown
    keys in the order given."""
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    names: set[str] = set()
    for item in dataclasses.fields(model):
        name = camel(item.name)
        names.add(name)
        if name not in data:
            continue
        value, setting = data[name], setting_of(item)
        if setting.section is not None:
            if not isinstance(value, Mapping):
                problems.append((f"{prefix}{name}", f"must be an object, got {describe(value)}"))
                continue
            values[name], bad = checked(setting.section, value, f"{prefix}{name}.")
            problems += bad
        elif value is None and item.default is None:
            continue
        else:
            assert setting.check is not None
            try:
                value = setting.check(value)
            except ValueError as exc:
                problems.append((f"{prefix}{name}", str(exc)))
                continue
            if value is not None:
                values[name] = value
    problems += [(f"{prefix}{key}", None) for key in data if key not in names]
    return values, problems


@dataclass(frozen=True)
class Section:
    """What both kinds of settings share: made from, and written as, values by name."""

    @classmethod
    def model_validate(cls: type[_S], data: Mapping[str, object]) -> _S:
        """These settings from values by setting name, every one checked; SettingsError
        for the first bad or unknown key."""
        values, problems = checked(cls, data)
        if problems:
            name, text = problems[0]
            raise SettingsError(f"{name}: {text or 'no such setting'}", key=name)
        return cls._made(values)

    @classmethod
    def _made(cls: type[_S], values: Mapping[str, Any]) -> _S:
        given: dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            name, inner = camel(item.name), setting_of(item).section
            if name in values:
                value = values[name]
                given[item.name] = inner._made(value) if inner is not None else value
        return cls(**given)

    def model_dump(
        self, *, mode: Literal["python", "json"] = "python", by_alias: bool = False
    ) -> dict[str, Any]:
        """Every setting by field name (`by_alias`: by setting name), a section as a dict;
        in ``json`` mode a list of globs is a list."""
        out: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Section):
                value = value.model_dump(mode=mode, by_alias=by_alias)
            elif isinstance(value, dict):
                value = dict(value)
            elif isinstance(value, tuple) and mode == "json":
                value = list(value)
            out[camel(item.name) if by_alias else item.name] = value
        return out

    def model_copy(self: _S, *, update: Mapping[str, Any] | None = None) -> _S:
        """A copy with the fields in `update` (by field name) replaced, unchecked."""
        return dataclasses.replace(self, **(update or {}))


@dataclass(frozen=True)
class ApprovalSettings(Section):
    mode: ApprovalMode = field(default="ask", metadata=rule(_one_of(ApprovalMode)))
    allow: tuple[str, ...] = field(default=(), metadata=rule(_globs))
    deny: tuple[str, ...] = field(default=(), metadata=rule(_globs))
    timeout_seconds: float = field(default=120.0, metadata=rule(_seconds, exclusiveMinimum=0))


@dataclass(frozen=True)
class Settings(Section):
    """Every setting and its default; the field's camelCase name is the setting's name."""

    model: str | None = field(default=None, metadata=rule(_text))
    base_url: str | None = field(default=None, metadata=rule(_url))
    api_key: str | None = field(default=None, repr=False, metadata=rule(_secret))
    approval: ApprovalSettings = field(
        default_factory=ApprovalSettings, metadata=nested(ApprovalSettings)
    )
    max_steps: int = field(default=20, metadata=rule(_count, minimum=1))
    max_tool_output_bytes: int = field(default=262144, metadata=rule(_count, minimum=1))
    # None: the endpoint's own window
    max_context_tokens: int | None = field(default=None, metadata=rule(_count))
    request_timeout_seconds: float = field(
        default=120.0, metadata=rule(_seconds, exclusiveMinimum=0)
    )
    question_timeout_seconds: float = field(
        default=300.0, metadata=rule(_seconds, exclusiveMinimum=0)
    )
    tool_protocol: ToolProtocol = field(default="auto", metadata=rule(_one_of(ToolProtocol)))
    max_output_tokens: int | None = field(default=None, metadata=rule(_count))
    headers: dict[str, str] = field(default_factory=dict, repr=False, metadata=rule(_headers))
    # offer AGENTS.md & co. with a first question
    project_instructions: bool = field(default=True, metadata=rule(_flag))

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


def setting_names(model: type[Section] = Settings, prefix: str = "") -> list[str]:
    """Every setting's dotted name, in declaration order: ``model``, …, ``approval.mode``, …"""
    names: list[str] = []
    for item in dataclasses.fields(model):
        name, inner = f"{prefix}{camel(item.name)}", setting_of(item).section
        names += setting_names(inner, f"{name}.") if inner is not None else [name]
    return names
