"""The requests an editor's own view needs beside `lantern/ask` (docs/protocol.md):

- `lantern/grants` / `lantern/revokeGrant`: the remembered approvals (`Always
  Allow` for the open workspace, `Allow in Chat` for a conversation), to show
  and undo them;
- `lantern/models`: the configured endpoint's models, for a model picker;
- `lantern/localServers`: the model servers answering on this machine, for a
  "connect a model" step.

pygls has already checked the params against their types (`messages.py`); each
handler only calls the `Session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lantern.lsp.messages import (
    GRANTS,
    LOCAL_SERVERS,
    MODELS,
    REVOKE_GRANT,
    GrantsParams,
    GrantsResult,
    LocalServersResult,
    ModelsResult,
    NoParams,
    RevokeGrantParams,
    RevokeGrantResult,
    converter,
)

if TYPE_CHECKING:
    from lantern.lsp.server import LanternServer


def register(server: LanternServer) -> None:
    @server.feature(GRANTS)
    def grants(ls: LanternServer, params: GrantsParams | None) -> GrantsResult:
        conversation_id = params.conversation_id if params is not None else None
        return GrantsResult(grants=[g.to_dict() for g in ls.session.grants(conversation_id)])

    @server.feature(REVOKE_GRANT)
    def revoke_grant(ls: LanternServer, params: RevokeGrantParams) -> RevokeGrantResult:
        return RevokeGrantResult(revoked=ls.session.revoke_grant(params.id))

    @server.feature(MODELS)
    async def models(ls: LanternServer, params: NoParams | None) -> ModelsResult:
        found = (await ls.session.models()).to_dict()
        result: ModelsResult = converter().structure(found, ModelsResult)
        return result

    @server.feature(LOCAL_SERVERS)
    async def local_servers(ls: LanternServer, params: NoParams | None) -> LocalServersResult:
        return LocalServersResult(servers=[s.to_dict() for s in await ls.session.local_servers()])
