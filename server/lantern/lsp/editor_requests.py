"""The requests an editor's own view needs beside `lantern/ask` (docs/protocol.md):

- `lantern/grants` / `lantern/revokeGrant`: the remembered approvals (`Always
  Allow` for the open workspace, `Allow in Chat` for a conversation), to show
  and undo them;
- `lantern/models`: the configured endpoint's models, for a model picker;
- `lantern/localServers`: the model servers answering on this machine, for a
  "connect a model" step.

Each handler only checks the params' shape and calls the `Session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from lantern.escaping import replace_surrogates
from lantern.lsp.translate import plain

if TYPE_CHECKING:
    from lantern.agent.conversation import HistoryTurn
    from lantern.lsp.server import LanternServer

GRANTS = "lantern/grants"
REVOKE_GRANT = "lantern/revokeGrant"
MODELS = "lantern/models"
LOCAL_SERVERS = "lantern/localServers"


def _params(params: Any) -> dict[str, Any]:
    value = replace_surrogates(plain(params))
    return value if isinstance(value, dict) else {}


def register(server: LanternServer) -> None:
    @server.feature(GRANTS)
    def grants(ls: LanternServer, params: Any) -> dict[str, Any]:
        conversation_id = _params(params).get("conversationId")
        if conversation_id is not None and not isinstance(conversation_id, str):
            raise JsonRpcInvalidParams("conversationId must be a string")
        return {"grants": [g.to_dict() for g in ls.session.grants(conversation_id)]}

    @server.feature(REVOKE_GRANT)
    def revoke_grant(ls: LanternServer, params: Any) -> dict[str, bool]:
        grant_id = _params(params).get("id")
        if not isinstance(grant_id, str):
            raise JsonRpcInvalidParams("id must be a string (a grant's id from lantern/grants)")
        return {"revoked": ls.session.revoke_grant(grant_id)}

    @server.feature(MODELS)
    async def models(ls: LanternServer, params: Any) -> dict[str, Any]:
        return (await ls.session.models()).to_dict()

    @server.feature(LOCAL_SERVERS)
    async def local_servers(ls: LanternServer, params: Any) -> dict[str, Any]:
        return {"servers": [s.to_dict() for s in await ls.session.local_servers()]}


def history(value: Any) -> list[HistoryTurn]:
    """`lantern/ask`'s `history`: absent or null is none; a bad shape is InvalidParams."""
    if value is None:
        return []
    from lantern.agent.conversation import history_turns

    try:
        return history_turns(value)
    except ValueError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
