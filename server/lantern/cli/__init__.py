"""`lantern` on the command line: ask, serve, tool, doctor (docs in README.md)."""

from lantern.cli.commands import main

__all__ = ["main"]
