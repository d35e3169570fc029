"""`lantern/navigate` end to end: the real `lantern serve`, pytest-lsp as an editor that
answers from a scripted "language server", the fake OpenAI server as the model.

`find_references Circle.area` asks the client from the position of `Circle.area`'s own
definition, and shows only the uses the client names; a hostile answer (outside the
workspace, ignored, a denied name, a link out, a FIFO, `http:` URIs, lines past the end,
thousands of entries) shows none of its files, only counts; a client that never answers
costs the bounded wait and a note; a client without the capability is never asked."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import SERVER_COMMAND, Lantern, plain, server_env

NAVIGATE = "lantern/navigate"
ALL_OPS = ["definition", "references", "implementation", "typeDefinition", "hover"]

SHAPES = """class Circle:
    def area(self):
        return 3


class Square:
    def area(self):
        return 4
"""
USES = """from shapes import Circle, Square

round_one = Circle().area()
square_one = Square().area()
"""

Reply = Callable[[dict[str, Any]], Awaitable[Any]]


class Navigating(Lantern):
    """A client that may declare `navigation` and answers `lantern/navigate` with `reply`."""

    def __init__(self, client: LanguageClient, env: dict[str, str]) -> None:
        super().__init__(client, env)
        self.asked: list[dict[str, Any]] = []
        self.reply: Reply | None = None

        @client.feature(NAVIGATE)
        async def on_navigate(params: Any) -> Any:
            request = plain(params)
            self.asked.append(request)
            assert self.reply is not None
            return await self.reply(request)

    async def start(
        self, folders: Iterable[Path], ops: list[str] | None, encoding: str | None = None
    ) -> None:
        await self.initialize(
            folders,
            experimental={"lantern": {"navigation": ops}} if ops is not None else None,
            position_encodings=None if encoding is None else [encoding],
            work_done_progress=False,
        )


StartClient = Callable[..., Awaitable[Navigating]]


@pytest.fixture
async def start_client(home: Path, fake: FakeOpenAI) -> AsyncIterator[StartClient]:
    started: list[Navigating] = []

    async def start(
        folders: Iterable[Path], ops: list[str] | None = ALL_OPS, encoding: str | None = None
    ) -> Navigating:
        env = server_env(home, fake.base_url)
        client = await ClientServerConfig(server_command=SERVER_COMMAND, server_env=env).start()
        assert isinstance(client, LanguageClient)
        editor = Navigating(client, env)
        started.append(editor)
        await editor.start(folders, ops, encoding)
        return editor

    yield start
    for editor in started:
        await editor.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "shapes.py").write_text(SHAPES, "utf-8")
    (root / "src" / "uses.py").write_text(USES, "utf-8")
    return root


def location(path: Path | str, line: int) -> dict[str, Any]:
    uri = path if isinstance(path, str) else path.as_uri()
    span = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 4}}
    return {"uri": uri, "range": span}


def references_call(name: str) -> dict[str, Any]:
    return {"id": "r1", "name": "find_references", "arguments": {"name": name}}


def tool_result(fake: FakeOpenAI) -> str:
    """The tool result the model got (the second request's last message)."""
    requests = fake.chat_requests()
    assert len(requests) == 2
    message = requests[1]["messages"][-1]
    return str(message["content"])


async def test_a_member_means_that_member_only(
    start_client: StartClient, fake: FakeOpenAI, project: Path
) -> None:
    shapes, uses = project / "src" / "shapes.py", project / "src" / "uses.py"

    async def reply(request: dict[str, Any]) -> Any:
        # Circle.area's name: line 2 (0-based 1), column 8; the client answers for it.
        if request["position"] == {"line": 1, "character": 8} and request["uri"] == (
            shapes.as_uri()
        ):
            return {"source": "FakeLS", "locations": [location(shapes, 1), location(uses, 2)]}
        return None

    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project])
    ls.reply = reply
    await ls.ask("Who calls Circle.area?")
    assert [r["op"] for r in ls.asked] == ["references"]
    shown = tool_result(fake)
    assert shown.splitlines()[1] == "[language server: FakeLS]"
    assert "src/shapes.py:2:     def area(self): [definition]" in shown
    assert "src/uses.py:3: round_one = Circle().area()" in shown
    assert "Square" not in shown and "src/shapes.py:7" not in shown


async def test_without_the_capability_no_request_is_sent(
    start_client: StartClient, fake: FakeOpenAI, project: Path
) -> None:
    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project], ops=None)

    async def reply(request: dict[str, Any]) -> Any:
        return {"source": "FakeLS", "locations": []}

    ls.reply = reply
    await ls.ask("Who calls Circle.area?")
    assert ls.asked == []
    shown = tool_result(fake)
    assert "language server" not in shown and "syntax only" not in shown
    # the syntax-only answer as today: every `area`, both classes'
    assert "src/uses.py:4: square_one = Square().area()" in shown


async def test_a_client_that_offers_other_ops_is_not_asked_for_references(
    start_client: StartClient, fake: FakeOpenAI, project: Path
) -> None:
    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project], ops=["hover"])
    await ls.ask("Who calls Circle.area?")
    assert ls.asked == []
    assert "syntax only" not in tool_result(fake)


async def test_a_client_that_never_answers_falls_back_and_says_so(
    start_client: StartClient, fake: FakeOpenAI, project: Path
) -> None:
    release = asyncio.Event()

    async def reply(request: dict[str, Any]) -> Any:
        await release.wait()
        return {"source": "Late", "locations": []}

    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project])
    ls.reply = reply
    try:
        await ls.ask("Who calls Circle.area?")
    finally:
        release.set()
    shown = tool_result(fake)
    assert shown.splitlines()[1] == "[syntax only: the language server did not answer in 5 s]"
    assert "src/uses.py:4: square_one = Square().area()" in shown  # tree-sitter's answer


async def test_an_empty_answer_falls_back_and_says_so(
    start_client: StartClient, fake: FakeOpenAI, project: Path
) -> None:
    async def reply(request: dict[str, Any]) -> Any:
        return None

    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project])
    ls.reply = reply
    await ls.ask("Who calls Circle.area?")
    shown = tool_result(fake)
    assert shown.splitlines()[1] == "[syntax only: no language server answered]"


async def test_a_hostile_answer_shows_none_of_its_files(
    start_client: StartClient, fake: FakeOpenAI, project: Path, tmp_path: Path
) -> None:
    uses = project / "src" / "uses.py"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("CANARY_OUTSIDE = Circle().area()\n", "utf-8")
    (outside / "linked.py").write_text("CANARY_LINK = Circle().area()\n", "utf-8")
    (project / ".gitignore").write_text("dist/\n", "utf-8")
    (project / "dist").mkdir()
    (project / "dist" / "bundle.py").write_text("CANARY_DIST = Circle().area()\n", "utf-8")
    (project / ".env").write_text("CANARY_ENV = Circle().area()\n", "utf-8")
    (project / "src" / "link.py").symlink_to(outside / "linked.py")
    os.mkfifo(project / "src" / "pipe.py")
    hostile = [
        location(outside / "secret.py", 0),
        location(project / "dist" / "bundle.py", 0),
        location(project / ".env", 0),
        location(project / "src" / "link.py", 0),
        location(project / "src" / "pipe.py", 0),
        location("http://127.0.0.1/CANARY_HTTP.py", 0),
        location("file:///../CANARY_DOTS.py", 0),
        location(uses, 9999),  # past the end of the file
        {"uri": uses.as_uri(), "range": {"start": {"line": -1}}},  # malformed
        "CANARY_NOT_AN_OBJECT",
        location(uses, 2),  # the one good location
    ]
    flood = [location(uses, 3)] * 3000  # more than the server looks at

    async def reply(request: dict[str, Any]) -> Any:
        return {"source": "Hostile", "locations": hostile + flood}

    fake.add_turns([{"tool_calls": [references_call("Circle.area")]}, {"content": "Done."}])
    ls = await start_client([project])
    ls.reply = reply
    await ls.ask("Who calls Circle.area?")
    everything = json.dumps(fake.chat_requests())
    assert "CANARY" not in everything
    shown = tool_result(fake)
    assert shown.splitlines()[1] == "[language server: Hostile]"
    assert "src/uses.py:3: round_one = Circle().area()" in shown
    assert "src/uses.py:4: square_one = Square().area()" in shown  # from the flood's first
    for note in [
        "[1 more location(s) not in file: URIs, not shown]",
        "[2 more location(s) outside the workspace, not shown]",
        "[1 more location(s) in ignored files, not shown]",
        "[1 more location(s) in files the name policy refuses, not shown]",
        "[1 more location(s) behind symbolic links, not shown]",
        "[1 more location(s) in things that are not regular files, not shown]",
        "[1 more location(s) past the end of their file, not shown]",
        "[2 more location(s) malformed, not shown]",
        "[1,011 more location(s) beyond what one answer may hold, not shown]",
    ]:
        assert note in shown, shown


@pytest.mark.parametrize(("encoding", "character"), [("utf-8", 25), ("utf-16", 23), ("utf-32", 22)])
async def test_the_position_is_counted_in_the_negotiated_encoding(
    start_client: StartClient, fake: FakeOpenAI, project: Path, encoding: str, character: int
) -> None:
    wide = "const \U0001d4b3 = 1; function spread() {}\n"  # an astral name before it
    (project / "src" / "wide.js").write_text(wide, "utf-8")

    async def reply(request: dict[str, Any]) -> Any:
        return None

    call = {"id": "r1", "name": "find_references", "arguments": {"name": "spread"}}
    fake.add_turns([{"tool_calls": [call]}, {"content": "Done."}])
    ls = await start_client([project], encoding=encoding)
    ls.reply = reply
    await ls.ask("Who calls spread?")
    [asked] = ls.asked
    assert asked["position"] == {"line": 0, "character": character}
