"""Server-sent events read from a model endpoint's raw response bytes.

The SSE format: lines end with CRLF, LF or CR; a line is `field: value` (one space
after the colon is dropped) or a `:` comment; the `data` lines of an event are joined
with newlines, and a blank line ends the event. An event the stream ends before its
blank line is dropped. Each event's data is one JSON value (a chunk), read as it comes.

What real endpoints add to it:
- `data: [DONE]` ends the reply; `done` records that it was read, so a reply without a
  `finish_reason` can still be known complete.
- An error object inside a 200 stream (`data: {"error": …}`) raises `StreamedError`
  with the provider's object, as do llama.cpp's `error: {...}` line (a field SSE
  readers ignore) and a named `event: error` with the error bare in its `data:`.
- An event without data (`event: ping`, a lone `id:`) carries no chunk and is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from lantern import model_json

_LINE_END = re.compile(rb"\r\n|\r|\n")


class StreamedError(Exception):
    """An error object the server sent inside the stream."""

    def __init__(self, body: Any) -> None:
        super().__init__("the server reported an error in the stream")
        self.body = body


class EventStream:
    """The JSON data of each event in `raw`, until `data: [DONE]` or the end."""

    def __init__(self, raw: AsyncIterator[bytes]) -> None:
        self._raw = raw
        self.done = False  # `data: [DONE]` was read: the server says the reply is complete

    async def __aiter__(self) -> AsyncIterator[Any]:
        data: list[str] = []
        error = False  # this event is an error (`event: error`, an `error:` line)
        async for line in _lines(self._raw):
            if not line:
                text = "\n".join(data)
                if text.startswith("[DONE]"):
                    return
                if error:
                    raise _error_event(text)
                if text:  # an event without data (`event: ping`) carries no chunk
                    chunk = model_json.loads(text)
                    if isinstance(chunk, dict) and chunk.get("error"):
                        raise StreamedError(chunk["error"])
                    yield chunk
                data, error = [], False
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                self.done = self.done or value.strip() == "[DONE]"
                data.append(value)
            elif field == "event":
                error = value.strip() == "error"
            elif field == "error":
                error = True
                data.append(value)


def _error_event(text: str) -> StreamedError:
    """An error event's data: the error object, bare or under `error`, or its text."""
    try:
        error: Any = json.loads(text)
    except ValueError:
        error = text.strip()
    error = error.get("error", error) if isinstance(error, dict) else error
    return StreamedError(error or "the server reported an error")


async def _lines(raw: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The lines of `raw`, split at CRLF, LF or CR wherever the chunks were cut."""
    pending = bytearray()  # the start of a line whose end has not come yet
    after_cr = False  # the last chunk ended with CR: a LF opening the next one ends no line
    async for chunk in raw:
        start = 1 if after_cr and chunk.startswith(b"\n") else 0
        after_cr = chunk.endswith(b"\r") or (after_cr and not chunk)
        for end in _LINE_END.finditer(chunk, start):
            pending += chunk[start : end.start()]
            yield pending.decode("utf-8")
            pending.clear()
            start = end.end()
        pending += chunk[start:]
    if pending:
        yield pending.decode("utf-8")
