"""The VS Code extension offers exactly the server's settings, so the two cannot drift.

The server's side is its settings model (its JSON schema: names, defaults, types,
choices, bounds) and its trust rule; the extension's side is package.json's
``contributes.configuration``, the list it sends (src/settings.ts) and its own
trust rule (src/trust.ts). Adding a setting to one without the other fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lantern.settings import trust
from lantern.settings.model import Settings, setting_names

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


def server_properties() -> dict[str, dict[str, Any]]:
    """The model's JSON schema, one entry per dotted setting name."""
    schema = Settings.model_json_schema(by_alias=True)
    flat: dict[str, dict[str, Any]] = {}
    for name, prop in schema["properties"].items():
        if "$ref" in prop:
            section = schema["$defs"][prop["$ref"].rsplit("/", 1)[1]]
            flat.update({f"{name}.{k}": v for k, v in section["properties"].items()})
        else:
            flat[name] = prop
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
