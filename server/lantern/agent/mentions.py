"""Files and folders the user names with a question: `lantern ask --file PATH[:START-END]`,
and an editor's `mentions` (`@file`, `@folder` in its question box).

Naming a file or folder with the question is the user's own choice, so Lantern reads
it without asking again — still through the read path (jail, name policy, ignore
rules, redaction, caps), as one call of Lantern's own per name (`read_file` for a
file or some of its lines, `list_files` for a folder), budgeted, reported and audited
like the model's, with the decision `mention`. Only that call is covered: the model's
own calls ask as always (listing a folder does not let the model read its files). A
name outside every workspace folder is not read, and its path is not shown to the model.
"""

from __future__ import annotations

import json
import os
import re
import stat
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
    """A `--file` that cannot be named: not in a workspace folder, or a bad line range."""


def parse(raw: str, workspace: Workspace, cwd: str) -> Mention:
    """`PATH` or `PATH:START[-END]` as the command line gives it (a file, or a folder to
    list): PATH absolute, or relative to `cwd` when that lies in a workspace folder, else
    as the model names it (relative to the workspace). Checked by name only here: the
    read itself is the read path's."""
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
    """The path the model uses for `mention` (`.` or a workspace folder's name for a whole
    folder), or None when it is in no workspace folder."""
    if not os.path.isabs(mention.path):
        try:
            targets = workspace.targets(mention.path, file=False)
        except ToolError:
            return None
        return targets[0].rel if len(targets) == 1 else "."
    for root in workspace.roots:
        inside = os.path.relpath(os.path.normpath(mention.path), root.path)
        if inside == os.curdir:
            return workspace.relative(root, ())
        if inside.split(os.sep)[0] != os.pardir:
            return workspace.relative(root, inside.split(os.sep))
    return None


def _is_folder(workspace: Workspace, path: str) -> bool:
    """Whether the model's `path` names a folder (the last name not followed if a link):
    which call shows it. The call itself goes through the read path."""
    try:
        targets = workspace.targets(path, file=False)
    except ToolError:  # a name the read path refuses in any case: read_file says why
        return False
    if len(targets) > 1:  # `.` of several workspace folders
        return True
    [target] = targets
    try:
        st = os.lstat(os.path.join(target.root.path, *target.parts))
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(st.st_mode)


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
    """The approver for the calls that show what the user named: exactly those reads and
    listings are the user's own choice (`by="mention"`); everything else goes to `inner`."""

    def __init__(self, inner: Approver, calls: Sequence[ToolCall]) -> None:
        self.inner = inner
        self._named = {(call.name, str(json.loads(call.arguments)["path"])) for call in calls}

    async def decide(
        self, request: ApprovalRequest, *, observer: PromptObserver | None = None
    ) -> Outcome:
        listing = request.tool == "list_files"  # a folder's request; a read's is a file's
        if (request.tool, request.path) in self._named and request.folder == listing:
            return Outcome(Decision.ALLOW_ONCE, "mention")
        return await self.inner.decide(request, observer=observer)


def calls(workspace: Workspace, mentions: Sequence[Mention], first: int) -> list[ToolCall]:
    """One call of Lantern's own per mention in the workspace (ids `mention_<first>_<n>`):
    `list_files` for a folder named without lines, else `read_file`; one outside the
    workspace gets none. Looks at the disk: run it in a worker thread."""
    made = []
    for n, mention in enumerate(mentions, 1):
        path = resolve(workspace, mention)
        if path is None:
            continue
        if mention.lines is None and _is_folder(workspace, path):
            made.append(ToolCall(f"mention_{first}_{n}", "list_files", json.dumps({"path": path})))
        else:
            args = json.dumps(arguments(path, mention.lines))
            made.append(ToolCall(f"mention_{first}_{n}", "read_file", args))
    return made


def with_reads(named: int, done: Sequence[CallResult], question: str) -> str:
    """The question after each mentioned file's read or folder's listing: its text, or
    why it was not read."""
    shown = []
    for result in done:
        path = (result.args or {}).get("path", "")
        listed = result.call.name == "list_files"
        did = "listed it with list_files" if listed else "read it with read_file"
        how = ":" if result.code is None else ", which did not succeed:"
        shown.append(
            f"The user named {path} with the question; Lantern {did} "
            f"(call {result.call.id}){how}\n{result.content}"
        )
    if len(done) < named:
        left = named - len(done)
        shown.append(f"[{left} more file(s) the user named are outside the workspace: not read]")
    return "\n\n".join([*shown, question])
