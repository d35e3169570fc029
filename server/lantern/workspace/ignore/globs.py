"""A list of gitignore-style globs (`approval.deny`, `approval.allow`) matched in linear time.

The settings' globs come from the user and from a repository's own settings file,
so a hostile repository may write `*a*a*a*a*a*a*a*a*b`: a backtracking translation
(pathspec's regexes) takes seconds on a 40-character name and grows as n^8. Here
the globs are parsed and matched by `patterns` and `compiled`, as `.gitignore` is,
in time linear in the path for each glob.

`match_file` follows git: the last glob that matches decides (`!glob` re-includes),
and a folder that matches takes everything inside it (a file inside a matched folder
cannot be re-included).
"""

from __future__ import annotations

from collections.abc import Iterable

from lantern.workspace.ignore.compiled import CompiledRules


class GlobList:
    """Globs, one per item; compare names in the form the caller gives (already folded
    where the root folds case)."""

    def __init__(self, globs: Iterable[str]) -> None:
        self._rules = CompiledRules.parse("\n".join(globs))

    def match_file(self, path: str) -> bool:
        """Whether `path` (relative, `/`-separated, a trailing `/` for a folder) matches."""
        is_dir = path.endswith("/")
        parts = tuple(part for part in path.split("/") if part)
        for depth in range(1, len(parts) + 1):
            folder = depth < len(parts) or is_dir
            if self._rules.verdict(parts[:depth], folder):
                return True
        return False
