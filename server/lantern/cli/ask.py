"""`lantern ask`: one question, headless. Tool activity on stderr, the answer on stdout.

Exit codes: 0 answered, 2 usage or configuration (also an audit log that cannot be
written: nothing is sent then), 3 model or endpoint error, 4 stopped by a limit
(partial answer printed; also an answer the model's output limit cut off), 5 the
provider's content filter stopped the answer (what came before is printed), 130
interrupted (Ctrl-C; the partial answer is printed too).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from lantern import compose, exit_codes, startup
from lantern.agent.conversation import Conversation
from lantern.agent.failure import EndpointError
from lantern.agent.inputs import Mention
from lantern.agent.loop import Agent
from lantern.agent.mentions import MentionError
from lantern.agent.mentions import parse as mention
from lantern.agent.provider.endpoint import resolve_endpoint
from lantern.agent.provider.window import context_window
from lantern.approvals.approver import ApprovalRequest, Approver, Decision, Fixed, Remembering
from lantern.audit import AuditError
from lantern.cli.output import EventPrinter, failure_lines, one_line, print_json, print_text, say
from lantern.cli.workspace import settings, workspace_for
from lantern.settings.sources import Settings
from lantern.workspace.roots import Workspace

_EXIT_FOR = {
    "done": exit_codes.OK,
    "max_steps": exit_codes.LIMIT,
    "budget": exit_codes.LIMIT,
    "timeout": exit_codes.LIMIT,
    "error": exit_codes.MODEL,
    "cancelled": exit_codes.INTERRUPTED,
    "truncated": exit_codes.LIMIT,
    "filtered": exit_codes.FILTERED,
}
_CHOICES = {
    "a": Decision.ALLOW_ONCE,
    "c": Decision.ALLOW_CONVERSATION,
    "w": Decision.ALLOW_WORKSPACE,
    "d": Decision.DENY,
    "": Decision.DENY,
}


class ConversationFileError(Exception):
    """`--conversation-file` cannot be used: unreadable, or kept for another workspace."""


class TtyPrompt:
    """Asks on the terminal, with the editor's four answers; anything but a clear yes is a deny."""

    async def ask(self, request: ApprovalRequest) -> Decision:
        prompt = (
            f"\n{request.message()}\n"
            "  [a] Allow  [c] Allow in chat  [w] Always allow  [d] Deny (default): "
        )

        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def settle(text: str) -> None:
            if not answer.done():
                answer.set_result(text)

        def ask() -> None:
            sys.stderr.write(prompt)
            sys.stderr.flush()
            text = sys.stdin.readline().strip().lower()[:1]
            with contextlib.suppress(RuntimeError):  # the loop is gone: Ctrl-C won
                loop.call_soon_threadsafe(settle, text)

        # A daemon thread, not asyncio.to_thread: Ctrl-C at the prompt must not wait
        # for a line that never comes before the process can exit.
        threading.Thread(target=ask, name="lantern-approval-prompt", daemon=True).start()
        return _CHOICES.get(await answer, Decision.DENY)


class NoTtyPrompt:
    """Without a terminal nobody can answer: deny, and say so once."""

    def __init__(self) -> None:
        self._told = False

    async def ask(self, request: ApprovalRequest) -> Decision:
        if not self._told:
            self._told = True
            print(
                "lantern: no terminal to ask for approval on; denying reads "
                "(use --approve allow to let Lantern read the workspace)",
                file=sys.stderr,
            )
        return Decision.DENY


def approvals_for(mode: str, settings: Settings) -> Approver:
    """`--approve allow|deny` answers every request; `ask` asks on the terminal."""
    if mode == "allow":
        return Fixed(Decision.ALLOW_ONCE)
    if mode == "deny":
        return Fixed(Decision.DENY)
    prompt = TtyPrompt() if sys.stdin.isatty() else NoTtyPrompt()
    return Remembering(prompt, mode=settings.approval.mode, allow_globs=settings.approval.allow)


def _load_conversation(path: Path | None, workspace: Workspace) -> Conversation:
    if path is None or not path.exists():
        return Conversation(workspace_key=workspace.key)
    try:
        conv = Conversation.load(path)
    except (OSError, ValueError) as exc:
        raise ConversationFileError(
            f"--conversation-file {one_line(path.name)}: {one_line(str(exc))}"
        ) from None
    if conv.workspace_key and conv.workspace_key != workspace.key:
        raise ConversationFileError(
            f"--conversation-file {one_line(path.name)} belongs to another workspace; "
            "use a new file"
        )
    return conv


def ask_command(args: argparse.Namespace) -> int:
    """`lantern ask`, its flags over the settings."""
    startup.loaded()
    flags = {
        "model": args.model,
        "baseUrl": args.base_url,
        "apiKey": args.api_key,
        "maxSteps": args.max_steps,
        "toolProtocol": args.tool_protocol,
        "projectInstructions": args.project_instructions,
    }
    chosen = settings({k: v for k, v in flags.items() if v is not None})
    return asyncio.run(
        run_ask(
            question=args.question,
            settings=chosen,
            workspace=workspace_for(args.workspace, chosen),
            approve=args.approve,
            conversation_file=args.conversation_file,
            as_json=args.json,
            files=args.file,
        )
    )


async def run_ask(
    *,
    question: str,
    settings: Settings,
    workspace: Workspace,
    approve: str,
    conversation_file: Path | None,
    as_json: bool,
    files: Sequence[str] = (),
) -> int:
    _never_fail_to_print()
    try:
        mentions = [mention(raw, workspace, os.getcwd()) for raw in files]
        endpoint = resolve_endpoint(settings)
        conv = _load_conversation(conversation_file, workspace)
    except MentionError as exc:
        say(f"--file {one_line(str(exc))}")
        return exit_codes.USAGE
    except EndpointError as exc:
        say(exc.cli)
        return exit_codes.USAGE
    except ConversationFileError as exc:
        say(str(exc))
        return exit_codes.USAGE
    if endpoint.note:
        say(endpoint.note)
    model = compose.model_client(endpoint, settings)
    asker = compose.agent(model, workspace, approvals_for(approve, settings), settings)
    try:
        if asker.audit is not None:
            asker.audit.check()  # before anything is sent: no question runs unaudited
        asker.window = await context_window(endpoint, settings, os.environ)
        return await _answer(asker, question, conv, conversation_file, settings, as_json, mentions)
    except AuditError as exc:
        say(f"{exc} (fix its folder's permissions, or free space on its disk)")
        return exit_codes.USAGE
    finally:
        await model.close()


async def _answer(
    asker: Agent,
    question: str,
    conv: Conversation,
    conversation_file: Path | None,
    settings: Settings,
    as_json: bool,
    mentions: Sequence[Mention],
) -> int:
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        result = await asker.ask(question, conv, EventPrinter(as_json=as_json), mentions=mentions)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    if conversation_file is not None:
        conv.save(conversation_file)
    if as_json:
        print_json(result)
    else:
        print_text(result)
    if result.detail is not None:
        say("\n".join(failure_lines(result.detail)))
    elif result.stop_reason != "done":
        say(
            {
                "max_steps": f"stopped after {settings.max_steps} model calls (maxSteps)",
                "budget": "stopped: the tool output budget (maxToolOutputBytes) is used up",
                "timeout": f"stopped after {settings.question_timeout_seconds:g} s "
                "(questionTimeoutSeconds)",
                "cancelled": "interrupted",
            }.get(result.stop_reason, result.error or result.stop_reason)
        )
    return _EXIT_FOR[result.stop_reason]


def _never_fail_to_print() -> None:
    """A last net under the escaping: a character no encoder takes is written escaped."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
