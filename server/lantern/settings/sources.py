"""Where settings come from: ``config.toml``, the environment, the client, CLI flags.

Precedence, highest first: CLI flags > client (``initializationOptions`` /
``workspace/configuration``) > environment > ``config.toml`` > defaults. Each
layer overrides lower ones key by key; the ``approval`` keys merge one by one.
In any layer ``null`` (and, for the string settings, an empty string) means
"not set here", so a lower layer or the default shows through. A dotted name
nests (``{"approval": {"mode": "ask"}}``); flat dotted keys (``{"approval.mode":
"ask"}``) are accepted too.

Every layer takes the same path (:func:`_layer`): the strict mode raises the
first problem, the lenient mode leaves each bad key out and reports it. Messages
name the key and the layer, never an absolute path (the file is always called
``config.toml``), and never echo the API key.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, Unpack

import platformdirs

from lantern.settings.model import (
    Problem,
    Settings,
    SettingsError,
    checked,
    describe,
    setting_names,
)

__all__ = ["Settings", "SettingsError", "config_path", "load_settings", "load_settings_lenient"]

_FILE_LABEL = "config.toml"  # how the settings file is named in messages, never its path
_NAMES = setting_names()  # dotted: "model", …, "approval.mode", …
_SECTIONS = frozenset(name.split(".")[0] for name in _NAMES if "." in name)
#: VS Code's language client keeps ``lantern.trace.server`` in the same section, and the
#: extension's ``lantern.server.command`` (how to start the server) is not the server's.
_IGNORED = frozenset({"trace", "server"})


# --------------------------------------------------------------------------- one layer


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


#: Squashed spellings -> setting: "maxsteps" and "mode" (for "approval.mode") alike.
_SPELLINGS = {_squash(n.rsplit(".", 1)[-1]): n for n in _NAMES} | {_squash(n): n for n in _NAMES}


def _suggest(name: str) -> str | None:
    """The setting meant by ``max_steps``, ``baseURL``, ``mode``, ``maxStep``…"""
    import difflib  # only for a misspelt key: keeps it off every command's start-up

    found = difflib.get_close_matches(_squash(name), list(_SPELLINGS), n=1, cutoff=0.6)
    return _SPELLINGS[found[0]] if found else None


def _problem(name: str, text: str, source: str) -> SettingsError:
    return SettingsError(f"{name}: {text} (from {source})", key=name, source=source)


def _from_check(found: Problem, source: str) -> SettingsError:
    name, text = found
    if text is None:
        suggestion = _suggest(name)
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        return SettingsError(f"unknown setting {name!r} in {source}{hint}", key=name, source=source)
    return _problem(name, text, source)


def _nest(data: Mapping[Any, object], source: str) -> tuple[dict[str, Any], list[SettingsError]]:
    """Flat dotted keys nested into their section; a key given twice is a problem."""
    pairs: list[tuple[str, object]] = []
    problems: list[SettingsError] = []
    for raw_key, value in data.items():
        key = str(raw_key).strip()
        if key in _IGNORED or (key in _SECTIONS and value is None):
            continue
        if key in _SECTIONS and isinstance(value, Mapping):
            pairs += [(f"{key}.{str(sub).strip()}", item) for sub, item in value.items()]
        elif key in _SECTIONS:
            keys = ", ".join(n.split(".", 1)[1] for n in _NAMES if n.startswith(f"{key}."))
            text = f"must be an object with keys {keys}, got {describe(value)}"
            problems.append(_problem(key, text, source))
        else:
            pairs.append((key, value))
    nested: dict[str, Any] = {}
    seen: set[str] = set()
    for key, value in pairs:
        head, _, tail = key.partition(".")
        node, name = (nested.setdefault(head, {}), tail) if head in _SECTIONS else (nested, key)
        if key in seen:
            problems.append(_problem(key, "given twice", source))
        elif value is not None or key not in _NAMES:  # null: not set here
            node[name] = value
        seen.add(key)
    return nested, problems


def _layer(data: object, source: str) -> tuple[dict[str, Any], list[SettingsError]]:
    """One layer validated: its set keys by name (unset ones left out), and its problems.

    A bad or unknown key is reported and left out; the rest of the layer stands.
    """
    if not isinstance(data, Mapping):
        return {}, [
            SettingsError(
                f"settings must be an object, got {describe(data)} (from {source})", source=source
            )
        ]
    nested, problems = _nest(data, source)
    values, bad = checked(Settings, nested)
    return values, problems + [_from_check(found, source) for found in bad]


# --------------------------------------------------------------------------- layers


def config_path() -> Path:
    """Where ``config.toml`` lives: ``platformdirs.user_config_path("lantern")``."""
    return platformdirs.user_config_path("lantern") / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed file, ``{}`` when it does not exist; SettingsError otherwise."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(
            f"{_FILE_LABEL}: cannot be read ({type(exc).__name__})", source=_FILE_LABEL
        ) from None
    except UnicodeDecodeError:
        raise SettingsError(f"{_FILE_LABEL}: is not valid UTF-8", source=_FILE_LABEL) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # "… (at line 3, column 11)" -> "config.toml line 3: …"
        text = str(exc)
        found = re.match(r"(?s)(.*?)\s*\(at (?:line (\d+), column (\d+)|end of document)\)$", text)
        if found and found[2]:
            text = f" line {found[2]}: {found[1]} (column {found[3]})"
        else:
            text = f" at end of file: {found[1]}" if found else f": {text}"
        raise SettingsError(f"{_FILE_LABEL}{text}", source=_FILE_LABEL) from None


#: Setting -> environment variables, in order of preference.
_ENVIRONMENT = {
    "model": ("LANTERN_MODEL",),
    "baseUrl": ("LANTERN_BASE_URL", "OPENAI_BASE_URL"),
    "apiKey": ("LANTERN_API_KEY", "OPENAI_API_KEY"),
    "toolProtocol": ("LANTERN_TOOL_PROTOCOL",),
}


def _environment(environ: Mapping[str, str]) -> tuple[dict[str, Any], list[SettingsError]]:
    """An empty or bad variable is skipped: the next one for the same setting is tried."""
    layer: dict[str, Any] = {}
    problems: list[SettingsError] = []
    for name, variables in _ENVIRONMENT.items():
        for variable in variables:
            if environ.get(variable, "").strip():
                parsed, bad = _layer({name: environ[variable]}, variable)
                problems += bad
                if not bad:
                    layer.update(parsed)
                    break
    return layer, problems


class Sources(TypedDict, total=False):
    """The layers: ``cli`` > ``client`` > ``environ`` (default ``os.environ``) > ``file``
    (default :func:`config_path`); the labels name the first two in messages."""

    cli: Mapping[str, object] | None
    client: Mapping[str, object] | None
    environ: Mapping[str, str] | None
    file: Path | None
    cli_source: str
    client_source: str


def _resolve(sources: Sources) -> tuple[Settings, list[SettingsError]]:
    try:
        file = _layer(_read_toml(sources.get("file") or config_path()), _FILE_LABEL)
    except SettingsError as exc:  # an unreadable or malformed file counts as a whole
        file = ({}, [exc])
    environ = sources.get("environ")
    layers = [
        file,
        _environment(os.environ if environ is None else environ),
        _layer(sources.get("client") or {}, sources.get("client_source", "initializationOptions")),
        _layer(sources.get("cli") or {}, sources.get("cli_source", "command line")),
    ]
    merged: dict[str, Any] = {}
    problems: list[SettingsError] = []
    for layer, bad in layers:  # lowest first; a section's keys merge one by one
        for key, value in layer.items():
            merged[key] = {**merged.get(key, {}), **value} if key in _SECTIONS else value
        problems += bad
    return Settings.model_validate(merged), problems


def load_settings(**sources: Unpack[Sources]) -> Settings:
    """The settings from these layers; raises :class:`SettingsError` for the first problem."""
    settings, problems = _resolve(sources)
    if problems:
        raise problems[0]
    return settings


def load_settings_lenient(**sources: Unpack[Sources]) -> tuple[Settings, list[str]]:
    """The settings without the bad keys (the lower layer or the default stands instead),
    and a message for each problem; an unreadable ``config.toml`` is skipped whole."""
    settings, problems = _resolve(sources)
    return settings, [str(problem) for problem in problems]
