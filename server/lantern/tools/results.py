"""The exact policy check on every path that list_files or search is about to show.

ripgrep already skips the denylist and .gitignore inside the folder it runs
in. This check is the authority on top: the denylist and deny globs again,
`.gitignore` files above that folder, `.lanternignore` files everywhere, and
a single link count, so a hard link to a file outside never shows up.

A call with a `glob` checks `.gitignore` files everywhere too: in rg a
matching `--glob` override wins over .gitignore, so `glob='*.py'` would
otherwise bring back git-ignored Python files.
"""

from __future__ import annotations

import os
import stat

import pathspec

from lantern.workspace.ignore import matches
from lantern.workspace.roots import Target, Workspace

_Specs = dict[tuple[str, ...], pathspec.GitIgnoreSpec]


class ResultFilter:
    """Per-call memo of ignore files; `allowed` answers for one result path."""

    def __init__(
        self, workspace: Workspace, target: Target, dir_fd: int, *, gitignore_inside: bool = False
    ) -> None:
        self.workspace = workspace
        self.gitignore_inside = gitignore_inside
        self.target = target
        self.dir_fd = dir_fd
        self._root_fd = target.root.open()
        self._specs: dict[tuple[str, tuple[str, ...]], pathspec.GitIgnoreSpec | None] = {}

    def close(self) -> None:
        os.close(self._root_fd)

    def _load(self, kind: str, folders: list[tuple[str, ...]]) -> _Specs:
        found: _Specs = {}
        for folder in folders:
            key = (kind, folder)
            if key not in self._specs:
                self._specs[key] = self.target.root.ignore.specs(self._root_fd, [folder], kind).get(
                    folder
                )
            spec = self._specs[key]
            if spec is not None:
                found[folder] = spec
        return found

    def allowed(self, rel: str) -> os.stat_result | None:
        """The file's lstat when `rel` (relative to the target folder) may be shown."""
        parts = self.target.parts + tuple(rel.split("/"))
        if self.workspace.policy.refusal(parts) is not None:
            return None
        every = [parts[:depth] for depth in range(len(parts))]
        above = every if self.gitignore_inside else every[: len(self.target.parts)]
        if matches(self._load(".gitignore", above), parts, is_dir=False):
            return None
        if matches(self._load(".lanternignore", every), parts, is_dir=False):
            return None
        try:
            st = os.stat(rel, dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            return None
        return st
