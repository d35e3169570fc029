"""The requests an editor's own view needs beside `lantern/ask` (docs/protocol.md):

- `lantern/grants` / `lantern/revokeGrant`: the remembered approvals (`Always
  Allow` for the open workspace, `Allow in Chat` for a conversation), to show
  and undo them;
- `lantern/models`: the configured endpoint's models, for a model picker;
- `lantern/localServers`: the model servers answering on this machine, for a
  "connect a model" step;
- `lantern/suggestMentions`: what `@` in the question box offers (the workspace's
  files and folders, the client's symbols checked: `workspace/suggestions.py`).

pygls has already checked the params against their types (`messages.py`); each
handler only calls the `Session` and returns its typed values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pygls.lsp.server import LanguageServer

from lantern.lsp import translate
from lantern.lsp.messages import (
    GRANTS,
    LOCAL_SERVERS,
    MODELS,
    REVOKE_GRANT,
    SUGGEST_MENTIONS,
    GrantsParams,
    GrantsResult,
    LocalServersResult,
    NoParams,
    RevokeGrantParams,
    RevokeGrantResult,
    SuggestMentionsParams,
    SuggestMentionsResult,
)
from lantern.session import Session

if TYPE_CHECKING:
    from lantern.agent.provider.model_lists import ModelList


class _Served(Protocol):
    """What these handlers use of the server that registers them (`server.LanternServer`)."""

    session: Session


def register(server: LanguageServer) -> None:
    @server.feature(GRANTS)
    def grants(ls: _Served, params: GrantsParams | None) -> GrantsResult:
        conversation_id = params.conversation_id if params is not None else None
        return GrantsResult(grants=ls.session.grants(conversation_id))

    @server.feature(REVOKE_GRANT)
    def revoke_grant(ls: _Served, params: RevokeGrantParams) -> RevokeGrantResult:
        return RevokeGrantResult(revoked=ls.session.revoke_grant(params.id))

    @server.feature(MODELS)
    async def models(ls: _Served, params: NoParams | None) -> ModelList:
        return await ls.session.models()

    @server.feature(LOCAL_SERVERS)
    async def local_servers(ls: _Served, params: NoParams | None) -> LocalServersResult:
        return LocalServersResult(servers=await ls.session.local_servers())

    @server.feature(SUGGEST_MENTIONS)
    async def suggest_mentions(ls: _Served, params: SuggestMentionsParams) -> SuggestMentionsResult:
        symbols = params.symbols or []
        found = await ls.session.suggest_mentions(
            params.query, [translate.mention_symbol(s) for s in symbols]
        )
        return SuggestMentionsResult(items=[translate.suggestion(f, symbols) for f in found])
