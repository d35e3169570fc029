"""`find_symbol` over `lantern/navigate` end to end: the real `lantern serve`, pytest-lsp as
an editor answering from a scripted "language server", the fake OpenAI server as the
model (the clients and helpers of `test_navigation.py`).

A name tree-sitter finds no definition of (used in Python, defined in Ruby) is answered
by the client's `definition`, asked from the name's use, or by its `workspaceSymbols`;
a definition tree-sitter finds gets a type line from the client's hover, redacted. A
hostile answer (outside the workspace, ignored, a denied name, a link out, `http:` URIs,
lines past the end, thousands of symbols, a hover of megabytes) shows none of its files
and only bounded text; every refused file holds a canary that must never reach the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.test_navigation import (  # the fixtures too: pytest finds them here
    StartClient,
    location,
    project,  # noqa: F401
    start_client,  # noqa: F401
    tool_result,
)

USES = "from widgets import Widget\n\nmade = Widget()\n"
WIDGET_RB = "class Widget\n  def draw; end\nend\n"
TOKEN = "ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5"  # a GitHub token's shape: redacted


def symbol_call(name: str) -> dict[str, Any]:
    return {"id": "s1", "name": "find_symbol", "arguments": {"name": name}}


@pytest.fixture
def imported(project: Path) -> Path:  # noqa: F811
    """`Widget` is used in Python and defined in Ruby, which tree-sitter does not parse."""
    (project / "src" / "app.py").write_text(USES, "utf-8")
    (project / "lib").mkdir()
    (project / "lib" / "widgets.rb").write_text(WIDGET_RB, "utf-8")
    return project


async def test_a_name_defined_where_tree_sitter_cannot_see_is_answered_by_definition(
    start_client: StartClient,  # noqa: F811
    fake: FakeOpenAI,
    imported: Path,
) -> None:
    app, rb = imported / "src" / "app.py", imported / "lib" / "widgets.rb"

    async def reply(request: dict[str, Any]) -> Any:
        # the import's `Widget`: line 1 (0-based 0), column 20
        if request["uri"] == app.as_uri() and request["position"] == {"line": 0, "character": 20}:
            return {"source": "Ruby LSP", "locations": [location(rb, 0)]}
        return None

    fake.add_turns([{"tool_calls": [symbol_call("Widget")]}, {"content": "Done."}])
    ls = await start_client([imported], ops=["definition"])
    ls.reply = reply
    await ls.ask("Where is Widget defined?")
    assert [r["op"] for r in ls.asked] == ["definition"]
    assert tool_result(fake).splitlines() == [
        "[untrusted definitions of 'Widget' under .]",
        "[language server: Ruby LSP]",
        "lib/widgets.rb:1 definition Widget  class Widget",
    ]


async def test_workspace_symbols_answer_with_their_kind_and_class(
    start_client: StartClient,  # noqa: F811
    fake: FakeOpenAI,
    imported: Path,
) -> None:
    rb = imported / "lib" / "widgets.rb"

    async def reply(request: dict[str, Any]) -> Any:
        symbols = [
            {
                "name": "draw",
                "kind": "method",
                "containerName": "Widget",
                "location": location(rb, 1),
            },
            {
                "name": "draw",
                "kind": "method",
                "containerName": "Gadget",
                "location": location(rb, 0),
            },
        ]
        return {"source": "Ruby LSP", "symbols": symbols}

    fake.add_turns([{"tool_calls": [symbol_call("Widget.draw")]}, {"content": "Done."}])
    ls = await start_client([imported], ops=["workspaceSymbols"])
    ls.reply = reply
    await ls.ask("Where is Widget.draw defined?")
    assert ls.asked == [{"op": "workspaceSymbols", "query": "draw"}]
    assert tool_result(fake).splitlines() == [
        "[untrusted definitions of 'Widget.draw' under .]",
        "[language server: Ruby LSP]",
        "lib/widgets.rb:2 method Widget.draw    def draw; end",
    ]


async def test_a_hover_gives_the_definition_a_type_line_with_its_secret_redacted(
    start_client: StartClient,  # noqa: F811
    fake: FakeOpenAI,
    project: Path,  # noqa: F811
) -> None:
    shapes = project / "src" / "shapes.py"

    async def reply(request: dict[str, Any]) -> Any:
        if request["uri"] == shapes.as_uri() and request["position"] == {"line": 1, "character": 8}:
            hover = f'```python\n(method) def area(self) -> int  # key "{TOKEN}"\n```\n---\nDocs.'
            return {"source": "Pylance", "hover": hover}
        return None

    fake.add_turns([{"tool_calls": [symbol_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project])
    ls.reply = reply
    await ls.ask("What does Circle.area return?")
    assert [r["op"] for r in ls.asked] == ["hover"]
    assert "CANARY" not in json.dumps(fake.chat_requests())
    assert tool_result(fake).splitlines() == [
        "[untrusted definitions of 'Circle.area' under .]",
        "[language server: Pylance]",
        "src/shapes.py:2-3 method Circle.area  def area(self):",
        '  type: (method) def area(self) -> int # key "[REDACTED:github_token]"',
        "[redacted 1 secret(s)]",
    ]


@pytest.mark.parametrize(
    ("hover", "shown"),
    [
        # 2 MB of lines: the first one is shown, cut
        ("(x) " + "t" * 1000 + "\n" + ("r" * 999 + "\n") * 2000, "  type: (x) ttt"),
        ("u" * 2_000_000, None),  # one line beyond the bound: no hover at all
    ],
)
async def test_a_hover_of_megabytes_is_bounded(
    start_client: StartClient,  # noqa: F811
    fake: FakeOpenAI,
    project: Path,  # noqa: F811
    hover: str,
    shown: str | None,
) -> None:
    async def reply(request: dict[str, Any]) -> Any:
        return {"source": "Big", "hover": hover}

    fake.add_turns([{"tool_calls": [symbol_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project], ops=["hover"])
    ls.reply = reply
    await ls.ask("What does Circle.area return?")
    result = tool_result(fake)
    assert len(result) < 1000
    lines = result.splitlines()
    if shown is None:
        assert lines[1] == "[syntax only: no language server answered]"
        assert not any(line.startswith("  type:") for line in lines)
    else:
        assert lines[1] == "[language server: Big]"
        [typed] = [line for line in lines if line.startswith("  type:")]
        assert typed.startswith(shown) and typed.endswith("…(1,004 chars)") and len(typed) < 340


async def test_a_hostile_symbol_list_shows_none_of_its_files(
    start_client: StartClient,  # noqa: F811
    fake: FakeOpenAI,
    imported: Path,
    tmp_path: Path,
) -> None:
    rb = imported / "lib" / "widgets.rb"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.rb").write_text("CANARY_OUTSIDE = Widget\n", "utf-8")
    (outside / "linked.rb").write_text("CANARY_LINK = Widget\n", "utf-8")
    (imported / ".gitignore").write_text("dist/\n", "utf-8")
    (imported / "dist").mkdir()
    (imported / "dist" / "bundle.rb").write_text("CANARY_DIST = Widget\n", "utf-8")
    (imported / ".env").write_text("CANARY_ENV = Widget\n", "utf-8")
    (imported / "lib" / "link.rb").symlink_to(outside / "linked.rb")

    def widget(where: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"name": "Widget", "kind": "class", "location": where, **more}

    hostile = [
        widget(location(outside / "secret.rb", 0)),
        widget(location(imported / "dist" / "bundle.rb", 0)),
        widget(location(imported / ".env", 0)),
        widget(location(imported / "lib" / "link.rb", 0)),
        widget(location("http://127.0.0.1/CANARY_HTTP.rb", 0)),
        widget(location(rb, 9999)),  # past the end of the file
        widget(location(rb, 0), kind=7),  # malformed: a kind that is no string
        {"name": "Widget", "location": "CANARY_NOT_A_LOCATION"},  # malformed
        {"name": "CANARY_OTHER", "kind": "class", "location": location(rb, 1)},  # another name
        widget(location(rb, 0), containerName="Lib"),  # the one good symbol
    ]
    flood = [widget(location(rb, 2))] * 3000  # more than the server looks at

    async def reply(request: dict[str, Any]) -> Any:
        return {"source": "Hostile", "symbols": hostile + flood}

    fake.add_turns([{"tool_calls": [symbol_call("Widget")]}, {"content": "Done."}])
    ls = await start_client([imported], ops=["workspaceSymbols"])
    ls.reply = reply
    await ls.ask("Where is Widget defined?")
    assert "CANARY" not in json.dumps(fake.chat_requests())
    shown = tool_result(fake)
    assert shown.splitlines()[:4] == [
        "[untrusted definitions of 'Widget' under .]",
        "[language server: Hostile]",
        "lib/widgets.rb:1 class Lib.Widget  class Widget",
        "lib/widgets.rb:3 class Widget  end",  # from the flood's first
    ]
    for note in [
        "[1 more location(s) not in file: URIs, not shown]",
        "[1 more location(s) outside the workspace, not shown]",
        "[1 more location(s) in ignored files, not shown]",
        "[1 more location(s) in files the name policy refuses, not shown]",
        "[1 more location(s) behind symbolic links, not shown]",
        "[1 more location(s) past the end of their file, not shown]",
        "[2 more location(s) malformed, not shown]",
        "[1,010 more location(s) beyond what one answer may hold, not shown]",
    ]:
        assert note in shown, shown
