"""`lantern` on the command line: ask, serve, tool, doctor (docs in README.md)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from lantern import __version__, exit_codes, startup
from lantern.cli.usage import UsageError
from lantern.platform_gate import unsupported

# Each command imports what it needs when it runs: `lantern --version` loads nothing
# more, `lantern tool` no agent, `lantern serve` answers `initialize` without first
# loading the openai SDK (the server loads it in the background once initialized).


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lantern", description="Ask questions about the code in your workspace."
    )
    parser.add_argument("--version", action="version", version=f"lantern {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ask = sub.add_parser("ask", help="ask a question about the workspace")
    ask.add_argument("question")
    ask.add_argument(
        "--workspace", action="append", type=Path, help="workspace folder (repeatable)"
    )
    ask.add_argument(
        "--conversation-file", type=Path, help="keep the conversation here for follow-ups"
    )
    ask.add_argument("--model")
    ask.add_argument("--base-url")
    ask.add_argument("--api-key")
    ask.add_argument(
        "--approve",
        choices=("ask", "allow", "deny"),
        default="ask",
        help="ask on the terminal (default; denies without one), allow or deny every read",
    )
    ask.add_argument("--max-steps", type=int, help="model calls per question")
    ask.add_argument(
        "--tool-protocol",
        choices=("auto", "native", "text"),
        help="native tool calls, tools described in the prompt (text), or auto (default)",
    )
    ask.add_argument(
        "--no-project-instructions",
        dest="project_instructions",
        action="store_const",
        const=False,
        help="do not offer AGENTS.md (or CLAUDE.md, …) to the model (projectInstructions)",
    )
    ask.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH[:START-END]",
        help=(
            "a file (or some of its lines) to read, or a folder to list, with the question, "
            "without asking (repeatable)"
        ),
    )
    ask.add_argument("--json", action="store_true", help="print one JSON object")

    sub.add_parser("serve", help="language server over stdio")
    doctor = sub.add_parser("doctor", help="show settings, and check the endpoint and ripgrep")
    doctor.add_argument(
        "--probe",
        action="store_true",
        help="also make one tiny tool-call round trip to the model (no workspace content) "
        "and report what the endpoint supports",
    )

    tool = sub.add_parser("tool", help="run one tool exactly as the model would")
    tool.add_argument(
        "name",
        help="read_file, list_files, search, outline, find_symbol or find_references",
    )
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="lantern: %(levelname)s %(name)s: %(message)s",
    )
    startup.loading()  # until the command's modules are in (`lantern.startup`)
    try:
        if args.command == "tool":
            from lantern.cli.tool import run_tool_command

            return run_tool_command(args)
        if args.command == "ask":
            refusal = unsupported()
            if refusal is not None:  # every tool would be refused: ask no model
                raise UsageError(refusal)
            from lantern.cli.ask import ask_command

            return ask_command(args)
        if args.command == "doctor":
            from lantern.cli.doctor import run_doctor
            from lantern.cli.workspace import settings

            startup.loaded()
            return run_doctor(settings(), probe=args.probe)
        if args.command == "serve":
            from lantern.lsp.server import serve

            refusal = unsupported()
            if refusal is not None:  # it still serves, so an editor gets the same answer
                print(f"lantern: {refusal} Every question is refused.", file=sys.stderr)
            return serve()
    except UsageError as exc:
        print(f"lantern: {exc}", file=sys.stderr)
        return exit_codes.USAGE
    finally:
        startup.loaded()
    parser.error(f"unknown command {args.command}")
    return exit_codes.USAGE


if __name__ == "__main__":
    sys.exit(main())
