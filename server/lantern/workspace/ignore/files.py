""".gitignore and .lanternignore, evaluated the way git does, inside one root.

Both kinds of file are honoured in every folder of a root, whether or not the
root is a git repository. A path is ignored when either set of rules ignores
it or one of its parent folders (a `!` pattern cannot re-include a file whose
folder is excluded, as in git); deeper files win over shallower ones, and
`.lanternignore` negations only undo `.lanternignore` patterns. A UTF-8 BOM at
the start of an ignore file is skipped, as git does.

Ignore files are read by Lantern only, never by ripgrep, through the same
rules as any other file: opened beneath the root without following a link,
non-blocking, and only when it is a regular file with one link and at most
1 MiB. An ignore file that exists but fails those rules (a symbolic link, a
FIFO, a device, a hard link, too large, unreadable) fails CLOSED: the folder
holding it, and everything below, is refused with `ignored_path`, because the
files it was meant to hide cannot be told apart from the others. When the
system cannot open a folder or an ignore file at all (no descriptor left), the
path is refused as well, but as `io_error`: nothing was found wanting.

Checks walk a path top-down once, one folder at a time, and remember each
folder for the rest of the call (`IgnoreWalk`), so a check costs time linear
in the depth of the path, and a listing costs one step per distinct folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from lantern.errors import ToolError
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.jail import open_beneath
from lantern.workspace.names import EXACT, Names, has_alias

IGNORE_FILES = (".gitignore", ".lanternignore")
MAX_IGNORE_BYTES = 1 << 20
# getattr: native Windows lacks these, and must still import this module (lantern/platform_gate.py)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)
_Key = tuple[int, int, int, int, int]  # dev, ino, size, mtime_ns, ctime_ns
_SETTLED_NS = 2_000_000_000
_MAX_EMPTY = 100_000
_MAX_HELD = 64  # folder handles an IgnoreWalk keeps open at most


INLINE_PARSE_BYTES = 64 * 1024
_INLINE = threading.local()


class NeedsWorker(Exception):
    """A check started on the event loop met an ignore file too big to parse there."""


def inline_now() -> bool:
    """Whether this thread is inside `inline_only` (on the event loop, doing cheap work)."""
    return bool(getattr(_INLINE, "on", False))


@contextlib.contextmanager
def inline_only() -> Iterator[None]:
    """Within this block, parsing a large ignore file raises `NeedsWorker` instead."""
    _INLINE.on = True
    try:
        yield
    finally:
        _INLINE.on = False


@dataclass(frozen=True)
class Unreadable:
    """An ignore file that exists but cannot be trusted; its folder fails closed."""

    folder: tuple[str, ...]
    kind: str
    reason: str
    failed: bool = False  # no descriptor (or an I/O error) to look with: not a verdict


@dataclass(frozen=True)
class Refusal:
    """Why a path is not served: ignored by `kind`, or an unreadable ignore file above it."""

    kind: str
    unreadable: Unreadable | None = None
    denied: bool = False  # a folder on the way that Lantern may not open (permission_denied)

    @property
    def failed(self) -> bool:
        """Whether the check could not be made (`io_error`): no ignore file was found
        wanting, the system could not open what it needed to look (out of descriptors)."""
        return self.unreadable is not None and self.unreadable.failed

    def message(self, folder: str) -> str:
        """The refusal text; `folder` is the unreadable file's folder as the model writes it."""
        if self.unreadable is None:
            return f"is excluded by {self.kind}"
        u = self.unreadable
        if self.denied:
            return f"permission denied ({folder} cannot be opened)"
        if u.failed:
            where = folder if not u.kind else u.kind if folder == "." else f"{folder}/{u.kind}"
            return (
                f"could not be checked against the ignore files: {where} {u.reason}; "
                "nothing was served, try again"
            )
        if not u.kind:
            return f"is under {folder}, which {u.reason}; Lantern does not serve it"
        where = u.kind if folder == "." else f"{folder}/{u.kind}"
        return (
            f"is under {where}, which {u.reason}; Lantern does not follow or guess ignore "
            "files, so it serves none of the files that ignore file governs"
        )


#: The system had no descriptor left: says nothing about the file looked for.
_NO_DESCRIPTOR = frozenset({errno.EMFILE, errno.ENFILE})


def _unreadable_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symbolic link"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "cannot be read (permission denied)"
    if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
        return "is not a regular file"
    return f"cannot be read ({os.strerror(exc.errno or 0)})"


class IgnoreRules:
    """The compiled ignore files of one root, re-read when their identity or mtime changes.

    `names`: how the root compares names (folded where its file system folds case).
    """

    def __init__(self, names: Names = EXACT) -> None:
        self.names = names
        self._cache: dict[tuple[tuple[str, ...], str], tuple[_Key, CompiledRules]] = {}
        self._empty: dict[tuple[str, ...], tuple[int, int, int, int]] = {}

    @staticmethod
    def folder_key(dir_fd: int) -> tuple[int, int, int, int] | None:
        """A folder's identity and change times, when they are old enough to trust.

        Adding, removing or renaming an entry changes a folder's mtime; a folder
        changed in the last two seconds is not trusted (timestamps can be coarser
        than the time between two changes).
        """
        try:
            st = os.fstat(dir_fd)
        except OSError:
            return None
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _SETTLED_NS:
            return None
        return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)

    def known_empty(self, folder: tuple[str, ...], key: tuple[int, int, int, int]) -> bool:
        """Whether `folder` held no ignore file when last looked at, and has not changed."""
        return self._empty.get(folder) == key

    def remember_empty(self, folder: tuple[str, ...], key: tuple[int, int, int, int]) -> None:
        if len(self._empty) > _MAX_EMPTY:
            self._empty.clear()
        self._empty[folder] = key

    def load(
        self, dir_fd: int, folder: tuple[str, ...], kind: str
    ) -> CompiledRules | Unreadable | None:
        """The rules of `folder/kind` (`dir_fd` is that folder), or why they cannot be trusted."""
        try:
            fd = os.open(kind, _OPEN_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            failed = exc.errno in _NO_DESCRIPTOR
            return Unreadable(folder, kind, _unreadable_reason(exc), failed)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):  # git treats a folder of that name as no ignore file
                return None
            if not stat.S_ISREG(st.st_mode):
                return Unreadable(folder, kind, "is not a regular file")
            if st.st_nlink > 1:
                return Unreadable(folder, kind, "has more than one hard link")
            if st.st_size > MAX_IGNORE_BYTES:
                return Unreadable(folder, kind, "is larger than 1 MiB")
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            cached = self._cache.get((folder, kind))
            if cached is not None and cached[0] == key:
                return cached[1]
            if st.st_size > INLINE_PARSE_BYTES and inline_now():
                raise NeedsWorker
            data = _read_bounded(fd)
        except OSError as exc:
            return Unreadable(folder, kind, _unreadable_reason(exc))
        finally:
            os.close(fd)
        if data is None:
            return Unreadable(folder, kind, "is larger than 1 MiB")
        rules = CompiledRules.parse(data.decode("utf-8", "replace"), self.names)
        self._cache[(folder, kind)] = (key, rules)
        return rules


def _read_bounded(fd: int) -> bytes | None:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_IGNORE_BYTES:
            return None
        chunks.append(chunk)


Chain = tuple[tuple[int, str, CompiledRules], ...]  # (folder depth, kind, rules), top-down


@dataclass(frozen=True)
class _Level:
    refusal: Refusal | None  # this folder and all below are refused
    chain: Chain  # ignore files in this folder and above


def decide(chain: Chain, parts: tuple[str, ...], *, is_dir: bool) -> str | None:
    """The kind of ignore file that ignores `parts` itself (its folders aside), or None.

    A name is checked as it is and, when it has a Windows alias part (`:stream`, a
    trailing dot or space), as Windows would look it up: ignored in either form is
    ignored."""
    found = _decide(chain, parts, is_dir, aliases=False)
    if found is None and any(map(has_alias, parts)):
        found = _decide(chain, parts, is_dir, aliases=True)
    return found


def _decide(chain: Chain, parts: tuple[str, ...], is_dir: bool, *, aliases: bool) -> str | None:
    for kind in IGNORE_FILES:
        for depth, rule_kind, rules in reversed(chain):
            if rule_kind != kind or depth >= len(parts):
                continue
            verdict = rules.verdict(parts[depth:], is_dir, aliases)
            if verdict is not None:
                if verdict:
                    return kind
                break
    return None


class IgnoreWalk:
    """The ignore state of the folders of one root, each computed once per call.

    `root_fd` stays owned by the caller. Not shared between threads.
    """

    def __init__(self, rules: IgnoreRules, root_fd: int) -> None:
        self._rules = rules
        self._root_fd = root_fd
        self._levels: dict[tuple[str, ...], _Level] = {}
        self._held: dict[tuple[str, ...], int] | None = None

    def hold_folders(self) -> None:
        """Keep the handles of the last folders walked, so that a folder below one of them
        is opened with one `openat` instead of a walk from the root: for a listing, which
        checks hundreds of sibling folders. The caller must then call `close`."""
        if self._held is None:
            self._held = {}

    def close(self) -> None:
        """Close the held folder handles (the root handle stays the caller's)."""
        held, self._held = self._held, None
        for fd in (held or {}).values():
            os.close(fd)

    def _hold(self, folder: tuple[str, ...], fd: int) -> bool:
        if self._held is None or folder in self._held:
            return False
        if len(self._held) >= _MAX_HELD:
            os.close(self._held.pop(next(iter(self._held))))
        self._held[folder] = fd
        return True

    def _load(self, dir_fd: int, folder: tuple[str, ...], above: _Level) -> _Level:
        chain = above.chain
        key = self._rules.folder_key(dir_fd)
        if key is not None and self._rules.known_empty(folder, key):
            return _Level(None, chain)
        for kind in IGNORE_FILES:
            found = self._rules.load(dir_fd, folder, kind)
            if isinstance(found, Unreadable):
                return _Level(Refusal(kind, found), chain)
            if found is not None:
                chain = (*chain, (len(folder), kind, found))
        if key is not None and chain is above.chain:
            self._rules.remember_empty(folder, key)
        return _Level(None, chain)

    def level(self, folder: tuple[str, ...]) -> _Level:
        """The state of `folder`, walking down from the deepest folder already known."""
        found = self._levels.get(folder)
        if found is not None:
            return found
        known = len(folder)
        while known > 0 and folder[:known] not in self._levels:
            known -= 1
        if known == 0 and () not in self._levels:
            self._levels[()] = self._load(self._root_fd, (), _Level(None, ()))
        level = self._levels[folder[:known]]
        fd = self._held.get(folder[:known]) if self._held is not None and known else None
        borrowed = fd is not None  # a held handle on the parent: not ours to close
        at = folder[:known]  # the folder `fd` is a handle on
        gone = False  # a missing folder, or a link: nothing below it holds ignore files we read
        try:
            for depth in range(known + 1, len(folder) + 1):
                here = folder[:depth]
                if level.refusal is not None:
                    pass
                elif (kind := decide(level.chain, here, is_dir=True)) is not None:
                    level = _Level(Refusal(kind), level.chain)
                elif not gone:
                    parent, parent_at, parent_borrowed = fd, at, borrowed
                    fd, why = self._step(parent, here)
                    borrowed, at = False, here
                    if (
                        parent is not None
                        and not parent_borrowed
                        and not self._hold(parent_at, parent)
                    ):
                        os.close(parent)
                    if why is not None:
                        denied = why.reason.endswith("(permission denied)")
                        level = _Level(Refusal("folder", why, denied), level.chain)
                    elif fd is None:
                        gone = True
                    else:
                        level = self._load(fd, here, level)
                self._levels[here] = level
        finally:
            if fd is not None and not borrowed and not self._hold(at, fd):
                os.close(fd)
        return level

    def _step(self, fd: int | None, here: tuple[str, ...]) -> tuple[int | None, Unreadable | None]:
        """A handle on `here` from the handle on its parent (which stays the caller's).

        None and no reason: `here` is missing or a link, so it holds no ignore file we
        would read. None and a reason: a folder we cannot look into fails closed (as an
        I/O failure when the system could not open it: out of descriptors).
        """

        def cannot(why: str, *, failed: bool = False) -> tuple[None, Unreadable]:
            return None, Unreadable(here, "", why, failed)

        try:
            if fd is None:
                return open_beneath(self._root_fd, here, "", directory=True), None
            if here[-1] in ("", ".", "..") or "/" in here[-1]:  # one real name, or nothing
                return cannot("cannot be opened to look for ignore files")
            return os.open(here[-1], _OPEN_FLAGS | os.O_DIRECTORY, dir_fd=fd), None
        except ToolError as exc:
            if exc.code in ("not_found", "symlink", "outside_workspace"):
                return None, None
            if exc.code == "permission_denied":
                return cannot("cannot be opened (permission denied)")
            if exc.code == "io_error":  # "…: could not be opened (the system's reason)"
                why = exc.message.rpartition(" could not be opened ")[2]
                return cannot(f"cannot be opened to look for ignore files {why}", failed=True)
            return cannot("cannot be opened to look for ignore files")
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                return None, None
            if exc.errno in (errno.EACCES, errno.EPERM):
                return cannot("cannot be opened (permission denied)")
            why = os.strerror(exc.errno or 0)
            failed = exc.errno in _NO_DESCRIPTOR
            return cannot(f"cannot be opened to look for ignore files ({why})", failed=failed)

    def refusal(self, parts: tuple[str, ...], *, is_dir: bool) -> Refusal | None:
        """Why `parts` (relative to the root) is not served, or None."""
        if not parts:
            return self.level(()).refusal
        level = self.level(parts[:-1])
        if level.refusal is not None:
            return level.refusal
        if is_dir:
            return self.level(parts).refusal
        kind = decide(level.chain, parts, is_dir=False)
        return Refusal(kind) if kind is not None else None
