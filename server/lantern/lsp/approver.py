"""The editor's approval prompt: a standard `window/showMessageRequest`, so any LSP client
can answer it.

VS Code shows it as a notification with four buttons; Neovim and others show
their own prompt (Neovim: a numbered list). The titles are short so that VS Code
shows them in full next to each other, and each still says what it grants:
`Allow` this read, `Allow in Chat` (this file — or, for a listing or a search,
this folder — for the rest of the conversation), `Always Allow` (every read in
this workspace, remembered), `Deny`. The message names the file and the lines.
No answer within `approval.timeoutSeconds`, a dismissed prompt or a client
error is a deny.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lantern.approvals import ApprovalRequest, Decision

log = logging.getLogger(__name__)

ACTIONS: dict[str, Decision] = {
    "Allow": Decision.ALLOW_ONCE,
    "Allow in Chat": Decision.ALLOW_CONVERSATION,
    "Always Allow": Decision.ALLOW_WORKSPACE,
    "Deny": Decision.DENY,
}


class EditorPrompt:
    """The `Prompt` a `Session` asks through; `timeout` reads `approval.timeoutSeconds` anew."""

    def __init__(self, server: LanguageServer, timeout: Callable[[], float]) -> None:
        self.server = server
        self.timeout = timeout

    async def ask(self, request: ApprovalRequest) -> Decision:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=request.message(),
            actions=[types.MessageActionItem(title=title) for title in ACTIONS],
        )
        try:
            async with asyncio.timeout(self.timeout()):
                answer = await self.server.window_show_message_request_async(params)
        except TimeoutError:
            log.info("approval prompt timed out: %s", request.path)
            return Decision.TIMEOUT
        except Exception as exc:  # a client that cannot show prompts answers with an error
            log.warning("approval prompt failed (%s); denying", exc)
            return Decision.DENY
        if answer is None:
            return Decision.DENY
        title = answer.title if hasattr(answer, "title") else str(answer)
        return ACTIONS.get(title, Decision.DENY)
