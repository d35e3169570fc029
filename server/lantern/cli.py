"""`lantern` on the command line: ask, serve, tool, doctor (DESIGN section 9)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from lantern import __version__
from lantern.approvals import Decision, Fixed
from lantern.audit import AuditLog
from lantern.config import Settings, SettingsError, load_settings
from lantern.tools.base import ToolContext
from lantern.tools.registry import run_tool
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_MODEL = 3
EXIT_LIMIT = 4


class UsageError(Exception):
    """Bad flags or configuration: exit 2 with a message that says how to fix it."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lantern", description="Ask questions about the code in your workspace."
    )
    parser.add_argument("--version", action="version", version=f"lantern {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tool = sub.add_parser("tool", help="run one tool exactly as the model would")
    tool.add_argument("name", help="read_file, list_files or search")
    tool.add_argument("arguments", nargs="?", default="{}", help="the tool's JSON arguments")
    tool.add_argument(
        "--workspace", action="append", type=Path, help="workspace folder (repeatable)"
    )
    tool.add_argument(
        "--approve",
        choices=("allow", "deny"),
        default="allow",
        help="answer to the approval prompt (default: allow — you are the one asking)",
    )
    return parser


def workspace_for(folders: Sequence[Path] | None, settings: Settings) -> Workspace:
    chosen = list(folders or [Path.cwd()])
    for folder in chosen:
        if not folder.is_dir():
            raise UsageError(f"--workspace {folder.name or folder}: not a folder")
    return Workspace(chosen, Policy(settings.approval.deny))


def _settings(cli: dict[str, object] | None = None) -> Settings:
    try:
        return load_settings(cli=cli or {})
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


async def _tool(args: argparse.Namespace) -> int:
    settings = _settings()
    workspace = workspace_for(args.workspace, settings)
    approvals = Fixed(Decision.ALLOW_ONCE if args.approve == "allow" else Decision.DENY)
    ctx = ToolContext(workspace, approvals, conversation_id="cli-tool")
    audit = AuditLog(workspace=workspace.name, workspace_key=workspace.key)
    result = await run_tool(args.name, args.arguments, ctx, audit)
    print(json.dumps(result.public(), ensure_ascii=False))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="lantern: %(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "tool":
            return asyncio.run(_tool(args))
    except UsageError as exc:
        print(f"lantern: {exc}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
