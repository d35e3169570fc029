"""A list of gitignore-style globs (`approval.deny`, `approval.allow`) matched in linear time.

The settings' globs come from the user and from a repository's own settings file,
so a hostile repository may write `*a*a*a*a*a*a*a*a*b`: a backtracking translation
(pathspec's regexes) takes seconds on a 40-character name and grows as n^8. Here
the globs are parsed and matched by `patterns` and `compiled`, as `.gitignore` is,
in time linear in the path for each glob.

`match_file` reads a list two ways: git's (a folder that matches takes everything
inside it; else the last glob that matches the path itself decides) and the way
pathspec's `GitIgnoreSpec` did before (the last glob that matches the path or a
folder above it decides; `dir/**` also matches `dir/` itself). The two agree unless a
`!glob` re-includes something; where they differ, a deny list (`widest=True`) matches
when either reading does, an allow list only when both do.
"""

from __future__ import annotations

from collections.abc import Iterable

from lantern.workspace.ignore.compiled import CompiledRules


class GlobList:
    """Globs, one per item; compare names in the form the caller gives (already folded
    where the root folds case)."""

    def __init__(self, globs: Iterable[str], *, widest: bool) -> None:
        lines: list[str] = []
        for glob in globs:
            lines.append(glob)
            folder = _folder_of(glob)
            if folder is not None:
                lines.append(folder)
        self._rules = CompiledRules.parse("\n".join(lines))
        self._widest = widest

    def match_file(self, path: str) -> bool:
        """Whether `path` (relative, `/`-separated, a trailing `/` for a folder) matches."""
        is_dir = path.endswith("/")
        parts = tuple(part for part in path.split("/") if part)
        best, last = -1, False  # the last glob over all levels
        in_folder, own = False, False  # git: a folder above matched / the path's own verdict
        for depth in range(1, len(parts) + 1):
            index, ignores = self._rules.last_match(parts[:depth], depth < len(parts) or is_dir)
            if index > best:
                best, last = index, ignores
            if index >= 0 and depth < len(parts):
                in_folder = in_folder or ignores
            elif index >= 0:
                own = ignores
        git = in_folder or own
        return (git or last) if self._widest else (git and last)


def _folder_of(glob: str) -> str | None:
    """For `dir/**`, the glob of the folder `dir/` itself (anchored as `dir/**` is)."""
    text = glob.rstrip()
    bang = "!" if text.startswith("!") else ""
    stem = text.removeprefix("!").removesuffix("/**")
    if stem == text.removeprefix("!") or stem.strip("/") in ("", "**"):
        return None
    return f"{bang}{'' if '/' in stem else '/'}{stem}/"
