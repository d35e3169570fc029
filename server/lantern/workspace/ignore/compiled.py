"""One ignore file compiled for fast, exact, one-level-at-a-time checks.

Patterns are parsed by `patterns.parse_line` (git's rules) and then sorted into
lookup tables, so a check costs a few dict lookups instead of one match per
pattern: a 50,000-line `.gitignore` costs about as much per path as a short one.
When no pattern of a file looks at folders, a verdict depends on the name alone and
is remembered by name (the compiled rules never change; a changed file is re-parsed).

A check answers for one path at one level only (`src/gen/` as a folder, then
`src/gen/x.py` as a file); the caller walks the levels top-down, so a folder
that is excluded takes its contents with it, as in git. The answer is the
verdict of the last pattern that matches (True: ignored, False: re-included by
`!`), or None when no pattern matches.

Names are compared as the root compares them (`workspace/names.py`): the
patterns are parsed folded where the root's file system folds case (git's
`core.ignorecase`), and each name checked is folded the same way, so `APP.LOG`
is ignored by `*.log` wherever it is the same file; a second check in the alias
form (`aliases=True`) catches `app.log.` and `app.log:x`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from lantern.workspace.ignore.patterns import PathGlob, Pattern, parse_line
from lantern.workspace.names import EXACT, Names

_PLAIN = re.compile(r"(!?)(\*\.|)([A-Za-z0-9._\-+@=,~%/]+?)(\*?)")
_MAX_REMEMBERED = 1 << 16  # verdicts by name kept per ignore file

# (index, include, dir_only)
_Entry = tuple[int, bool, bool]
# (index, include, matcher)
_GlobEntry = tuple[int, bool, PathGlob]


@dataclass
class CompiledRules:
    """The patterns of one ignore file, in lookup tables."""

    lines: tuple[str, ...]  # the pattern lines, BOM and blank lines removed
    names: Names = EXACT  # how the root compares names; `lines` are in its form
    _names: dict[str, list[_Entry]] = field(default_factory=dict)  # literal base names
    _suffixes: dict[str, list[_Entry]] = field(default_factory=dict)  # `*.ext`
    _suffix_lengths: set[int] = field(default_factory=set)
    _prefixes: dict[str, list[_Entry]] = field(default_factory=dict)  # `cache*`
    _prefix_lengths: set[int] = field(default_factory=set)
    _paths: dict[str, list[_Entry]] = field(default_factory=dict)  # literal anchored paths
    _by_folder: dict[str, list[_GlobEntry]] = field(default_factory=dict)  # `dir/sub/*.tmp`
    _floating: dict[str, list[_GlobEntry]] = field(default_factory=dict)  # `**/dir/x?.md`
    _base_globs: list[_GlobEntry] = field(default_factory=list)
    _path_globs: list[_GlobEntry] = field(default_factory=list)
    # Verdicts by base name, when no pattern looks at the folders (the rules never change).
    _by_name: dict[tuple[str, bool, bool], bool | None] | None = None

    @classmethod
    def parse(cls, text: str, names: Names = EXACT) -> CompiledRules:
        text = names.pattern(text.removeprefix("\ufeff"))
        lines = tuple(line for line in text.splitlines() if line.strip())
        rules = cls(lines, names)
        for index, line in enumerate(lines):
            if rules._add_plain(index, line):
                continue
            pattern = parse_line(line)
            if pattern is not None:  # None: a comment, or a line git skips
                rules._add(index, pattern)
        for table in (
            rules._by_folder.values(),
            rules._floating.values(),
            [rules._base_globs, rules._path_globs],
        ):
            for entries in table:
                entries.sort(key=lambda e: e[0])
        if not (rules._paths or rules._by_folder or rules._floating or rules._path_globs):
            rules._by_name = {}
        return rules

    def _add_plain(self, index: int, line: str) -> bool:
        """The common lines (`name`, `dir/`, `/a/b`, `*.ext`, `prefix*`) without the glob
        parser: a big generated ignore file is mostly these, and parsing is the slow part."""
        found = _PLAIN.fullmatch(line)
        if found is None:
            return False
        bang, star_dot, body, star = found.groups()
        include = not bang
        dir_only = body.endswith("/")
        body = body.rstrip("/")
        if not body or "//" in body or (star_dot and star) or (star and dir_only):
            return False
        anchored = "/" in body
        body = body.lstrip("/")
        if anchored:
            if star_dot or star or not body or any(p in ("", ".", "..") for p in body.split("/")):
                return False
            self._paths.setdefault(body, []).append((index, include, dir_only))
        elif star_dot:
            ext = "." + body
            self._suffixes.setdefault(ext, []).append((index, include, dir_only))
            self._suffix_lengths.add(len(ext))
        elif star:
            self._prefixes.setdefault(body, []).append((index, include, dir_only))
            self._prefix_lengths.add(len(body))
        elif body in (".", ".."):
            return False
        else:
            self._names.setdefault(body, []).append((index, include, dir_only))
        return True

    def _add(self, index: int, pattern: Pattern) -> None:
        """Sort a pattern into the table that finds it with the fewest checks."""
        entry = (index, pattern.ignores, pattern.end == "dir")
        glob = PathGlob(pattern)
        groups, inside = pattern.groups, pattern.end == "inside"
        if not groups:  # `**`, `**/`: every path, every folder
            self._base_globs.append((index, pattern.ignores, glob))
            return
        if not pattern.anchored and len(groups) == 1 and len(groups[0]) == 1 and not inside:
            name = groups[0][0]  # a name at any depth
            if name.literal is not None:
                self._names.setdefault(name.literal, []).append(entry)
            elif name.suffix is not None:
                self._suffixes.setdefault(name.suffix, []).append(entry)
                self._suffix_lengths.add(len(name.suffix))
            elif name.prefix is not None:
                self._prefixes.setdefault(name.prefix, []).append(entry)
                self._prefix_lengths.add(len(name.prefix))
            else:
                self._base_globs.append((index, pattern.ignores, glob))
            return
        first = groups[0]
        if not pattern.anchored:  # `**/dir/x?.md`: found by the folder name it starts with
            if first[0].literal is not None:
                self._floating.setdefault(first[0].literal, []).append(
                    (index, pattern.ignores, glob)
                )
            else:
                self._path_globs.append((index, pattern.ignores, glob))
            return
        # The literal folders an anchored pattern starts with (`sub/dir/` of `sub/dir/*.tmp`).
        folders = first if inside or len(groups) > 1 else first[:-1]
        literal: list[str] = []
        for name in folders:
            if name.literal is None:
                break
            literal.append(name.literal)
        last = first[-1].literal
        if len(groups) == 1 and not inside and len(literal) == len(first) - 1 and last is not None:
            self._paths.setdefault("/".join([*literal, last]), []).append(entry)  # `/a/b`, `a/b/`
            return
        if literal:
            folder = "/".join(literal) + "/"
            self._by_folder.setdefault(folder, []).append((index, pattern.ignores, glob))
        else:
            self._path_globs.append((index, pattern.ignores, glob))

    def verdict(self, parts: tuple[str, ...], is_dir: bool, aliases: bool = False) -> bool | None:
        """True (ignored), False (re-included) or None, for `parts` relative to the file."""
        return self.verdict_in(parts[:-1], parts[-1], is_dir, aliases)

    @property
    def names_only(self) -> bool:
        """Whether every pattern looks at the name alone (then `verdict_in` ignores `folder`)."""
        return self._by_name is not None

    def verdict_in(
        self, folder: tuple[str, ...], name: str, is_dir: bool, aliases: bool = False
    ) -> bool | None:
        """`verdict(folder + (name,))`, without building the path when only names count.

        Names are compared in the root's `Names.exact` form, or with `aliases` in its
        `Names.key` form (as Windows looks a name up); a caller refuses a path when
        either form is ignored (`ignore.decide`)."""
        form = self.names.key if aliases else self.names.exact
        if self._by_name is None:
            return self._verdict((*map(form, folder), form(name)), is_dir)
        remembered = (name, is_dir, aliases)  # only the name counts: remember it
        try:
            return self._by_name[remembered]
        except KeyError:
            pass
        if len(self._by_name) >= _MAX_REMEMBERED:
            self._by_name.clear()
        found = self._by_name[remembered] = self._verdict((form(name),), is_dir)
        return found

    def _verdict(self, parts: tuple[str, ...], is_dir: bool) -> bool | None:
        best, include = self.last_match(parts, is_dir)
        return include if best >= 0 else None

    def last_match(self, parts: tuple[str, ...], is_dir: bool) -> tuple[int, bool]:
        """The index of the last pattern that matches `parts` (in the form the patterns
        were parsed in) and whether it ignores; (-1, False) when none does."""
        name = parts[-1]
        best, include = -1, False
        for index, inc, dir_only in self._literal_entries(parts):
            if index > best and (is_dir or not dir_only):
                best, include = index, inc
        if self._base_globs:
            match_name = name + "/" if is_dir else name
            best, include = _scan(self._base_globs, match_name, best, include)
        if self._by_folder or self._path_globs or self._floating:
            best, include = self._path_verdict(parts, is_dir, best, include)
        return best, include

    def _literal_entries(self, parts: tuple[str, ...]) -> list[_Entry]:
        """The rules found by looking `parts` up: by name, suffix, prefix and whole path."""
        name = parts[-1]
        entries: list[_Entry] = list(self._names.get(name, ()))
        for length in self._suffix_lengths:
            if length <= len(name):
                entries += self._suffixes.get(name[len(name) - length :], ())
        for length in self._prefix_lengths:
            if length <= len(name):
                entries += self._prefixes.get(name[:length], ())
        if self._paths:
            entries += self._paths.get("/".join(parts), ())
        return entries

    def _path_verdict(
        self, parts: tuple[str, ...], is_dir: bool, best: int, include: bool
    ) -> tuple[int, bool]:
        """`_verdict`'s rules that match the whole relative path, after `best`."""
        rel = "/".join(parts)
        match_rel = rel + "/" if is_dir else rel
        present = set(parts)  # lets _scan skip rules naming a folder not in the path
        if self._floating:
            for part in set(parts[:-1]):
                found = self._floating.get(part)
                if found:
                    best, include = _scan(found, match_rel, best, include, present)
        if self._by_folder:
            for cut in _slashes(rel):
                found = self._by_folder.get(rel[: cut + 1])
                if found:
                    best, include = _scan(found, match_rel, best, include)
        best, include = _scan(self._path_globs, match_rel, best, include, present)
        return best, include


def _slashes(text: str) -> Iterator[int]:
    cut = text.find("/")
    while cut >= 0:
        yield cut
        cut = text.find("/", cut + 1)


def _scan(
    entries: list[_GlobEntry],
    text: str,
    best: int,
    include: bool,
    present: set[str] | None = None,
) -> tuple[int, bool]:
    """The last regex entry after `best` that matches `text` (entries are sorted by index).
    `present`: the names in `text`, when known; an entry needing a name not there is skipped."""
    for index, inc, regex in reversed(entries):
        if index <= best:
            break
        if present is not None and not regex.needs <= present:
            continue
        if regex.match(text):
            return index, inc
    return best, include
