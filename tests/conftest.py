"""Shared fixtures: the fake model server, the real model client on it, a tool context on a
temporary workspace, and `run`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.provider.client import ModelClient
from lantern.approvals.approver import Decision, Fixed
from lantern.settings.model import Settings
from lantern.tools.base import ToolContext, ToolResult
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace

from tests.fakes.openai_server import FakeOpenAI


async def run(ctx: ToolContext, name: str, args: Mapping[str, Any] | str) -> ToolResult:
    """Call a tool the way the model does: with JSON argument text (a str is sent as is)."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return await run_tool(name, raw, ctx)


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
def workspace_dir(tmp_path: Path) -> Path:
    """An empty workspace folder, `tmp_path/"ws"`, next to room for things outside it."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def ctx(workspace_dir: Path) -> ToolContext:
    """A tool context on `workspace_dir` whose gate allows every read without asking."""
    return ToolContext(Workspace([workspace_dir]), Fixed(Decision.ALLOW_ONCE))


def settings_with(**fields: Any) -> Settings:
    """The default settings with `fields` (snake_case names) changed; a name that is no
    setting fails here rather than being ignored."""
    unknown = set(fields) - set(Settings.model_fields)
    assert not unknown, f"not settings: {sorted(unknown)}"
    return Settings().model_copy(update=fields)
