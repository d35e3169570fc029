""".gitignore and .lanternignore, evaluated the way git does, inside one root.

Both kinds of file are honoured in every folder of a root, whether or not the
root is a git repository. A path is ignored when either set of rules ignores
it or one of its parent folders (a `!` pattern cannot re-include a file whose
folder is excluded, as in git). `.lanternignore` negations only undo
`.lanternignore` patterns. Ignore files are read through the jail like any
other file: a linked or oversized ignore file is skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

import pathspec

from lantern.workspace.errors import ToolError
from lantern.workspace.jail import open_beneath

IGNORE_FILES = (".gitignore", ".lanternignore")
_MAX_IGNORE_BYTES = 1 << 20

_Key = tuple[int, int, int, int]  # dev, ino, size, mtime_ns


class IgnoreRules:
    """Lazily loaded ignore files of one root, re-read when they change."""

    def __init__(self) -> None:
        self._cache: dict[tuple[tuple[str, ...], str], tuple[_Key, pathspec.GitIgnoreSpec]] = {}

    def _spec(
        self, root_fd: int, folder: tuple[str, ...], name: str
    ) -> pathspec.GitIgnoreSpec | None:
        try:
            fd = open_beneath(root_fd, (*folder, name), name, directory=False)
        except ToolError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_IGNORE_BYTES:
                return None
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            cached = self._cache.get((folder, name))
            if cached is not None and cached[0] == key:
                return cached[1]
            data = os.read(fd, _MAX_IGNORE_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        spec = pathspec.GitIgnoreSpec.from_lines(data.decode("utf-8", "replace").splitlines())
        self._cache[(folder, name)] = (key, spec)
        return spec

    def specs(
        self, root_fd: int, folders: Iterable[tuple[str, ...]], kind: str
    ) -> dict[tuple[str, ...], pathspec.GitIgnoreSpec]:
        """The `kind` ignore files found in `folders`, keyed by folder."""
        found = {}
        for folder in folders:
            spec = self._spec(root_fd, folder, kind)
            if spec is not None:
                found[folder] = spec
        return found

    def ignored(self, root_fd: int, components: Sequence[str], *, is_dir: bool) -> str | None:
        """The ignore file name that excludes `components`, or None."""
        parts = tuple(components)
        folders = [parts[:depth] for depth in range(len(parts))]
        for kind in IGNORE_FILES:
            if matches(self.specs(root_fd, folders, kind), parts, is_dir=is_dir):
                return kind
        return None


def matches(
    specs: dict[tuple[str, ...], pathspec.GitIgnoreSpec], parts: tuple[str, ...], *, is_dir: bool
) -> bool:
    """Whether `parts` or one of its folders is excluded by `specs` (folder -> rules)."""
    if not specs:
        return False
    for end in range(1, len(parts) + 1):
        target_is_dir = is_dir or end < len(parts)
        verdict: bool | None = None
        for depth in range(end):
            spec = specs.get(parts[:depth])
            if spec is None:
                continue
            rel = "/".join(parts[depth:end]) + ("/" if target_is_dir else "")
            result = spec.check_file(rel).include
            if result is not None:
                verdict = result
        if verdict:
            return True
    return False
