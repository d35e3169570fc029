"""`lantern tool NAME ARGS`: one tool call, exactly as the model would make it, as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json

from lantern import exit_codes, startup
from lantern.approvals.approver import Decision, Fixed
from lantern.audit import AuditLog
from lantern.cli.usage import UsageError
from lantern.cli.workspace import settings, workspace_for
from lantern.platform_gate import CODE as UNSUPPORTED_PLATFORM
from lantern.tools.base import ToolContext
from lantern.tools.registry import run_tool


def run_tool_command(args: argparse.Namespace) -> int:
    """Run the call and print its result; exit 2 where the platform refuses every tool."""
    return asyncio.run(_tool(args))


async def _tool(args: argparse.Namespace) -> int:
    startup.loaded()
    workspace = workspace_for(args.workspace, settings())
    approvals = Fixed(Decision.ALLOW_ONCE if args.approve == "allow" else Decision.DENY)
    ctx = ToolContext(workspace, approvals, conversation_id="cli-tool")
    audit = AuditLog(workspace=workspace.name, workspace_key=workspace.key)
    result = await run_tool(args.name, args.arguments, ctx, audit)
    print(json.dumps(result.public(), ensure_ascii=False))
    if result.code == UNSUPPORTED_PLATFORM:
        raise UsageError(result.content)
    return exit_codes.OK
