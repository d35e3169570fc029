"""What one step of the agent loop came to: values, not flags.

`Agent._step` returns one of these. The loop ends on `Answered`, does not count
a `Switched` step (the endpoint refused the request before any answer), and
decides each retry from the steps before: an empty reply is retried once until
a tool round makes progress (`retried_empty`), unreadable call markup is
corrected once per question (`corrected`). Whatever ends a question otherwise
is an exception: `ModelError`, a timeout, a cancellation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lantern.agent.protocol.seam import Name
from lantern.agent.tool_round import StopReason


@dataclass(frozen=True)
class Answered:
    """The question ends with this answer, for this reason."""

    answer: str
    stop: StopReason


@dataclass(frozen=True)
class ToolsRan:
    """A tool round ran and its results are in the history."""


@dataclass(frozen=True)
class Retried:
    """The model is asked again: its reply was empty, its call markup could not be read,
    or it was cut off while writing a call (never run)."""

    why: Literal["empty", "unreadable", "cut_call"]


@dataclass(frozen=True)
class Switched:
    """The endpoint refused the request in one protocol; it is asked again in `to`."""

    to: Name


Step = Answered | ToolsRan | Retried | Switched


def retried_empty(steps: Sequence[Step]) -> bool:
    """Whether an empty reply was retried since the last tool round."""
    for step in reversed(steps):
        if isinstance(step, ToolsRan):
            return False
        if step == Retried("empty"):
            return True
    return False


def corrected(steps: Sequence[Step]) -> bool:
    """Whether this question already had its one correction for unreadable markup."""
    return Retried("unreadable") in steps
