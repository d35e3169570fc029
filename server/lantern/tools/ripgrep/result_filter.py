"""The exact check on every path that list_files or search is about to show.

ripgrep reads no ignore file and may be handed only some rules, so this check
is the authority: the denylist and deny globs on the real name ripgrep
reported, every `.gitignore` and `.lanternignore` from the root down (of
enclosing workspace roots too), and then the file itself, opened beneath the
root with no link followed and checked to be a regular file with one link.
A path swapped for a link after ripgrep saw it fails that open and is dropped.
Each folder is checked once per call (its names, its ignore files); a file in it then
costs only the checks of its own name, with the same rules and the same answers. What
the rules alone decide is remembered across calls: a folder's `FolderCheck`, reused only
when this call's walk found the very same ignore files for it, and the answers by name
under the same ignore files; the walk itself (ignore files opened through the jail) and
the file checks are done afresh by every call.

Runs in a worker thread (it is CPU and syscall work); one instance per call.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from itertools import compress
from typing import Literal

from lantern.errors import ToolError
from lantern.escaping import escape_line
from lantern.tools.ripgrep.process import ignore_file as ripgrep_ignore_flags
from lantern.workspace.ignore.compiled import CompiledRules, FilesIn
from lantern.workspace.ignore.files import (
    IGNORE_FILES,
    Chain,
    IgnoreWalk,
    NeedsWorker,
    inline_only,
)
from lantern.workspace.jail import open_beneath, real_components
from lantern.workspace.names import has_alias
from lantern.workspace.policy import Policy, pair_folder, sensitive_component, sensitive_pair
from lantern.workspace.roots import Opened, Root, Target, Workspace

_Kinds = tuple[list[tuple[CompiledRules, tuple[str, ...]]], ...]
# Controls, line separators, bidi embeddings/overrides/isolates (which reorder what a
# reader sees: `bidi\u202eexe.txt`), backslashes, undecodable bytes.
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]|[\ud800-\udfff]"
)


def display(name: str) -> str:
    """A workspace name as shown to the model: control characters, line separators,
    bidi controls, backslashes and undecodable bytes escaped, so a name cannot start a
    new line or reorder the text around it."""

    def escape(match: re.Match[str]) -> str:
        ch = match.group()
        if ch == "\\":
            return "\\\\"
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
            return f"\\x{code - 0xDC00:02x}"
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSAFE.sub(escape, name)


async def open_targets(
    workspace: Workspace, targets: list[Target], expect: Literal["dir", "any"]
) -> tuple[list[Opened], list[str]]:
    """Open every target; with several (every root of the workspace), a root that is not
    served (an unreadable ignore file, no permission) is skipped with a note, unless
    all of them are."""
    opened: list[Opened] = []
    notes: list[str] = []
    first: ToolError | None = None
    try:
        for target in targets:
            try:
                opened.append(await workspace.open_checked_async(target, expect))
            except ToolError as exc:
                if len(targets) == 1 or exc.code not in ("ignored_path", "permission_denied"):
                    raise
                first = first or exc
                notes.append(f"[not served: {escape_line(exc.message)}]")  # names a root
    except BaseException:
        for handle in opened:
            handle.close()
        raise
    if not opened and first is not None:
        raise first
    return opened, notes


async def prepare(
    workspace: Workspace, target: Target, feed_rg: bool
) -> tuple[ResultFilter, list[str]]:
    """A result filter for `target` and rg's `--ignore-file` flags (the target folder's
    own rules, read by Lantern). Built right on the event loop when that is cheap (a
    short path, ignore files small or already parsed), else in a worker thread."""

    def build() -> tuple[ResultFilter, list[str]]:
        check = ResultFilter(workspace, target)
        try:
            fold = target.root.names.folds
            return check, ripgrep_ignore_flags(check.fed_rules(), fold=fold) if feed_rg else []
        except BaseException:
            check.close()
            raise

    if len(target.parts) <= 32:
        try:
            with inline_only():
                return build()
        except NeedsWorker:
            pass
    return await asyncio.to_thread(build)


def _ignored(kinds: _Kinds, name: str, *, aliases: bool) -> bool:
    """As `ignore.decide` for one form of the file `name`: per kind of ignore file, the
    deepest file with a verdict decides."""
    for rules_of_kind in kinds:
        for compiled, below in rules_of_kind:
            verdict = compiled.verdict_in(below, name, False, aliases)
            if verdict is not None:
                if verdict:
                    return True
                break
    return False


def _ignored_files(views: tuple[list[FilesIn], ...], name: str) -> bool:
    """`_ignored(kinds, name, aliases=False)` with each ignore file narrowed to the folder."""
    for of_kind in views:
        for files in of_kind:
            verdict = files.verdict(name)
            if verdict is not None:
                if verdict:
                    return True
                break
    return False


_MAX_MEMOS = 1 << 12  # chains of ignore files whose answers by name are remembered
_MAX_MEMO_NAMES = 1 << 18  # names remembered, all chains together
# Answers by name for the files of folders where only names decide (`FolderCheck._memo`),
# by the chain of ignore files: (the rules, kept so that their ids stay theirs; answers).
_MEMOS: dict[tuple[int, ...], tuple[tuple[CompiledRules, ...], dict[str, bool]]] = {}


def _names_memo(views: tuple[list[FilesIn], ...]) -> dict[str, bool] | None:
    """The remembered answers for a folder whose ignore files decide by name alone (the
    same rules in the same order give the same answer to a name, in any folder, and the
    compiled rules never change), or None when some rule here looks at the folder."""
    chain: list[CompiledRules] = []
    key: list[int] = []
    for of_kind in views:
        for files in of_kind:
            rules = files.rules
            if rules is None:
                return None
            chain.append(rules)
            key.append(id(rules))
        key.append(-1)  # where one kind of ignore file ends
    found = _MEMOS.get(tuple(key))
    if found is None:
        if len(_MEMOS) >= _MAX_MEMOS or sum(len(memo) for _, memo in _MEMOS.values()) >= (
            _MAX_MEMO_NAMES
        ):
            _MEMOS.clear()
            _CHECKS.clear()  # nothing keeps a memo that is no longer counted
        found = _MEMOS[tuple(key)] = (tuple(chain), {})
    return found[1]


class FolderCheck:
    """What decides for the files of one folder (`ResultFilter.folder_rules`): for each
    root whose rules apply, the root, the folder's full path, and for each kind of
    ignore file (in `IGNORE_FILES` order) the files that apply, deepest first, each with
    the folder's path below it. The folder's part of every check is done here, once; a
    file then costs only the checks of its own name, with the same rules and answers."""

    def __init__(self, chains: list[tuple[Root, tuple[str, ...], _Kinds]]) -> None:
        self._checks = [
            (
                root.policy,
                full,
                kinds,
                tuple(
                    [compiled.files_in(below) for compiled, below in of_kind] for of_kind in kinds
                ),
                full[-1] if full and pair_folder(full[-1]) else None,  # see `pair_folder`
                any(map(has_alias, full)),
            )
            for root, full, kinds in chains
        ]
        self._memo: dict[str, bool] | None = None  # answers by name, when names alone decide
        if len(self._checks) == 1:
            policy, _, _, views, pairs_with, folder_alias = self._checks[0]
            if not policy.deny_globs and pairs_with is None and not folder_alias:
                self._memo = _names_memo(views)

    def allows(self, name: str) -> bool:
        """Whether the file `name` in this folder may be shown (`ResultFilter.allowed_in`)."""
        for policy, full, kinds, views, pairs_with, folder_alias in self._checks:
            if policy.deny_globs:
                if policy.child_refusal(full, name) is not None:
                    return False
            elif sensitive_component(name) or (
                pairs_with is not None and sensitive_pair(pairs_with, name)
            ):
                return False
            if _ignored_files(views, name):
                return False
            if (folder_alias or has_alias(name)) and _ignored(kinds, name, aliases=True):
                return False
        return True

    def allowed(self, names: list[str]) -> list[int]:
        """Which of `names` (their indexes), files in this folder, `allows`."""
        memo = self._memo
        if memo is not None:  # `allows`, remembered by name (a name with an alias aside)
            oks = list(map(memo.get, names))
            if None in oks:
                for i, name in enumerate(names):
                    if oks[i] is None:
                        ok = oks[i] = self.allows(name)
                        if not has_alias(name) and len(memo) < _MAX_MEMO_NAMES:
                            memo[name] = ok  # (the alias form's check may look at the folder)
            return list(compress(range(len(names)), oks))
        if len(self._checks) == 1:
            policy, _, kinds, views, pairs_with, folder_alias = self._checks[0]
            if not policy.deny_globs and pairs_with is None and not folder_alias:
                return [  # `allows`, in one loop, for what only a name decides
                    i
                    for i, name in enumerate(names)
                    if not sensitive_component(name)
                    and not _ignored_files(views, name)
                    and not (has_alias(name) and _ignored(kinds, name, aliases=True))
                ]
        allows = self.allows
        return [i for i, name in enumerate(names) if allows(name)]


FolderRules = FolderCheck | None  # see ResultFilter.folder_rules
_MAX_CHECKS = 1 << 15
# A folder's FolderCheck by its policy and path, with the ignore files it was built from:
# the same policy, path and ignore files (the very same compiled rules) give the same
# check, so a later call reuses it once its own walk has found the same ignore files.
_CHECKS: dict[tuple[int, tuple[str, ...]], tuple[Policy, Chain, FolderCheck]] = {}


def _kinds(full: tuple[str, ...], chain: Chain) -> _Kinds:
    """For each kind of ignore file, the files of `chain` (deepest first), each with the
    folder's path below it."""
    return tuple(
        [(rules, full[depth:]) for depth, k, rules in reversed(chain) if k == kind]
        for kind in IGNORE_FILES
    )


def _same_files(known: Chain, chain: Chain) -> bool:
    """Whether two chains hold the same ignore files (the same compiled rules, by identity)."""
    return known is chain or (len(known) == len(chain) and all(map(_same_file, known, chain)))


def _same_file(a: tuple[int, str, CompiledRules], b: tuple[int, str, CompiledRules]) -> bool:
    return a[2] is b[2] and a[0] == b[0] and a[1] == b[1]


def split_rel(name: str) -> tuple[str, ...]:
    """Components of a path ripgrep reported relative to its working folder."""
    name = name.removeprefix("./")
    parts = tuple(name.split("/"))
    if "" in parts or "." in parts:
        return tuple(part for part in parts if part not in ("", "."))
    return parts


class ResultFilter:
    """Name rules, ignore rules and the jail for results under one target folder."""

    def __init__(self, workspace: Workspace, target: Target) -> None:
        self.workspace = workspace
        self.target = target
        self._walks: list[tuple[Root, tuple[str, ...], int, IgnoreWalk]] = []
        self._folder: tuple[tuple[str, ...], int] | None = None
        self._folders: dict[tuple[str, ...], FolderRules] = {}
        try:
            for root, prefix in [(target.root, ()), *workspace.enclosing(target.root)]:
                fd = root.open()
                walk = IgnoreWalk(root.ignore, fd)
                walk.hold_folders()
                self._walks.append((root, prefix, fd, walk))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._close_folder()
        for _, _, fd, walk in self._walks:
            walk.close()
            os.close(fd)
        self._walks = []

    def fed_rules(self) -> list[str]:
        """The target folder's own ignore rules, for rg to prune with (never trusted)."""
        _, _, _, walk = self._walks[0]
        depth = len(self.target.parts)
        return [
            line
            for at, _, rules in walk.level(self.target.parts).chain
            if at == depth
            for line in rules.lines
        ]

    def name_allowed(self, rel: tuple[str, ...]) -> bool:
        """Whether the file `rel` (under the target folder) passes the name and ignore rules."""
        return bool(rel) and self.allowed_in(rel[:-1], rel[-1])

    def allowed_in(self, folder: tuple[str, ...], name: str) -> bool:
        """`name_allowed(folder + (name,))`, with the folder's part of the check done once
        per call: the same exact rules, but a file costs only its own name's checks."""
        return self.allowed_by(self.folder_rules(folder), name)

    def folder_rules(self, folder: tuple[str, ...]) -> FolderRules:
        """What applies to the files of `folder`, checked once per call; None when the
        folder itself is refused."""
        try:
            return self._folders[folder]
        except KeyError:
            found = self._folders[folder] = self._folder_rules(folder)
            return found

    def allowed_by(self, rules: FolderRules, name: str) -> bool:
        """Whether the file `name` in a folder with these `folder_rules` may be shown."""
        return rules is not None and rules.allows(name)

    def allowed_names(self, rules: FolderRules, names: list[str]) -> list[int]:
        """Which of `names` (their indexes), files all in one folder with these
        `folder_rules`, may be shown: `allowed_by` for each."""
        return [] if rules is None else rules.allowed(names)

    def _folder_rules(self, folder: tuple[str, ...]) -> FolderRules:
        """What applies to the files of `folder` (a `FolderCheck`); None when the folder
        itself is refused (a sensitive name, ignored, an unreadable ignore file on the way)."""
        parts = (*self.target.parts, *folder)
        levels: list[tuple[Root, tuple[str, ...], Chain]] = []
        for root, prefix, _fd, walk in self._walks:
            full = (*prefix, *parts)
            if root.policy.folder_sensitive(full):
                return None
            level = walk.level(full)
            if level.refusal is not None:
                return None
            levels.append((root, full, level.chain))
        if len(levels) > 1:
            return FolderCheck([(root, full, _kinds(full, chain)) for root, full, chain in levels])
        root, full, chain = levels[0]
        key = (id(root.policy), full)
        known = _CHECKS.get(key)
        if known is not None and known[0] is root.policy and _same_files(known[1], chain):
            return known[2]
        check = FolderCheck([(root, full, _kinds(full, chain))])
        if len(_CHECKS) >= _MAX_CHECKS:
            _CHECKS.clear()
        _CHECKS[key] = (root.policy, chain, check)
        return check

    def open_file(self, rel: tuple[str, ...]) -> tuple[int, os.stat_result] | None:
        """The file opened through the jail (caller closes), or None when it fails a check."""
        root, _, root_fd, _ = self._walks[0]
        parts = (*self.target.parts, *rel)
        try:
            fd = open_beneath(root_fd, parts, "", directory=False)
        except ToolError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                os.close(fd)
                return None
            real = real_components(fd, root.path, parts, root.names)
            if real is not None and root.policy.refusal(real) is not None:
                os.close(fd)
                return None
            return fd, st
        except (OSError, ToolError):
            os.close(fd)
            return None

    def stat_file(self, rel: tuple[str, ...]) -> os.stat_result | None:
        """The lstat of a listed file, taken in its folder opened through the jail.

        The folder handle is opened beneath the root with no link followed, and the
        name is looked up in it without following a link, so a folder swapped for a
        link cannot lead outside; the handle is reused for the next file in the folder.
        """
        folder = (*self.target.parts, *rel[:-1])
        if self._folder is None or self._folder[0] != folder:
            self._close_folder()
            _, _, root_fd, _ = self._walks[0]
            try:
                self._folder = (folder, open_beneath(root_fd, folder, "", directory=True))
            except ToolError:
                return None
        try:
            st = os.stat(rel[-1], dir_fd=self._folder[1], follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            return None
        return st

    def _close_folder(self) -> None:
        if self._folder is not None:
            os.close(self._folder[1])
            self._folder = None
