"""The VS Code extension offers exactly the server's settings, so the two cannot drift.

The server's side is its settings model (as a JSON schema would describe it: names,
defaults, types, choices, bounds) and its trust rule; the extension's side is package.json's
``contributes.configuration``, the list it sends (src/settings.ts) and its own
trust rule (src/trust.ts). Adding a setting to one without the other fails here.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest
from lantern.settings import trust
from lantern.settings.model import Section, Settings, setting_names, setting_of
from lantern.shapes import camel

EXTENSION = Path(__file__).resolve().parents[2] / "vscode-extension"
#: How to start the server, where the conversation is shown, whether the editor's context
#: goes with a question, whether the editor answers the server's navigation requests: the
#: extension's own.
EXTENSION_ONLY = {"server.command", "conversation.location", "editorContext", "navigation"}
#: The extension keeps the API key in VS Code's secret storage, not in settings.
SERVER_ONLY = {"apiKey"}
#: Plain strings in the editor, so its Settings UI edits them in place; "" is unset there,
#: as it is for the server (and the extension never sends "").
EMPTY_IS_UNSET = {"model", "baseUrl"}


def json_schema(hint: Any) -> dict[str, Any]:
    """A field's type as a JSON schema writes it."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return {"enum": list(args), "type": "string"}
    if origin is UnionType:
        return {"anyOf": [json_schema(arg) for arg in args]}
    if origin is tuple:
        return {"type": "array", "items": json_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": json_schema(args[1])}
    names = {str: "string", int: "integer", float: "number", bool: "boolean", NoneType: "null"}
    return {"type": names[hint]}


def server_properties(model: type[Section] = Settings, prefix: str = "") -> dict[str, Any]:
    """The settings model as a JSON schema's properties (type, default, choices, bounds),
    one entry per dotted setting name."""
    hints = get_type_hints(model)
    defaults = model().model_dump(mode="json")
    flat: dict[str, dict[str, Any]] = {}
    for item in dataclasses.fields(model):
        name, setting = f"{prefix}{camel(item.name)}", setting_of(item)
        if setting.section is not None:
            flat.update(server_properties(setting.section, f"{name}."))
        else:
            schema = json_schema(hints[item.name])
            flat[name] = {**schema, **setting.bounds, "default": defaults[item.name]}
    return flat


def extension_properties() -> dict[str, dict[str, Any]]:
    package = json.loads((EXTENSION / "package.json").read_text("utf-8"))
    properties = package["contributes"]["configuration"]["properties"]
    return {name.removeprefix("lantern."): prop for name, prop in properties.items()}


def ts_list(file: str, name: str) -> list[str]:
    """The strings of ``export const NAME = [...] as const`` in an extension source file,
    a ``...OTHER`` in it replaced by that list (looked up in the other source files)."""
    text = (EXTENSION / "src" / file).read_text("utf-8")
    found = re.search(rf"export const {name} = \[(.*?)\] as const", text, re.S)
    assert found, f"{name} not found in {file}"
    names: list[str] = []
    for string, spread in re.findall(r'"([^"]+)"|\.\.\.(\w+)', found[1]):
        if not spread:
            names.append(string)
            continue
        [home] = [
            f.name
            for f in (EXTENSION / "src").glob("*.ts")
            if f"const {spread} =" in f.read_text("utf-8")
        ]
        names += ts_list(home, spread)
    return names


def json_types(prop: dict[str, Any]) -> set[str]:
    """``"string"``, ``["string", "null"]`` and ``anyOf`` alike, as a set of type names."""
    if "anyOf" in prop:
        return {t for option in prop["anyOf"] for t in json_types(option)}
    kind = prop.get("type")
    return {kind} if isinstance(kind, str) else set(kind or ())


SENT = sorted(set(setting_names()) - SERVER_ONLY)


def test_the_extension_offers_every_server_setting_and_no_other() -> None:
    assert set(setting_names()) == set(server_properties())
    assert set(extension_properties()) - EXTENSION_ONLY == set(SENT)


def test_the_extension_sends_every_server_setting() -> None:
    assert sorted(ts_list("settings.ts", "SERVER_SETTINGS")) == SENT


@pytest.mark.parametrize("name", SENT)
def test_same_default_type_and_choices(name: str) -> None:
    server, extension = server_properties()[name], extension_properties()[name]
    if name in EMPTY_IS_UNSET:
        assert (extension.get("default"), server.get("default")) == ("", None)
        assert json_types(extension) == {"string"} and json_types(server) == {"string", "null"}
        assert Settings.model_validate({name: ""}).model_dump(by_alias=True)[name] is None
        return
    assert extension.get("default") == server.get("default")
    assert json_types(extension) == json_types(server)
    assert extension.get("enum") == server.get("enum")
    assert extension.get("items") == server.get("items")


@pytest.mark.parametrize("name", SENT)
def test_the_extension_offers_no_value_the_server_refuses(name: str) -> None:
    server, extension = server_properties()[name], extension_properties()[name]
    if "minimum" in server:
        assert extension.get("minimum", float("-inf")) >= server["minimum"]
    if "exclusiveMinimum" in server:
        assert extension.get("minimum", float("-inf")) > server["exclusiveMinimum"]


def test_the_same_trust_rule() -> None:
    """What a repository may lower or add to is the same on both sides; what only the
    user may set is scoped so that VS Code itself ignores a workspace's value."""
    assert set(ts_list("trust.ts", "LOWER_ONLY")) == set(trust.LOWER_ONLY)
    assert set(ts_list("trust.ts", "ADD_ONLY")) == set(trust.ADD_ONLY)
    user_only = ts_list("trust.ts", "USER_ONLY")
    assert {"server.command", "baseUrl", "model", "approval.mode", "approval.allow"} <= set(
        user_only
    )
    extension = extension_properties()
    for name in user_only:
        assert extension[name].get("scope") in ("application", "machine"), name
    # A narrowing setting must be `resource`-scoped: VS Code drops a `window` setting
    # from a folder's own settings in a multi-root workspace, so the folder could not
    # narrow anything there.
    for name in (*trust.LOWER_ONLY, *trust.ADD_ONLY):
        assert extension[name].get("scope") == "resource", name
