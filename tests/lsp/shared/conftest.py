"""The modules here share one server (`shared_server`, on `module_workspace`, with
`module_fake` as the model; see tests/lsp/conftest.py): `fake` and `ls` are reset for
each test, and `workspace` is the module's workspace, also for a test that starts a
server of its own with `start_server`."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import Lantern


@pytest.fixture
def fake(module_fake: FakeOpenAI) -> FakeOpenAI:
    module_fake.reset()
    return module_fake


@pytest.fixture
def workspace(module_workspace: Path) -> Path:
    return module_workspace


@pytest_asyncio.fixture(loop_scope="module")
async def ls(shared_server: Lantern, fake: FakeOpenAI) -> Lantern:
    """The module's server with default settings, cleared of what earlier tests saw."""
    shared_server.clear()
    return shared_server
