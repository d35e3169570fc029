"""How a typed value goes on the wire: camelCase names, and what a field's metadata says.

Every value Lantern sends (a `lantern/ask` result, a tool call, an event, a grant…)
is a dataclass, and `lantern.converter` writes each one the same way: its fields
in the order declared, each under its name in camelCase (`tool_calls` →
`toolCalls`). A field's `metadata` changes that for this field only:

- `OPTIONAL`: left out while it holds its default (`code` only when set,
  `waitMs` only when > 0); `name?:` in `vscode-extension/src/protocol.ts`.
  Every other field is always sent, `null` included.
- `UNSENT`: never sent; what the process keeps for itself (a grant's owner, the
  units a reference can be counted in).
- `INLINE`: the value's own fields are sent beside this value's (an event's
  fields beside its `conversationId` and `requestId`).
- `wire(sent_as=f)`: `f(value)` is sent instead of the value (a name escaped
  onto one line, milliseconds to a tenth); combines with `optional`.

Only the standard library here, so a module that declares a shape loads nothing
more; the writer is `lantern.converter`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

KEY = "lantern.wire"


@dataclass(frozen=True)
class Wire:
    """What a field's metadata says about it on the wire (see the module's docstring)."""

    optional: bool = False
    sent: bool = True
    inline: bool = False
    sent_as: Callable[[Any], Any] | None = None


PLAIN = Wire()


def wire(
    *,
    optional: bool = False,
    sent: bool = True,
    inline: bool = False,
    sent_as: Callable[[Any], Any] | None = None,
) -> Mapping[str, Wire]:
    """A field's metadata: `field(default=None, metadata=wire(optional=True, sent_as=f))`."""
    return MappingProxyType({KEY: Wire(optional, sent, inline, sent_as)})


OPTIONAL = wire(optional=True)
UNSENT = wire(sent=False)
INLINE = wire(inline=True)


def camel(name: str) -> str:
    """The one naming rule: `tool_calls` → `toolCalls`, `start_line` → `startLine`."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def tenths(value: float) -> float:
    """Milliseconds as sent: to a tenth."""
    return round(value, 1)
