"""The remembered approvals, as a list an editor can show and revoke (`lantern/grants`).

Two kinds of grant outlive one call (see `approvals.py`): `Always Allow` for a
workspace (stored in approvals.json, `scope: "always"`) and `Allow in Chat` for
a file or folder (kept in memory for one conversation, `scope: "conversation"`).
Each grant has an opaque `id`, a hash of what it covers: the same grant keeps
its id for as long as it exists, so a list shown a while ago can still revoke.
Revoking removes the grant where it lives; the next read it covered prompts again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

from lantern.approvals.approver import Remembering, RootsIdentity
from lantern.escaping import escape_line
from lantern.shapes import OPTIONAL, UNSENT, wire

Scope = Literal["always", "conversation"]
Kind = Literal["workspace", "file", "folder"]
_ESCAPED = wire(sent_as=escape_line)
_OPTIONAL_ESCAPED = wire(optional=True, sent_as=escape_line)


@dataclass(frozen=True)
class Grant:
    """One remembered grant; as sent, the `lantern/grants` item (docs/protocol.md#grants),
    its names escaped onto one line."""

    id: str = field(init=False)  # a hash of what it covers (see the module's docstring)
    scope: Scope
    kind: Kind
    workspace: str = field(metadata=_ESCAPED)  # the workspace's name, as shown
    owner: str = field(metadata=UNSENT)  # the workspace key (always) or the conversation id
    tool: str | None = field(default=None, metadata=OPTIONAL)  # folder grants: the tool
    path: str | None = field(default=None, metadata=_OPTIONAL_ESCAPED)  # as grants compare it
    since: int | None = field(default=None, metadata=OPTIONAL)  # always: when (epoch seconds)

    def __post_init__(self) -> None:
        parts = (self.scope, self.owner, self.kind, self.tool or "", self.path or "")
        digest = hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()
        object.__setattr__(self, "id", "g" + digest[:20])


def list_grants(
    approvals: Remembering,
    *,
    workspace_key: str | None,
    workspace_name: str,
    conversation_id: str | None,
    workspace_identity: RootsIdentity | None = None,
) -> list[Grant]:
    """The open workspace's `Always Allow` (when given, and given for these root folders
    when `workspace_identity` is known) and one conversation's grants."""
    found: list[Grant] = []
    if workspace_key:
        entry = approvals.grants.entry(workspace_key, workspace_identity)
        if entry is not None:
            since = entry.get("since")
            found.append(
                Grant(
                    "always",
                    "workspace",
                    workspace_name,
                    workspace_key,
                    since=since if type(since) is int else None,
                )
            )
    if conversation_id is not None:
        found += _conversation_grants(approvals, conversation_id, workspace_name)
    return found


def _conversation_grants(approvals: Remembering, conversation: str, workspace: str) -> list[Grant]:
    files = [
        Grant("conversation", "file", workspace, conversation, path=key)
        for key in approvals.file_grants(conversation)
    ]
    folders = [
        Grant("conversation", "folder", workspace, conversation, tool=tool, path=folder)
        for tool, folder in approvals.folder_grants(conversation)
    ]
    return files + folders


def revoke_grant(
    approvals: Remembering, grant_id: str, *, workspace_key: str | None, workspace_name: str
) -> bool:
    """Remove the grant with this id (the open workspace's, or any conversation's)."""
    candidates = list_grants(
        approvals, workspace_key=workspace_key, workspace_name=workspace_name, conversation_id=None
    )
    for conversation in approvals.conversations():
        candidates += _conversation_grants(approvals, conversation, workspace_name)
    grant = next((g for g in candidates if g.id == grant_id), None)
    if grant is None:
        return False
    if grant.scope == "always":
        approvals.grants.revoke(grant.owner)
        return True
    if grant.kind == "file" and grant.path is not None:
        return approvals.forget_file(grant.owner, grant.path)
    if grant.kind == "folder" and grant.tool is not None and grant.path is not None:
        return approvals.forget_folder(grant.owner, grant.tool, grant.path)
    return False
