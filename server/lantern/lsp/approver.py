"""The editor's approval prompt: a standard `window/showMessageRequest`, so any LSP client
can answer it; or `lantern/approve` for a client that asks for it.

Neovim and others show their own prompt (Neovim: a numbered list). The titles
are short so that VS Code shows them in full next to each other, and each still
says what it grants: `Deny`, `Allow` this read, `Allow in Chat` (this file — or,
for a listing or a search, this folder — for the rest of the conversation),
`Always Allow` (every read in this workspace, remembered). `Deny` comes first:
a client that pre-selects the first action (Emacs's eglot fills in the first
title, so a bare Enter sends it) then denies, never grants. The message names
the file and the lines.
No answer within `approval.timeoutSeconds`, a dismissed prompt or a client
error is a deny.

A client that sets `capabilities.experimental.lantern.approvalRequests` in
`initialize` gets `lantern/approve` instead (docs/protocol.md#approvals): the
same message and titles plus what the prompt is about (the conversation, the
model's call id, the path, lines, size, a search's pattern), so it can show the
approval inside its own view, next to the tool call, for as long as it is open.
A late answer (after the timeout) is dropped by the protocol (`protocol.py`); an
answer that does not fit `{action}` counts as none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lantern.approvals.approver import ApprovalRequest, Decision
from lantern.lsp.messages import APPROVE, ApproveParams, ApproveResult

log = logging.getLogger(__name__)

#: The actions in the order sent: the first never grants (a bare Enter may pick it).
ACTIONS: dict[str, Decision] = {
    "Deny": Decision.DENY,
    "Allow": Decision.ALLOW_ONCE,
    "Allow in Chat": Decision.ALLOW_CONVERSATION,
    "Always Allow": Decision.ALLOW_WORKSPACE,
}


def client_offers(server: LanguageServer, name: str) -> bool:
    """Whether the client set `capabilities.experimental.lantern.<name>` to true."""
    try:
        experimental = server.client_capabilities.experimental
    except Exception:  # not initialized yet
        return False
    lantern = experimental.get("lantern") if isinstance(experimental, dict) else None
    return isinstance(lantern, dict) and lantern.get(name) is True


def approval_requests(server: LanguageServer) -> bool:
    """Whether the client asked for `lantern/approve` (its experimental capability)."""
    return client_offers(server, "approvalRequests")


def approve_params(request: ApprovalRequest, timeout: float) -> ApproveParams:
    """The `lantern/approve` params for one request (lone surrogates: `wire.py`)."""
    lines = request.start_line is not None and request.end_line is not None
    return ApproveParams(
        conversation_id=request.conversation_id,
        call_id=request.call_id,
        tool=request.tool,
        message=request.message(),
        path=request.path,
        folder=request.folder,
        actions=list(ACTIONS),
        timeout_seconds=float(timeout),
        pattern=request.pattern,
        start_line=request.start_line if lines else None,
        end_line=request.end_line if lines else None,
        size=request.size,
    )


def _decision(answer: Any, in_editor: bool) -> Decision:
    """The client's answer as a decision: a known title, anything else a deny."""
    if in_editor:
        title = answer.action if isinstance(answer, ApproveResult) else None
    elif answer is None:
        return Decision.DENY
    else:
        title = answer.title if hasattr(answer, "title") else str(answer)
    return ACTIONS.get(title, Decision.DENY) if isinstance(title, str) else Decision.DENY


class EditorPrompt:
    """The `Prompt` a `Session` asks through; `timeout` reads `approval.timeoutSeconds` anew."""

    def __init__(self, server: LanguageServer, timeout: Callable[[], float]) -> None:
        self.server = server
        self.timeout = timeout

    async def ask(self, request: ApprovalRequest) -> Decision:
        timeout = self.timeout()
        in_editor = approval_requests(self.server)
        try:
            async with asyncio.timeout(timeout):
                if in_editor:
                    answer = await self.server.protocol.send_request_async(
                        APPROVE, approve_params(request, timeout)
                    )
                else:
                    answer = await self.server.window_show_message_request_async(
                        self._show_message(request)
                    )
        except TimeoutError:
            log.info("approval prompt timed out: %s", request.path)
            return Decision.TIMEOUT
        except Exception as exc:  # a client that cannot show prompts answers with an error
            log.warning("approval prompt failed (%s); denying", exc)
            return Decision.DENY
        return _decision(answer, in_editor)

    @staticmethod
    def _show_message(request: ApprovalRequest) -> types.ShowMessageRequestParams:
        return types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=request.message(),
            actions=[types.MessageActionItem(title=title) for title in ACTIONS],
        )
