"""Files the user names with a question: `lantern ask --file PATH[:START-END]`, and an
editor's `mentions` (`@file` in its question box).

Naming a file with the question is the user's own choice, so Lantern reads it
without asking again — still through the read path (jail, name policy, ignore
rules, redaction, caps), as one `read_file` call of Lantern's own per file,
budgeted, reported and audited like the model's, with the decision `mention`.
Only that read is covered: the model's own calls ask as always. A name outside
every workspace folder is not read, and its path is not shown to the model.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence

from lantern.agent.inputs import Lines, Mention
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
    """A `--file` that cannot be read: not in a workspace folder, or a bad line range."""


def parse(raw: str, workspace: Workspace, cwd: str) -> Mention:
    """`PATH` or `PATH:START[-END]` as the command line gives it: PATH absolute, or relative
    to `cwd` when that lies in a workspace folder, else as the model names it (relative
    to the workspace). Checked by name only here: the read itself is the read path's."""
    found = _LINES.match(raw)
    path, lines = raw, None
    if found:
        start = int(found["start"])
        end = int(found["end"]) if found["end"] else start
        if end < start:
            raise MentionError(f"{raw}: the line range ends before it starts")
        path, lines = found["path"], Lines(start, end)
    if os.path.isabs(path) or any(_within(cwd, root.path) for root in workspace.roots):
        mention = Mention(os.path.normpath(os.path.join(os.path.realpath(cwd), path)), lines)
    else:
        mention = Mention(path, lines)
    if resolve(workspace, mention) is None:
        raise MentionError(f"{raw}: not in the workspace")
    return mention


def resolve(workspace: Workspace, mention: Mention) -> str | None:
    """The path the model uses for `mention`, or None when it is in no workspace folder."""
    if not os.path.isabs(mention.path):
        try:
            [target] = workspace.targets(mention.path, file=True)
        except (ToolError, ValueError):
            return None
        return target.rel
    for root in workspace.roots:
        inside = os.path.relpath(os.path.normpath(mention.path), root.path)
        if inside.split(os.sep)[0] not in (os.curdir, os.pardir):
            return workspace.relative(root, inside.split(os.sep))
    return None


def _within(folder: str, root: str) -> bool:
    inside = os.path.relpath(os.path.realpath(folder), root)
    return inside.split(os.sep)[0] != os.pardir


def arguments(path: str, lines: Lines | None) -> dict[str, object]:
    """The `read_file` arguments that show `path`, or those lines of it."""
    if lines is None:
        return {"path": path}
    return {
        "path": path,
        "offset": lines.start,
        "limit": min(lines.end - lines.start + 1, _MAX_LINES),
    }


class Mentioned:
    """The approver for the reads of what the user named: exactly those reads are the
    user's own choice (`by="mention"`); everything else goes to `inner`."""

    def __init__(self, inner: Approver, paths: Sequence[str]) -> None:
        self.inner = inner
        self._paths = set(paths)

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        if request.tool == "read_file" and not request.folder and request.path in self._paths:
            return Outcome(Decision.ALLOW_ONCE, "mention")
        return await self.inner.decide(request, observer=observer)


def calls(workspace: Workspace, mentions: Sequence[Mention], first: int) -> list[ToolCall]:
    """One `read_file` call of Lantern's own per mention in the workspace (ids
    `mention_<first>_<n>`); one outside it gets none."""
    made = []
    for n, mention in enumerate(mentions, 1):
        path = resolve(workspace, mention)
        if path is not None:
            args = json.dumps(arguments(path, mention.lines))
            made.append(ToolCall(f"mention_{first}_{n}", "read_file", args))
    return made


def with_reads(named: int, done: Sequence[CallResult], question: str) -> str:
    """The question after each mentioned file's read: its text, or why it was not read."""
    shown = []
    for result in done:
        path = (result.args or {}).get("path", "")
        how = ":" if result.code is None else ", which did not succeed:"
        shown.append(
            f"The user named {path} with the question; Lantern read it with read_file "
            f"(call {result.call.id}){how}\n{result.content}"
        )
    if len(done) < named:
        left = named - len(done)
        shown.append(f"[{left} more file(s) the user named are outside the workspace: not read]")
    return "\n\n".join([*shown, question])
