"""Files the user points at with a question (`lantern ask --file PATH[:START-END]`).

Naming a file with the question is the user's own choice, so Lantern reads it
without asking again — still through the read path (jail, name policy, ignore
rules, redaction, caps), as one `read_file` call of Lantern's own per mention,
budgeted, reported and audited like the model's, with the decision `mention`.
Only that read is covered: the model's own calls ask as always.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lantern.agent.protocol.seam import CallResult
from lantern.agent.reply import ToolCall
from lantern.approvals.approver import (
    ApprovalRequest,
    Approver,
    Decision,
    Outcome,
    PromptObserver,
)
from lantern.errors import ToolError
from lantern.workspace.roots import Workspace

_LINES = re.compile(r"^(?P<path>.+?):(?P<start>[1-9]\d{0,8})(?:-(?P<end>[1-9]\d{0,8}))?$")
_MAX_LINES = 400  # what one read_file call shows at most


class MentionError(ValueError):
    """A mention that cannot be read: not in a workspace folder, or a bad line range."""


@dataclass(frozen=True)
class Mention:
    """A file the user named, as the model would name it, and the lines they chose."""

    path: str
    start: int | None = None
    end: int | None = None

    def arguments(self) -> dict[str, object]:
        """The `read_file` arguments that show it."""
        if self.start is None:
            return {"path": self.path}
        end = self.end if self.end is not None else self.start
        return {
            "path": self.path,
            "offset": self.start,
            "limit": min(end - self.start + 1, _MAX_LINES),
        }


def parse(raw: str, workspace: Workspace, cwd: str) -> Mention:
    """`PATH` or `PATH:START[-END]`: PATH absolute, or relative to `cwd` when that lies in a
    workspace folder, else as the model names it (relative to the workspace). Checked by
    name only here: the read itself is the read path's."""
    found = _LINES.match(raw)
    path, start, stop = raw, None, None
    if found:
        path, start = found["path"], int(found["start"])
        stop = int(found["end"]) if found["end"] else None
    if start is not None and stop is not None and stop < start:
        raise MentionError(f"{raw}: the line range ends before it starts")
    absolute = os.path.normpath(os.path.join(os.path.realpath(cwd), path))
    for root in workspace.roots:
        inside = os.path.relpath(absolute, root.path)
        if inside.split(os.sep)[0] not in (os.curdir, os.pardir):
            return Mention(workspace.relative(root, inside.split(os.sep)), start, stop)
    if os.path.isabs(path) or any(_within(cwd, root.path) for root in workspace.roots):
        raise MentionError(f"{raw}: not in the workspace")
    try:  # asked from outside the workspace: the path as the model names it
        [target] = workspace.targets(path, file=True)
    except (ToolError, ValueError):
        raise MentionError(f"{raw}: not in the workspace") from None
    return Mention(target.rel, start, stop)


def _within(folder: str, root: str) -> bool:
    inside = os.path.relpath(os.path.realpath(folder), root)
    return inside.split(os.sep)[0] != os.pardir


class Mentioned:
    """The approver for the reads of what the user mentioned: exactly those reads are the
    user's own choice (`by="mention"`); everything else goes to `inner`."""

    def __init__(self, inner: Approver, mentions: Sequence[Mention]) -> None:
        self.inner = inner
        self._paths = {m.path for m in mentions}

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        if request.tool == "read_file" and not request.folder and request.path in self._paths:
            return Outcome(Decision.ALLOW_ONCE, "mention")
        return await self.inner.decide(request, observer=observer)


def mention_calls(mentions: Sequence[Mention], first: int) -> list[ToolCall]:
    """One `read_file` call of Lantern's own per mention (ids `mention_<first>_<n>`)."""
    return [
        ToolCall(f"mention_{first}_{n}", "read_file", json.dumps(m.arguments()))
        for n, m in enumerate(mentions, 1)
    ]


def with_reads(mentions: Sequence[Mention], done: Sequence[CallResult], question: str) -> str:
    """The question after each mentioned file's read: its text, or why it was not read."""
    shown = []
    for mention, result in zip(mentions, done, strict=True):
        how = ":" if result.code is None else ", which did not succeed:"
        shown.append(
            f"The user named {mention.path} with the question; Lantern read it with "
            f"read_file (call {result.call.id}){how}\n{result.content}"
        )
    return "\n\n".join([*shown, question])
