"""`lantern/suggestMentions`: what `@` in a question box offers, over a real workspace.

The real server in a subprocess, pytest-lsp as the editor (docs/protocol.md). Ignored
paths are never offered; a name the read path refuses is offered with why; a file
outside the workspace (a link out, a symbol's file) never shows; nothing is read; and
a hostile client's request is answered within bounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import Lantern

pytestmark = pytest.mark.asyncio(loop_scope="module")

SUGGEST = "lantern/suggestMentions"
ENV_CANARY = "zq81-Xy7"  # the module workspace's .env secret
OUTSIDE_CANARY = "OUTSIDE-SUGGEST-CANARY"
LONG_NAME = "a" * 200 + ".txt"
SENSITIVE = (
    ".env is a sensitive location (secrets, keys or version-control data); Lantern never reads it"
)


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outside")
    (folder / "app_secret.py").write_text(f"{OUTSIDE_CANARY}\n", "utf-8")
    (folder / "inner_secret.py").write_text(f"{OUTSIDE_CANARY}\n", "utf-8")
    return folder


@pytest.fixture
def ws(workspace: Path, outside: Path) -> Path:
    """The module workspace with an ignored folder, links out and many matching files."""
    if not (workspace / "build").exists():
        (workspace / ".gitignore").write_text("build/\n", "utf-8")
        (workspace / "build").mkdir()
        (workspace / "build" / "app_built.py").write_text("IGNORED\n", "utf-8")
        (workspace / "app_link.py").symlink_to(outside / "app_secret.py")
        (workspace / "linked_dir").symlink_to(outside)
        (workspace / "many").mkdir()
        for n in range(60):
            (workspace / "many" / f"match_{n:02}.txt").write_text("x\n", "utf-8")
        (workspace / LONG_NAME).write_text("long\n", "utf-8")
    return workspace


def _range(line: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}}


def _symbol(name: str, uri: str, line: int = 2, **extra: Any) -> dict[str, Any]:
    return {"name": name, "uri": uri, "range": _range(line), **extra}


async def _suggest(ls: Lantern, query: str, symbols: list[Any] | None = None) -> list[Any]:
    params: dict[str, Any] = {"query": query}
    if symbols is not None:
        params["symbols"] = symbols
    result = await ls.request(SUGGEST, params)
    assert isinstance(result, dict) and set(result) == {"items"}
    items = result["items"]
    assert isinstance(items, list)
    return items


def _by_label(items: list[Any]) -> dict[str, Any]:
    return {item["label"]: item for item in items}


async def test_files_and_folders_match_and_ignored_paths_are_never_offered(
    ls: Lantern, ws: Path
) -> None:
    items = _by_label(await _suggest(ls, "app"))
    app = items["src/app.py"]
    assert app == {"kind": "file", "label": "src/app.py", "uri": (ws / "src" / "app.py").as_uri()}
    assert not any("build" in label for label in items)  # build/ is git-ignored
    assert await _suggest(ls, "build") == []
    folders = _by_label(await _suggest(ls, "SR"))  # case-insensitive
    assert folders["src/"] == {"kind": "folder", "label": "src/", "uri": (ws / "src").as_uri()}


async def test_an_empty_query_offers_the_top_of_the_workspace(ls: Lantern, ws: Path) -> None:
    items = _by_label(await _suggest(ls, ""))
    assert {"src/", "README.md", "many/", ".gitignore"} <= set(items)
    assert not any(label.count("/") > (1 if label.endswith("/") else 0) for label in items)
    assert "build/" not in items and "many/match_00.txt" not in items
    assert items[".env"]["refused"] == SENSITIVE


async def test_a_refused_name_is_offered_with_why_and_nothing_is_read(
    ls: Lantern, fake: FakeOpenAI, ws: Path
) -> None:
    items = await _suggest(ls, ".env")
    env = _by_label(items)[".env"]
    assert env == {
        "kind": "file",
        "label": ".env",
        "uri": (ws / ".env").as_uri(),
        "refused": SENSITIVE,
    }
    assert ENV_CANARY not in json.dumps(items)
    assert fake.chat_requests() == []  # no model was asked anything


async def test_links_out_are_refused_and_never_followed(ls: Lantern, ws: Path) -> None:
    link = _by_label(await _suggest(ls, "app_link"))["app_link.py"]
    assert link["refused"] == (
        "app_link.py is or goes through a symbolic link; Lantern does not follow links"
    )
    assert await _suggest(ls, "inner_secret") == []  # linked_dir is never walked into
    linked = _by_label(await _suggest(ls, "linked"))
    assert "linked_dir/" not in linked
    assert linked["linked_dir"]["refused"].endswith("Lantern does not follow links")


async def test_at_most_fifty_files_and_folders(ls: Lantern, ws: Path) -> None:
    items = await _suggest(ls, "match_")
    assert len(items) == 50
    assert {item["label"] for item in items} <= {f"many/match_{n:02}.txt" for n in range(60)}


async def test_symbols_are_checked_against_the_read_path(
    ls: Lantern, ws: Path, outside: Path
) -> None:
    app = (ws / "src" / "app.py").as_uri()
    symbols = [
        _symbol("run", app, containerName="Greeter", kind="Method"),
        _symbol("outside", (outside / "app_secret.py").as_uri()),
        _symbol("built", (ws / "build" / "app_built.py").as_uri()),
        _symbol("secret", (ws / ".env").as_uri()),
        _symbol("linked", (ws / "app_link.py").as_uri()),
        _symbol("through", (ws / "linked_dir" / "inner_secret.py").as_uri()),
        _symbol("folder", (ws / "src").as_uri()),
    ]
    items = [i for i in await _suggest(ls, "zzzz-no-path", symbols) if i["kind"] == "symbol"]
    by_label = _by_label(items)
    assert by_label["Greeter.run"] == {
        "kind": "symbol",
        "label": "Greeter.run",
        "detail": "src/app.py:3",
        "uri": app,
        "range": _range(2),
    }
    assert "outside" not in by_label  # outside the workspace: dropped
    assert by_label["built"]["refused"] == "build/app_built.py is excluded by .gitignore"
    assert by_label["secret"]["refused"] == SENSITIVE
    assert "symbolic link" in by_label["linked"]["refused"]
    assert "symbolic link" in by_label["through"]["refused"]
    assert "is a folder" in by_label["folder"]["refused"]
    assert str(outside) not in json.dumps(items) and OUTSIDE_CANARY not in json.dumps(items)


async def test_a_hostile_client_gets_a_bounded_answer(ls: Lantern, ws: Path) -> None:
    """A megabyte query (only its first 200 characters are matched), 10^5 symbols (only
    the first 200 are looked at), URIs that name no local file (dropped)."""
    items = _by_label(await _suggest(ls, "a" * 1_000_000))
    assert LONG_NAME in items
    app = (ws / "src" / "app.py").as_uri()
    bad = ["untitled:Untitled-1", "http://127.0.0.1/x.py", "file://[::1/x", "file:src/app.py", ""]
    symbols = [_symbol(f"bad{n}", uri) for n, uri in enumerate(bad)]
    symbols += [_symbol(f"s{n}", app) for n in range(100_000)]
    answered = await _suggest(ls, "zzzz-no-path", symbols)
    assert [item["label"] for item in answered] == [f"s{n}" for n in range(200 - len(bad))]


async def test_a_symbol_of_the_wrong_shape_is_invalid_params(ls: Lantern) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await _suggest(ls, "x", [{"name": "n", "uri": "file:///x"}])
    assert caught.value.code == -32602
    assert "symbols[0].range is required" in str(caught.value)
    with pytest.raises(JsonRpcException) as caught:
        await ls.request(SUGGEST, {"query": 5})
    assert caught.value.code == -32602 and "query must be a string" in str(caught.value)
