"""What a question reports while it runs: `status`, `tool`, `answerDelta`, `reasoning` and
`usage` events (docs/protocol.md#events), sent to one sink that the CLI and the language
server each render."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Event = dict[str, Any]
EventSink = Callable[[Event], None]
