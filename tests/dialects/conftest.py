"""Dialect replays: real servers' byte streams, served raw by the fake, through `lantern ask`.

Each test module replays one server family as it streams on the wire (written
from that server's own source code and documentation, named in each test), and
asserts what a user notices (the answer, its references, the exit code and
message) and what the provider received back on the next request (ids, fields
it requires verbatim, message order). The fixtures are the ones the CLI suite
uses: a real workspace with `src/app.py` and `src/util.py`, a clean
environment, and `Lantern` to run `python -m lantern.cli ask --json`.
"""

from __future__ import annotations

import pytest

from tests.cli.conftest import Lantern, Project, env, lantern, project
from tests.dialects.replay import AskTwoSteps, Replay
from tests.fakes.openai_server import FakeOpenAI

__all__ = ["Lantern", "Project", "env", "lantern", "project", "two_steps"]


@pytest.fixture
def two_steps(fake: FakeOpenAI, lantern: Lantern) -> AskTwoSteps:
    """Replays a dialect's two steps through `lantern ask --json`, checking what all must pass."""
    return Replay(fake, lantern).two_steps
