"""The workspace: one or more root folders, and the checked way into them.

With one root the model sees plain relative paths (`src/app.py`); with
several it sees `<folder-name>/src/app.py`. `open_checked` runs checks 2–5
of the read path (docs/read-path.md) in order and returns an open handle the caller owns.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import stat
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lantern.errors import ToolError
from lantern.workspace.ignore.files import IgnoreRules, IgnoreWalk, NeedsWorker, inline_only
from lantern.workspace.jail import (
    Identity,
    check_regular,
    identity_of,
    open_beneath,
    real_components,
)
from lantern.workspace.names import EXACT, Names, probe_folds
from lantern.workspace.paths import for_message, split_path
from lantern.workspace.policy import Policy


@dataclass(frozen=True)
class Root:
    """One workspace folder, and how its file system compares names (probed once)."""

    name: str
    path: str  # real, absolute; never shown to the model
    names: Names = EXACT
    policy: Policy = field(default_factory=Policy, compare=False, repr=False)
    ignore: IgnoreRules = field(default_factory=IgnoreRules, compare=False, repr=False)

    @classmethod
    def probed(cls, name: str, path: str, policy: Policy) -> Root:
        names = Names(folds=probe_folds(path))
        return cls(name, path, names, policy.for_names(names), IgnoreRules(names))

    def open(self) -> int:
        return os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


@dataclass(frozen=True)
class Target:
    """A checked-shape path: a root and the components beneath it."""

    root: Root
    parts: tuple[str, ...]
    rel: str  # the path as the model writes it: workspace-relative, root name first when several


@dataclass
class Opened:
    """An open handle that passed checks 2–5; close it with `close()`."""

    target: Target
    fd: int
    stat: os.stat_result

    @property
    def identity(self) -> Identity:
        """What a grant for this handle is bound to (a file: with its change time and size)."""
        return identity_of(self.fd, self.stat, contents=not stat.S_ISDIR(self.stat.st_mode))

    def close(self) -> None:
        os.close(self.fd)


#: Why `/` (or a drive's root) is refused as a workspace folder.
FILE_SYSTEM_ROOT = (
    "the file system root cannot be a workspace folder: it holds every user's files "
    "and the system's; open a project folder (or your home folder) instead"
)


def is_file_system_root(path: str) -> bool:
    """Whether `path` is `/` (or a Windows drive's root), after links are resolved."""
    real = os.path.realpath(path)
    return os.path.dirname(real) == real


def _unique_names(paths: Sequence[str]) -> list[str]:
    names: list[str] = []
    for path in paths:
        base = os.path.basename(path.rstrip("/")) or "root"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


_INLINE_DEPTH = 32  # components; deeper paths are checked in a worker thread


def _enclosing(root: Root, roots: Sequence[Root]) -> list[tuple[Root, tuple[str, ...]]]:
    """The roots that contain `root`, found by identity: each folder above `root` is
    compared by device and inode with the other roots, so a root named in another
    spelling on a disk that folds case (`/x/WS/private` inside `/x/ws`) is found too."""
    ids: dict[tuple[int, int], Root] = {}
    for other in roots:
        if other is not root:
            with contextlib.suppress(OSError):
                st = os.stat(other.path)
                ids[(st.st_dev, st.st_ino)] = other
    found = []
    below: list[str] = []
    here = root.path
    while ids:
        parent, name = os.path.split(here)
        if not name or parent == here:
            break
        below.insert(0, name)
        here = parent
        try:
            st = os.stat(here)
        except OSError:
            break
        outer = ids.pop((st.st_dev, st.st_ino), None)
        if outer is not None:
            found.append((outer, tuple(below)))
    return found


def _folder_ids(root_fd: int, parts: Sequence[str]) -> list[Hashable]:
    """The identity of each folder on the way down `parts` (not the last), walked
    without following links; a step that fails is an identity nothing else equals."""
    found: list[Hashable] = []
    fd = os.dup(root_fd)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, _STEP_FLAGS, dir_fd=fd)
            except OSError:
                break
            os.close(fd)
            fd = nxt
            found.append(identity_of(fd, os.fstat(fd), contents=False))
    finally:
        os.close(fd)
    return found + [object()] * (max(len(parts) - 1, 0) - len(found))


# getattr: native Windows lacks these, and must still import this module (platform_gate.py)
_STEP_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _close_orphan(job: asyncio.Future[Opened]) -> None:
    if not job.cancelled() and job.exception() is None:
        job.result().close()


class Workspace:
    """The jail: every tool reaches the disk through one of these."""

    def __init__(self, folders: Sequence[str | Path], policy: Policy | None = None) -> None:
        if not folders:
            raise ValueError("a workspace needs at least one folder")
        real = [os.path.realpath(os.fspath(f)) for f in folders]
        for path in real:
            if not os.path.isdir(path):
                raise ValueError(f"workspace folder {os.path.basename(path)!r} is not a folder")
            if is_file_system_root(path):
                raise ValueError(FILE_SYSTEM_ROOT)
        self.policy = policy or Policy()
        several = len(real) > 1  # then a deny glob may start with a folder's name
        self.roots = [
            Root.probed(n, p, self.policy.for_root(n) if several else self.policy)
            for n, p in zip(_unique_names(real), real, strict=True)
        ]
        digest = hashlib.sha256("\0".join(sorted(real)).encode()).hexdigest()
        self.key = digest[:16]
        self.name = "+".join(r.name for r in self.roots)
        self._enclosing = {r.name: _enclosing(r, self.roots) for r in self.roots}

    def root_identity(self, root: Root) -> tuple[str, Identity]:
        """A root's folder as a grant sees it: its real path and the folder's identity."""
        fd = root.open()
        try:
            return root.path, identity_of(fd, os.fstat(fd), contents=False)
        finally:
            os.close(fd)

    def folder_chain(self, opened: Opened, path: str) -> tuple[tuple[str, Hashable], ...]:
        """What a folder grant is bound to, for a request about `path` (`opened`'s path,
        or `.` for every root): each folder from the workspace down to it, as the model
        names it, with its identity. `.` is the set of roots (their paths and folders);
        a root's own name (several roots) is that root."""
        roots = tuple(self.root_identity(r) for r in self.roots)
        chain: list[tuple[str, Hashable]] = [(".", roots)]
        if path == "." and not opened.target.parts:
            return tuple(chain)
        target = opened.target
        if self.multi:
            chain.append((target.root.name, self.root_identity(target.root)))
        if target.parts:
            root_fd = target.root.open()
            try:
                ids = _folder_ids(root_fd, target.parts)
            finally:
                os.close(root_fd)
            ids.append(opened.identity)
            for depth, ident in enumerate(ids, start=1):
                chain.append((self.relative(target.root, target.parts[:depth]), ident))
        return tuple(chain)

    def persistent_identity(self) -> tuple[tuple[int, int | None, int | None], ...]:
        """What `Always Allow` is bound to besides the roots' paths (the workspace key):
        each root folder's (inode number, generation, birth time), in the key's order.
        The device number is left out: it can change across a reboot or a remount."""
        found = []
        for root in sorted(self.roots, key=lambda r: r.path):
            _, ident = self.root_identity(root)
            found.append((ident.ino, ident.generation, ident.birth_ns))
        return tuple(found)

    def enclosing(self, root: Root) -> list[tuple[Root, tuple[str, ...]]]:
        """The other roots that contain `root`, with `root`'s place inside each.

        Their denylist and ignore rules apply inside `root` too, so opening a
        folder as its own workspace root cannot unhide what the outer root hides.
        """
        return self._enclosing[root.name]

    @property
    def multi(self) -> bool:
        return len(self.roots) > 1

    def relative(self, root: Root, parts: Sequence[str]) -> str:
        """The path the model uses for `parts` under `root` (`.` for the only root)."""
        rel = "/".join(parts)
        if self.multi:
            return f"{root.name}/{rel}" if rel else root.name
        return rel or "."

    def targets(self, raw: object, *, file: bool, field: str = "path") -> list[Target]:
        """Map a model path to targets; "." in a multi-root workspace is every root."""
        parts = split_path(raw, field=field, file=file)
        if not self.multi:
            return [Target(self.roots[0], parts, self.relative(self.roots[0], parts))]
        if not parts:
            if file:
                raise ToolError("invalid_arguments", f"{field}: must name a file")
            return [Target(r, (), r.name) for r in self.roots]
        for root in self.roots:
            if parts[0] == root.name:
                rest = parts[1:]
                if file and not rest:
                    raise ToolError("is_directory", f"{root.name} is a workspace folder")
                return [Target(root, rest, self.relative(root, rest))]
        names = ", ".join(r.name for r in self.roots)
        raise ToolError(
            "not_found",
            f"{for_message(str(raw))}: paths start with a workspace folder name ({names})",
        )

    def target_for_abspath(self, path: str) -> Target:
        """The target for an absolute path from the editor (a URI), if it lies in a root.

        Only the lexical position is used here; the jail still refuses links on open.
        """
        absolute = os.path.abspath(path)
        for root in self.roots:
            below = root.names.within(absolute, root.path)
            if below is not None:
                named = self.relative(root, below)
                return self.targets(named, file=True)[0]
        raise ToolError("outside_workspace", "the selected file is outside the workspace folders")

    def check_policy(self, target: Target, *, is_dir: bool) -> None:
        """Check 2: denylist, deny globs, then the ignore files (of enclosing roots too)."""
        target.root.policy.check(target.parts, target.rel, is_dir=is_dir)
        chain = [(target.root, ()), *self.enclosing(target.root)]
        for outer, prefix in chain[1:]:
            outer.policy.check((*prefix, *target.parts), target.rel, is_dir=is_dir)
        for root, prefix in chain:
            root_fd = root.open()
            try:
                walk = IgnoreWalk(root.ignore, root_fd)
                refusal = walk.refusal((*prefix, *target.parts), is_dir=is_dir)
            finally:
                os.close(root_fd)
            if refusal is not None:
                folder = refusal.unreadable.folder if refusal.unreadable else ()
                message = refusal.message(self.relative(root, folder))
                if refusal.denied:
                    raise ToolError("permission_denied", f"{target.rel}: {message}")
                if refusal.failed:
                    raise ToolError("io_error", f"{target.rel} {message}")
                raise ToolError("ignored_path", f"{target.rel} {message}")

    async def open_checked_async(
        self, target: Target, expect: Literal["file", "dir", "any"]
    ) -> Opened:
        """`open_checked` without stalling the event loop.

        A short path whose ignore files are small (or already parsed) is checked right
        here: the check is a few system calls. A deep path, or one that meets a large
        ignore file not parsed yet, is checked in a worker thread; a handle opened there
        after the caller was cancelled is closed.
        """
        if len(target.parts) <= _INLINE_DEPTH:
            try:
                with inline_only():
                    return self.open_checked(target, expect)
            except NeedsWorker:
                pass
        job = asyncio.ensure_future(asyncio.to_thread(self.open_checked, target, expect))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            job.add_done_callback(_close_orphan)
            raise

    def open_checked(self, target: Target, expect: Literal["file", "dir", "any"]) -> Opened:
        """Checks 2–5 of the read path; the caller closes the handle.

        `expect="any"` accepts a folder or a regular file (search takes both).
        """
        directory = expect == "dir"
        self.check_policy(target, is_dir=directory)
        root_fd = target.root.open()
        try:
            fd = open_beneath(root_fd, target.parts, target.rel, directory=directory)
        finally:
            os.close(root_fd)
        try:
            st = os.fstat(fd)
            is_dir = stat.S_ISDIR(st.st_mode)
            if not (directory or (expect == "any" and is_dir)):
                check_regular(fd, target.rel)
            if is_dir and target.parts and expect == "any":
                self.check_policy(target, is_dir=True)
            real = real_components(fd, target.root.path, target.parts, target.root.names)
            if real is not None:
                target.root.policy.check(real, target.rel, is_dir=is_dir)
            return Opened(target, fd, st)
        except BaseException:
            os.close(fd)
            raise
