"""Events as a client receives them: each one written by the one converter, as JSON values.

Pass a `SentEvents` where `Agent.ask` takes its event sink; it keeps what a
`lantern/event` notification would carry (without the envelope), so a test reads
`event["kind"]`, `event["callId"]` as an editor does.
"""

from __future__ import annotations

from typing import Any

from lantern.agent.events import Event
from lantern.converter import to_json


class SentEvents(list[dict[str, Any]]):
    def __call__(self, event: Event) -> None:
        self.append(to_json(event))

    def __bool__(self) -> bool:
        return True  # a sink even before its first event (`Agent.ask` drops a falsy one)
