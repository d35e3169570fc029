"""Shared fixtures and helpers: the fake model server, the real model client on it, the
workspace folder `ws`, tool contexts on it (`ctx`, `ctx_for`), ways to call a tool
(`run`, `call`), to lay down files (`write`), to read a result (`rows`, `numbered`),
the default settings with some changed (`settings_with`), and a question's events as a
client receives them (`SentEvents`)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.events import Event
from lantern.agent.provider.client import ModelClient
from lantern.approvals.approver import Approver, Decision, Fixed, PromptObserver
from lantern.code.cache import ParseCache
from lantern.converter import to_json
from lantern.settings.model import Settings
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.registry import run_tool
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace

from tests.fakes.openai_server import FakeOpenAI


def ctx_for(
    where: Path | Sequence[Path] | Workspace,
    approvals: Approver | None = None,
    *,
    deny: Sequence[str] = (),
    conversation: str = "c1",
    observer: PromptObserver | None = None,
    cache: ParseCache | None = None,
) -> ToolContext:
    """A tool context for conversation `conversation` on `where`: a `Workspace` as it is,
    or the workspace of these folders with `deny` as its `approval.deny` globs.
    `approvals` decides every read (by default each is allowed without asking)."""
    if isinstance(where, Workspace):
        assert not deny, "a Workspace brings its own policy"
        workspace = where
    else:
        workspace = Workspace([where] if isinstance(where, Path) else list(where), Policy(deny))
    return ToolContext(
        workspace,
        approvals or Fixed(Decision.ALLOW_ONCE),
        conversation_id=conversation,
        observer=observer,
        code_cache=cache,
    )


async def run(ctx: ToolContext, name: str, args: Mapping[str, Any] | str) -> ToolResult:
    """Call a tool the way the model does: with JSON argument text (a str is sent as is)."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return await run_tool(name, raw, ctx)


async def call(ctx: ToolContext, tool: str, **args: Any) -> ToolResult:
    """Call a tool with these arguments, already parsed."""
    return await run_tool(tool, args, ctx)


class SentEvents(list[dict[str, Any]]):
    """An event sink for `Agent.ask` that keeps each event as the JSON a `lantern/event`
    notification carries (without its envelope), so a test reads `event["kind"]`,
    `event["callId"]` as an editor does."""

    def __call__(self, event: Event) -> None:
        self.append(to_json(event))

    def __bool__(self) -> bool:
        return True  # a sink even before its first event (`Agent.ask` drops a falsy one)


def write(root: Path, rel: str, text: str = "hello\n") -> Path:
    """Write `text` to `root/rel` (UTF-8), making the folders on the way."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def rows(result: ToolResult) -> list[str]:
    """The lines a successful tool result shows, without its `[...]` notes."""
    assert not result.is_error, result.content
    return [line for line in result.content.splitlines() if not line.startswith("[")]


NUMBERED = re.compile(r"^(\d+)│(.*)$", re.MULTILINE)


def numbered(content: str) -> list[tuple[int, str]]:
    """The `N│text` lines of a read_file result."""
    return [(int(n), text) for n, text in NUMBERED.findall(content)]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 with no scripted turns yet."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def http_model(fake: FakeOpenAI) -> AsyncIterator[ModelClient]:
    """The real model client on the fake server: for the tests about what crosses the wire."""
    client = ModelClient(
        model="fake-model", base_url=fake.base_url, api_key="x", request_timeout=10, max_retries=0
    )
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace folder, `tmp_path/"ws"`, empty, next to room for things outside it.
    A module whose tests want the same files lays them down in an autouse fixture; one
    that needs a `Workspace` builds it from this folder."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    """A tool context on `ws` whose gate allows every read without asking."""
    return ctx_for(ws)


def settings_with(**fields: Any) -> Settings:
    """The default settings with `fields` (snake_case names) changed; a name that is no
    setting fails here rather than being ignored."""
    unknown = set(fields) - {item.name for item in dataclasses.fields(Settings)}
    assert not unknown, f"not settings: {sorted(unknown)}"
    return Settings().model_copy(update=fields)
