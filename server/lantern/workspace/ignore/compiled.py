"""One ignore file compiled for fast, exact, one-level-at-a-time checks.

Patterns are parsed by `patterns.parse_line` (git's rules) and then sorted into
lookup tables, so a check costs a few dict lookups instead of one match per
pattern: a 50,000-line `.gitignore` costs about as much per path as a short one.
When no pattern of a file looks at folders, a verdict depends on the name alone and
is remembered by name (the compiled rules never change; a changed file is re-parsed).
For the files of one folder (a listing), `files_in` narrows the patterns that look at
folders to that folder once: each then matches every file there, none, or the files
whose name fits its last glob; what the name alone decides is remembered by name.

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

from lantern.workspace.ignore.patterns import NameGlob, PathGlob, Pattern, parse_line
from lantern.workspace.names import EXACT, Names

_PLAIN = re.compile(r"(!?)(\*\.|)([A-Za-z0-9._\-+@=,~%/]+?)(\*?)")
_MAX_REMEMBERED = 1 << 16  # verdicts by name kept per ignore file
_NO_MATCH = (-1, False)

# (index, include, dir_only)
_Entry = tuple[int, bool, bool]
# (index, include, matcher)
_GlobEntry = tuple[int, bool, PathGlob]
# (index, include, what a file's name must match)
_NameEntry = tuple[int, bool, NameGlob]
# (index, include, dir_only, what a name must match: None for any name)
_BaseEntry = tuple[int, bool, bool, NameGlob | None]


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
    _base_globs: list[_BaseEntry] = field(default_factory=list)  # a name glob, `**`, `**/`
    _path_globs: list[_GlobEntry] = field(default_factory=list)
    # Verdicts by base name, when no pattern looks at the folders (the rules never change).
    _by_name: dict[tuple[str, bool, bool], bool | None] | None = None
    # What the name alone decides, by name in the patterns' form (`name_match`).
    _file_names: dict[str, tuple[int, bool]] = field(default_factory=dict)
    _dir_names: dict[str, tuple[int, bool]] = field(default_factory=dict)
    _paths_by_folder: dict[str, dict[str, list[tuple[int, bool]]]] | None = None  # `_paths_below`
    _path_globs_by_depth: dict[int | None, list[_GlobEntry]] | None = None  # `_folder_globs`
    _any_folder: FilesIn | None = None  # `files_in` where only names count
    # Verdicts for folders by path, when some pattern looks at the folders.
    _dir_paths: dict[tuple[tuple[str, ...], str, bool], bool | None] = field(default_factory=dict)
    _files_in: dict[tuple[str, ...], FilesIn] = field(default_factory=dict)  # by folder

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
            [rules._path_globs],
        ):
            for entries in table:
                entries.sort(key=lambda e: e[0])
        rules._base_globs.sort(key=lambda e: e[0])
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
            self._base_globs.append((index, pattern.ignores, pattern.end == "dir", None))
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
                self._base_globs.append((index, pattern.ignores, pattern.end == "dir", name))
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
            if not is_dir:
                return self._verdict((*map(form, folder), form(name)), is_dir)
            path = (folder, name, aliases)  # a folder: remembered by path (a walk's step)
            try:
                return self._dir_paths[path]
            except KeyError:
                pass
            if len(self._dir_paths) >= _MAX_REMEMBERED:
                self._dir_paths.clear()
            found = self._dir_paths[path] = self._verdict((*map(form, folder), form(name)), True)
            return found
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
        best, include = self.name_match(parts[-1], is_dir)
        if self._paths:
            for index, inc, dir_only in self._paths.get("/".join(parts), ()):
                if index > best and (is_dir or not dir_only):
                    best, include = index, inc
        if self._by_folder or self._path_globs or self._floating:
            best, include = self._path_verdict(parts, is_dir, best, include)
        return best, include

    def name_match(self, name: str, is_dir: bool) -> tuple[int, bool]:
        """`last_match` as far as the rules that look at the name alone decide (all but
        the anchored paths and the globs over folders), for `name` in the patterns' form.
        Remembered by name (the rules never change)."""
        remembered = self._dir_names if is_dir else self._file_names
        try:
            return remembered[name]
        except KeyError:
            pass
        best, include = -1, False
        for index, inc, dir_only in self._name_entries(name):
            if index > best and (is_dir or not dir_only):
                best, include = index, inc
        if self._base_globs:
            best, include = _scan_names(self._base_globs, name, is_dir, best, include)
        if len(remembered) >= _MAX_REMEMBERED:
            remembered.clear()
        found = remembered[name] = (best, include) if best >= 0 else _NO_MATCH
        return found

    def _name_entries(self, name: str) -> list[_Entry]:
        """The rules found by looking a name up: by name, suffix and prefix."""
        entries: list[_Entry] = list(self._names.get(name, ()))
        for length in self._suffix_lengths:
            if length <= len(name):
                entries += self._suffixes.get(name[len(name) - length :], ())
        for length in self._prefix_lengths:
            if length <= len(name):
                entries += self._prefixes.get(name[:length], ())
        return entries

    def files_in(self, folder: tuple[str, ...]) -> FilesIn:
        """`verdict_in(folder, name, False)` for the files of `folder` (relative to the
        ignore file), with what depends on the folder worked out here, once."""
        if self._by_name is not None:  # only names count: the same in every folder
            return self._names_alone()
        try:
            return self._files_in[folder]
        except KeyError:
            pass
        if len(self._files_in) >= _MAX_REMEMBERED:
            self._files_in.clear()
        found = self._files_in[folder] = self._narrow(folder)
        return found

    def _narrow(self, folder: tuple[str, ...]) -> FilesIn:
        """`files_in`, worked out (the rules never change: remembered by folder)."""
        names = self.names
        comps = [names.exact(part) for part in folder] if names.folds or names.nfc else [*folder]
        fixed = _NO_MATCH
        by_name: list[_NameEntry] = []
        for index, include, glob in self._folder_globs(comps):
            found = glob.in_folder(comps)
            if found is True:
                if index > fixed[0]:
                    fixed = (index, include)
            elif found is not False:
                by_name.append((index, include, found))
        paths = self._paths_below().get("/".join(comps)) if self._paths else None
        if fixed is _NO_MATCH and not by_name and not paths:  # only names count here
            return self._names_alone()
        by_name = sorted((e for e in by_name if e[0] > fixed[0]), key=lambda e: -e[0])
        return FilesIn(self, fixed, paths or {}, by_name)

    def _names_alone(self) -> FilesIn:
        """`files_in` of a folder where no rule that looks at folders can match a file."""
        if self._any_folder is None:
            self._any_folder = FilesIn(self, _NO_MATCH, {}, [])
        return self._any_folder

    def _folder_globs(self, comps: list[str]) -> Iterator[_GlobEntry]:
        """The glob rules that may match a path in the folder `comps` (`_path_verdict`'s)."""
        if self._floating:
            for part in set(comps):
                yield from self._floating.get(part, ())
        if self._by_folder:
            for depth in range(1, len(comps) + 1):
                yield from self._by_folder.get("/".join(comps[:depth]) + "/", ())
        if self._path_globs:
            if self._path_globs_by_depth is None:
                by_depth: dict[int | None, list[_GlobEntry]] = {}
                for entry in self._path_globs:
                    by_depth.setdefault(entry[2].depth, []).append(entry)
                self._path_globs_by_depth = by_depth
            yield from self._path_globs_by_depth.get(None, ())
            yield from self._path_globs_by_depth.get(len(comps) + 1, ())  # a file's depth

    def _paths_below(self) -> dict[str, dict[str, list[tuple[int, bool]]]]:
        """The literal anchored paths that a file may match (not `dir/`-only), by folder
        (`a/b` for `/a/b/c`) and then name."""
        if self._paths_by_folder is None:
            table: dict[str, dict[str, list[tuple[int, bool]]]] = {}
            for path, entries in self._paths.items():
                folder, _, name = path.rpartition("/")
                for index, include, dir_only in entries:
                    if not dir_only:
                        table.setdefault(folder, {}).setdefault(name, []).append((index, include))
            self._paths_by_folder = table
        return self._paths_by_folder

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


class FilesIn:
    """`CompiledRules.verdict_in(folder, name, False)` for the files of one folder, built
    by `CompiledRules.files_in`: the rules that look at the folder are narrowed to it once
    (matching every file, none, or those whose name fits a glob), so a file costs the
    name-only lookups (remembered by name) and the few globs left for this folder."""

    __slots__ = ("_by_name", "_fixed", "_form", "_paths", "_rules")

    def __init__(
        self,
        rules: CompiledRules,
        fixed: tuple[int, bool],
        paths: dict[str, list[tuple[int, bool]]],
        by_name: list[_NameEntry],
    ) -> None:
        self._rules = rules
        names = rules.names
        self._form = names.exact if names.folds or names.nfc else None
        self._fixed = fixed  # the last rule that matches every file here, or (-1, False)
        self._paths = paths  # literal anchored paths in this folder, by name
        self._by_name = by_name  # later than `fixed`, last first

    @property
    def rules(self) -> CompiledRules | None:
        """The ignore file, when only the name decides here (no rule that looks at folders
        can match a file of this folder): then `verdict(name)` is a function of the rules
        and `name` alone, the same in every such folder."""
        if self._fixed is _NO_MATCH and not self._paths and not self._by_name:
            return self._rules
        return None

    def verdict(self, name: str) -> bool | None:
        """True (ignored), False (re-included) or None, for the file `name` here."""
        if self._form is not None:
            name = self._form(name)
        best, include = self._rules.name_match(name, False)
        if self._fixed[0] > best:
            best, include = self._fixed
        for index, inc in self._paths.get(name, ()):
            if index > best:
                best, include = index, inc
        for index, inc, glob in self._by_name:
            if index <= best:
                break
            if glob.match(name):
                best, include = index, inc
                break
        return include if best >= 0 else None


def _slashes(text: str) -> Iterator[int]:
    cut = text.find("/")
    while cut >= 0:
        yield cut
        cut = text.find("/", cut + 1)


def _scan_names(
    entries: list[_BaseEntry], name: str, is_dir: bool, best: int, include: bool
) -> tuple[int, bool]:
    """`_scan` for rules that look at a name alone (`PathGlob.match` of such a rule is its
    name glob's match, or every name, of a folder only when `dir_only`)."""
    for index, inc, dir_only, glob in reversed(entries):
        if index <= best:
            break
        if (is_dir or not dir_only) and (glob is None or glob.match(name)):
            return index, inc
    return best, include


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
