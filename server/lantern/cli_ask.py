"""`lantern ask`: one question, headless. Tool activity on stderr, the answer on stdout.

Exit codes: 0 answered, 2 usage or configuration, 3 model or endpoint error,
4 stopped by a limit (partial answer printed), 130 interrupted (Ctrl-C; the
partial answer is printed too).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from lantern.agent.conversation import Conversation
from lantern.agent.endpoint import EndpointError, resolve_endpoint
from lantern.agent.loop import Agent, AskResult, Event, Limits
from lantern.agent.model import ModelClient
from lantern.approvals import (
    ApprovalRequest,
    Decision,
    Fixed,
    Remembering,
)
from lantern.audit import AuditLog
from lantern.config import Settings
from lantern.tools.base import Approvals
from lantern.workspace.roots import Workspace

EXIT_OK, EXIT_USAGE, EXIT_MODEL, EXIT_LIMIT, EXIT_INTERRUPTED = 0, 2, 3, 4, 130
_EXIT_FOR = {
    "done": EXIT_OK,
    "max_steps": EXIT_LIMIT,
    "budget": EXIT_LIMIT,
    "timeout": EXIT_LIMIT,
    "error": EXIT_MODEL,
    "cancelled": EXIT_INTERRUPTED,
}
_CHOICES = {
    "a": Decision.ALLOW_ONCE,
    "c": Decision.ALLOW_CONVERSATION,
    "w": Decision.ALLOW_WORKSPACE,
    "d": Decision.DENY,
    "": Decision.DENY,
}


class TtyApprover:
    """Asks on the terminal; anything but a clear yes is a deny."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        prompt = (
            f"\n{request.message()}\n"
            "  [a] Allow  [c] Allow for this conversation  [w] Always allow in this workspace"
            "  [d] Deny (default): "
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


class NoTtyApprover:
    """Without a terminal nobody can answer: deny, and say so once."""

    def __init__(self) -> None:
        self._told = False

    async def decide(self, request: ApprovalRequest) -> Decision:
        if not self._told:
            self._told = True
            print(
                "lantern: no terminal to ask for approval on; denying reads "
                "(use --approve allow to let Lantern read the workspace)",
                file=sys.stderr,
            )
        return Decision.DENY


def approvals_for(mode: str, settings: Settings) -> Approvals:
    if mode == "allow":
        return Fixed(Decision.ALLOW_ONCE)
    if mode == "deny":
        return Fixed(Decision.DENY)
    inner = TtyApprover() if sys.stdin.isatty() else NoTtyApprover()
    return Remembering(inner, mode=settings.approval.mode, allow_globs=settings.approval.allow)


def _describe_args(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return "(malformed arguments)"
    parts = []
    for key in ("pattern", "path", "glob", "offset", "limit"):
        if key in arguments:
            parts.append(f"{key}={arguments[key]!r}" if key != "path" else str(arguments[key]))
    return " ".join(parts)


def print_event(event: Event) -> None:
    """Tool activity and status on stderr, one line each."""
    kind = event.get("kind")
    if kind == "tool":
        status = event["status"]
        if status == "running" and "bytes" not in event:
            return
        line = f"  {event['name']} {_describe_args(event['arguments'])} … {status}"
        if event.get("code"):
            line += f" ({event['code']})"
        if "bytes" in event:
            line += f" · {event['bytes']:,} B · {event['ms']:.0f} ms"
        print(line, file=sys.stderr)
    elif kind == "status" and event.get("status") == "retrying":
        print(f"lantern: {event.get('message')}; retrying", file=sys.stderr)


def print_text(result: AskResult) -> None:
    if result.answer:
        print(result.answer)
    if result.references:
        print("\nReferences:")
        for ref in result.references:
            marks = "verified" if ref.verified else "unverified"
            if ref.seen:
                marks += ", seen"
            lines = (
                str(ref.start_line)
                if ref.start_line == ref.end_line
                else f"{ref.start_line}-{ref.end_line}"
            )
            print(f"  {ref.path}:{lines} ({marks})")


def _load_conversation(path: Path | None, workspace: Workspace) -> Conversation:
    if path is None or not path.exists():
        return Conversation(workspace_key=workspace.key)
    try:
        conv = Conversation.load(path)
    except (OSError, ValueError) as exc:
        raise EndpointError(f"--conversation-file {path.name}: {exc}") from None
    if conv.workspace_key and conv.workspace_key != workspace.key:
        raise EndpointError(
            f"--conversation-file {path.name} belongs to another workspace; use a new file"
        )
    return conv


async def run_ask(
    *,
    question: str,
    settings: Settings,
    workspace: Workspace,
    approve: str,
    conversation_file: Path | None,
    as_json: bool,
) -> int:
    try:
        endpoint = resolve_endpoint(settings)
        conv = _load_conversation(conversation_file, workspace)
    except EndpointError as exc:
        print(f"lantern: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if endpoint.note:
        print(f"lantern: {endpoint.note}", file=sys.stderr)
    model = ModelClient(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        request_timeout=settings.request_timeout_seconds,
    )
    agent = Agent(
        model=model,
        workspace=workspace,
        approvals=approvals_for(approve, settings),
        limits=Limits.from_settings(settings),
        audit=AuditLog(workspace=workspace.name, workspace_key=workspace.key),
    )
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        result = await agent.ask(question, conv, print_event)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
        await model.close()
    if conversation_file is not None:
        conv.save(conversation_file)
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print_text(result)
    if result.stop_reason != "done":
        detail = result.error or {
            "max_steps": f"stopped after {settings.max_steps} model calls (maxSteps)",
            "budget": "stopped: the tool output budget (maxToolOutputBytes) is used up",
            "timeout": f"stopped after {settings.question_timeout_seconds:g} s "
            "(questionTimeoutSeconds)",
            "cancelled": "interrupted",
        }.get(result.stop_reason, result.stop_reason)
        print(f"lantern: {detail}", file=sys.stderr)
    return _EXIT_FOR[result.stop_reason]
