"""The settings and the workspace a command runs with (`lantern tool`, `ask`, `doctor`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lantern.cli.usage import UsageError
from lantern.settings.sources import Settings, SettingsError, load_settings
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace


def workspace_for(folders: Sequence[Path] | None, settings: Settings) -> Workspace:
    chosen = list(folders or [Path.cwd()])
    for folder in chosen:
        if not folder.is_dir():
            raise UsageError(f"--workspace {folder.name or folder}: not a folder")
    try:
        return Workspace(chosen, Policy(settings.approval.deny))
    except ValueError as exc:  # the file system root
        raise UsageError(f"--workspace: {exc}") from None


def settings(cli: dict[str, object] | None = None) -> Settings:
    try:
        return load_settings(cli=cli or {}, cli_source="command line")
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
