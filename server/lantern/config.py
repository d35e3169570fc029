"""Settings of Lantern, their validation and their precedence (DESIGN section 10).

One vocabulary everywhere: the keys of ``initializationOptions``, of the
``lantern`` configuration section, of VS Code's ``lantern.<name>`` settings
and of ``config.toml`` are the same camelCase names. A dotted name nests
(``{"approval": {"mode": "ask"}}``); flat dotted keys (``{"approval.mode":
"ask"}``) are accepted too.

Precedence, highest first: CLI flags > client (``initializationOptions`` /
``workspace/configuration``) > environment > ``config.toml`` > defaults.
Each layer overrides lower ones key by key; the ``approval`` keys merge
individually. In any layer ``null`` (and, for the string settings, an empty
string) means "not set here", so a lower layer or the default shows through.

Error messages name the bad key and the layer it came from, never an absolute
path (the settings file is always called ``config.toml``), and never echo the
API key.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast
from urllib.parse import urlsplit

import platformdirs

__all__ = [
    "CONFIG_FILE_LABEL",
    "SETTING_NAMES",
    "ApprovalSettings",
    "Settings",
    "SettingsError",
    "config_path",
    "env_layer",
    "load_file_layer",
    "load_settings",
    "load_settings_lenient",
    "mask_secret",
    "parse_layer",
    "parse_layer_lenient",
    "resolve",
    "resolve_lenient",
]

#: How the settings file is named in messages (never its absolute path).
CONFIG_FILE_LABEL = "config.toml"

ApprovalMode = Literal["ask", "workspace"]
_APPROVAL_MODES: tuple[ApprovalMode, ...] = ("ask", "workspace")


class SettingsError(ValueError):
    """A setting is invalid. The message names the key (and the layer it came from).

    ``key`` is the dotted setting name when one is known; ``source`` is the
    layer label (``"config.toml"``, ``"initializationOptions"``, ``"--max-steps"``…).
    """

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.source = source


@dataclass(frozen=True)
class ApprovalSettings:
    mode: ApprovalMode = "ask"
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    timeout_seconds: float = 120.0


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    approval: ApprovalSettings = field(default_factory=ApprovalSettings)
    max_steps: int = 20
    max_tool_output_bytes: int = 262144
    max_context_tokens: int = 32000
    request_timeout_seconds: float = 120.0
    question_timeout_seconds: float = 300.0

    def public_dict(self) -> dict[str, object]:
        """The settings in DESIGN's vocabulary, safe to print or log (API key masked)."""
        return {
            "model": self.model,
            "baseUrl": self.base_url,
            "apiKey": mask_secret(self.api_key),
            "approval": {
                "mode": self.approval.mode,
                "allow": list(self.approval.allow),
                "deny": list(self.approval.deny),
                "timeoutSeconds": self.approval.timeout_seconds,
            },
            "maxSteps": self.max_steps,
            "maxToolOutputBytes": self.max_tool_output_bytes,
            "maxContextTokens": self.max_context_tokens,
            "requestTimeoutSeconds": self.request_timeout_seconds,
            "questionTimeoutSeconds": self.question_timeout_seconds,
        }


def mask_secret(value: str | None) -> str | None:
    """``"sk-…abcd"`` for a long key, ``"…"`` for a short one, ``None`` for none."""
    if value is None:
        return None
    if len(value) < 12:
        return "…"
    return f"{value[:3]}…{value[-4:]}"


# --------------------------------------------------------------------------- validators


def _describe(value: object) -> str:
    """A short rendering of a bad value for an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a value of type {type(value).__name__}"


def _string(name: str, value: object, *, secret: bool = False) -> str | None:
    if not isinstance(value, str):
        shown = type(value).__name__ if secret else _describe(value)
        raise ValueError(f"must be a string, got {shown}")
    value = value.strip()
    return value or None


def _plain_string(name: str, value: object) -> str | None:
    return _string(name, value)


def _secret_string(name: str, value: object) -> str | None:
    return _string(name, value, secret=True)


def _base_url(name: str, value: object) -> str | None:
    text = _string(name, value)
    if text is None:
        return None
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not text.lower().startswith(
        ("http://", "https://")
    ):
        raise ValueError(f"must start with http:// or https://, got {_describe(text)}")
    if not parts.netloc:
        raise ValueError(f"must name a host after {parts.scheme}://, got {_describe(text)}")
    return text


def _mode(name: str, value: object) -> ApprovalMode:
    if isinstance(value, str) and value.strip() in _APPROVAL_MODES:
        return cast(ApprovalMode, value.strip())
    raise ValueError(f"must be 'ask' or 'workspace', got {_describe(value)}")


def _globs(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ValueError(f"must be a list of strings, got a single string {_describe(value)}")
    if not isinstance(value, list | tuple):
        raise ValueError(f"must be a list of strings, got {_describe(value)}")
    out: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise ValueError(
                f"must be a list of non-empty strings, item {index} is {_describe(item)}"
            )
        out.append(item.strip())
    return tuple(out)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 1:
        return int(value)
    raise ValueError(f"must be an integer ≥ 1, got {_describe(value)}")


def _positive_number(name: str, value: object) -> float:
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        return float(value)
    raise ValueError(f"must be a number > 0, got {_describe(value)}")


_Validator = Callable[[str, object], object]

#: Setting name (DESIGN's vocabulary) -> (dataclass attribute, validator).
_TOP: dict[str, tuple[str, _Validator]] = {
    "model": ("model", _plain_string),
    "baseUrl": ("base_url", _base_url),
    "apiKey": ("api_key", _secret_string),
    "maxSteps": ("max_steps", _positive_int),
    "maxToolOutputBytes": ("max_tool_output_bytes", _positive_int),
    "maxContextTokens": ("max_context_tokens", _positive_int),
    "requestTimeoutSeconds": ("request_timeout_seconds", _positive_number),
    "questionTimeoutSeconds": ("question_timeout_seconds", _positive_number),
}
_APPROVAL: dict[str, tuple[str, _Validator]] = {
    "mode": ("mode", _mode),
    "allow": ("allow", _globs),
    "deny": ("deny", _globs),
    "timeoutSeconds": ("timeout_seconds", _positive_number),
}

#: All setting names in DESIGN's vocabulary (dotted for nested ones).
SETTING_NAMES: tuple[str, ...] = (
    *("model", "baseUrl", "apiKey"),
    *(f"approval.{key}" for key in _APPROVAL),
    *(key for key in _TOP if key not in ("model", "baseUrl", "apiKey")),
)

#: Top-level keys that are silently ignored: VS Code's language client keeps its
#: own ``lantern.trace.server`` setting in the same configuration section, and the
#: extension's ``lantern.server.command`` (how to start the server) is not the server's.
_IGNORED_TOP_LEVEL = frozenset({"trace", "server"})


# --------------------------------------------------------------------------- parsing


def _suffix(source: str) -> str:
    return f" (from {source})" if source else ""


def _unknown(name: str, source: str) -> SettingsError:
    where = f" in {source}" if source else ""
    message = f"unknown setting {name!r}{where}"
    suggestion = _suggest(name)
    if suggestion:
        message += f" (did you mean {suggestion!r}?)"
    return SettingsError(message, key=name, source=source)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _suggest(name: str) -> str | None:
    squashed = _squash(name)
    for candidate in SETTING_NAMES:  # max_steps, MAXSTEPS, approval_mode…
        if _squash(candidate) == squashed:
            return candidate
    for candidate in SETTING_NAMES:  # "mode" -> "approval.mode"
        if "." in candidate and _squash(candidate.rsplit(".", 1)[1]) == squashed:
            return candidate
    matches = difflib.get_close_matches(name, SETTING_NAMES, n=1, cutoff=0.6)
    if not matches:
        lowered = {candidate.lower(): candidate for candidate in SETTING_NAMES}
        found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
        matches = [lowered[found[0]]] if found else []
    return matches[0] if matches else None


def _flatten(
    data: Mapping[str, object], source: str, errors: list[SettingsError]
) -> list[tuple[str, object]]:
    """(dotted name, raw value) pairs; structural problems go to ``errors``."""
    pairs: list[tuple[str, object]] = []
    for raw_key, value in data.items():
        if not isinstance(raw_key, str):
            errors.append(
                SettingsError(
                    f"setting names must be strings, got {_describe(raw_key)}{_suffix(source)}",
                    source=source,
                )
            )
            continue
        key = raw_key.strip()
        if key in _IGNORED_TOP_LEVEL:
            continue
        if key == "approval":
            if value is None:
                continue
            if not isinstance(value, Mapping):
                errors.append(
                    SettingsError(
                        "approval: must be an object with keys "
                        f"{', '.join(_APPROVAL)}, got {_describe(value)}{_suffix(source)}",
                        key="approval",
                        source=source,
                    )
                )
                continue
            for sub_key, sub_value in value.items():
                pairs.append((f"approval.{str(sub_key).strip()}", sub_value))
            continue
        pairs.append((key, value))
    return pairs


def _parse(
    data: Mapping[str, object], source: str, *, stop_at_first: bool
) -> tuple[dict[str, object], list[SettingsError]]:
    errors: list[SettingsError] = []
    result: dict[str, object] = {}
    if not isinstance(data, Mapping):
        errors.append(
            SettingsError(
                f"settings must be an object, got {_describe(data)}{_suffix(source)}",
                source=source,
            )
        )
        return result, errors
    seen: set[str] = set()
    for name, raw in _flatten(data, source, errors):
        if errors and stop_at_first:
            break
        if name.startswith("approval."):
            spec = _APPROVAL.get(name.removeprefix("approval."))
        else:
            spec = _TOP.get(name)
        if spec is None:
            errors.append(_unknown(name, source))
            continue
        if name in seen:
            errors.append(
                SettingsError(f"{name}: given twice{_suffix(source)}", key=name, source=source)
            )
            continue
        seen.add(name)
        if raw is None:
            continue
        try:
            value = spec[1](name, raw)
        except ValueError as exc:
            errors.append(SettingsError(f"{name}: {exc}{_suffix(source)}", key=name, source=source))
            continue
        if value is None:
            continue
        if name.startswith("approval."):
            approval = cast(dict[str, object], result.setdefault("approval", {}))
            approval[name.removeprefix("approval.")] = value
        else:
            result[name] = value
    return result, errors


def parse_layer(data: Mapping[str, object], source: str) -> dict[str, object]:
    """Validate one partial layer and return it normalized.

    The result uses DESIGN's camelCase names, ``approval`` nested, lists as
    tuples, timeouts as floats, and leaves out unset keys (``null``, ``""``).
    Parsing a normalized layer again returns it unchanged.
    Raises :class:`SettingsError` for the first bad or unknown key.
    """
    result, errors = _parse(data, source, stop_at_first=True)
    if errors:
        raise errors[0]
    return result


def parse_layer_lenient(
    data: Mapping[str, object], source: str
) -> tuple[dict[str, object], list[str]]:
    """Like :func:`parse_layer`, but bad keys are dropped and their messages returned."""
    result, errors = _parse(data, source, stop_at_first=False)
    return result, [str(error) for error in errors]


# --------------------------------------------------------------------------- sources


def config_path() -> Path:
    """Where ``config.toml`` lives: ``platformdirs.user_config_path("lantern")``."""
    return platformdirs.user_config_path("lantern") / "config.toml"


_TOML_POSITION = re.compile(
    r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$", re.S
)
_TOML_LINE_ONLY = re.compile(r"^(?P<msg>.*?)\s*\(at end of document\)$", re.S)


def _toml_error_message(exc: tomllib.TOMLDecodeError) -> str:
    text = str(exc)
    match = _TOML_POSITION.match(text)
    if match:
        return f"{CONFIG_FILE_LABEL} line {match['line']}: {match['msg']} (column {match['col']})"
    match = _TOML_LINE_ONLY.match(text)
    if match:
        return f"{CONFIG_FILE_LABEL} at end of file: {match['msg']}"
    return f"{CONFIG_FILE_LABEL}: {text}"


def _read_toml(path: Path) -> dict[str, object] | None:
    """The parsed file, ``None`` when it does not exist; SettingsError otherwise."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(
            f"{CONFIG_FILE_LABEL}: cannot be read ({type(exc).__name__})",
            source=CONFIG_FILE_LABEL,
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(
            f"{CONFIG_FILE_LABEL}: is not valid UTF-8", source=CONFIG_FILE_LABEL
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(_toml_error_message(exc), source=CONFIG_FILE_LABEL) from None


def load_file_layer(path: Path | None = None) -> dict[str, object]:
    """The validated ``config.toml`` layer (default: :func:`config_path`); missing file -> {}."""
    data = _read_toml(config_path() if path is None else path)
    if data is None:
        return {}
    return parse_layer(data, CONFIG_FILE_LABEL)


#: (setting, environment variables in order of preference).
_ENV_VARS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model", ("LANTERN_MODEL",)),
    ("baseUrl", ("LANTERN_BASE_URL", "OPENAI_BASE_URL")),
    ("apiKey", ("LANTERN_API_KEY", "OPENAI_API_KEY")),
)


def _env(environ: Mapping[str, str], *, lenient: bool) -> tuple[dict[str, object], list[str]]:
    result: dict[str, object] = {}
    messages: list[str] = []
    for name, variables in _ENV_VARS:
        for variable in variables:
            raw = environ.get(variable)
            if raw is None or not raw.strip():
                continue  # an empty variable is unset: fall back to the next one
            try:
                parsed = parse_layer({name: raw}, variable)
            except SettingsError as exc:
                if not lenient:
                    raise
                messages.append(str(exc))
                continue
            result.update(parsed)
            break
    return result, messages


def env_layer(environ: Mapping[str, str]) -> dict[str, object]:
    """The environment layer: ``LANTERN_MODEL``, ``LANTERN_BASE_URL``, ``LANTERN_API_KEY``,
    falling back to ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (``LANTERN_*`` wins)."""
    return _env(environ, lenient=False)[0]


# --------------------------------------------------------------------------- precedence


def _merge(layers: Iterable[Mapping[str, object]]) -> dict[str, object]:
    merged: dict[str, object] = {}
    approval: dict[str, object] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "approval":
                approval.update(cast(Mapping[str, object], value))
            else:
                merged[key] = value
    if approval:
        merged["approval"] = approval
    return merged


def _build(merged: Mapping[str, object]) -> Settings:
    kwargs: dict[str, object] = {
        _TOP[key][0]: value for key, value in merged.items() if key != "approval"
    }
    approval = cast(Mapping[str, object], merged.get("approval", {}))
    kwargs["approval"] = ApprovalSettings(
        **{_APPROVAL[key][0]: value for key, value in approval.items()}  # type: ignore[arg-type]
    )
    return Settings(**kwargs)  # type: ignore[arg-type]


def _labels(count: int, sources: Sequence[str] | None) -> list[str]:
    if sources is not None and len(sources) != count:
        raise ValueError(f"got {count} layers but {len(sources)} source labels")
    return (
        list(sources) if sources is not None else [f"settings layer {i + 1}" for i in range(count)]
    )


def resolve(*layers: Mapping[str, object], sources: Sequence[str] | None = None) -> Settings:
    """Settings from ``layers`` given LOWEST to HIGHEST precedence.

    Later layers override earlier ones key by key (``approval`` keys merge
    individually), defaults fill the rest. Layers may be raw or already
    normalized by :func:`parse_layer`; ``sources`` labels them in messages.
    Raises :class:`SettingsError` for the first bad key.
    """
    labels = _labels(len(layers), sources)
    parsed = [parse_layer(layer, label) for layer, label in zip(layers, labels, strict=True)]
    return _build(_merge(parsed))


def resolve_lenient(
    *layers: Mapping[str, object], sources: Sequence[str] | None = None
) -> tuple[Settings, list[str]]:
    """Like :func:`resolve`, but a bad key or value is dropped (the lower layer or
    the default is kept) and its message returned in the list."""
    labels = _labels(len(layers), sources)
    parsed: list[dict[str, object]] = []
    messages: list[str] = []
    for layer, label in zip(layers, labels, strict=True):
        good, bad = parse_layer_lenient(layer, label)
        parsed.append(good)
        messages.extend(bad)
    return _build(_merge(parsed)), messages


def load_settings(
    *,
    cli: Mapping[str, object] | None = None,
    client: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    file: Path | None = None,
    cli_source: str = "command line",
    client_source: str = "initializationOptions",
) -> Settings:
    """cli > client (initializationOptions / workspace configuration) > environment
    > config.toml (``file``, default :func:`config_path`) > defaults.

    ``environ`` defaults to ``os.environ``. Raises :class:`SettingsError`.
    """
    file_layer = load_file_layer(file)
    environment = env_layer(os.environ if environ is None else environ)
    return resolve(
        file_layer,
        environment,
        client or {},
        cli or {},
        sources=(CONFIG_FILE_LABEL, "environment", client_source, cli_source),
    )


def load_settings_lenient(
    *,
    cli: Mapping[str, object] | None = None,
    client: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    file: Path | None = None,
    cli_source: str = "command line",
    client_source: str = "initializationOptions",
) -> tuple[Settings, list[str]]:
    """Like :func:`load_settings`, but never raises for bad settings: a bad key is
    dropped, an unreadable or malformed ``config.toml`` is skipped as a whole, and
    every problem's message is returned in the list."""
    messages: list[str] = []
    file_data: Mapping[str, object] = {}
    try:
        file_data = _read_toml(config_path() if file is None else file) or {}
    except SettingsError as exc:
        messages.append(str(exc))
    environment, env_messages = _env(os.environ if environ is None else environ, lenient=True)
    messages.extend(env_messages)
    settings, layer_messages = resolve_lenient(
        file_data,
        environment,
        client or {},
        cli or {},
        sources=(CONFIG_FILE_LABEL, "environment", client_source, cli_source),
    )
    return settings, messages + layer_messages
