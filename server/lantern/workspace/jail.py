"""Checks 3–5 of the read path: open beneath a root, never through a link.

See docs/read-path.md#check-3.

On Linux the open is one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
call made through ctypes. Where the kernel or a sandbox refuses openat2
(ENOSYS, EPERM, EINVAL) the path is walked one component at a time with
`O_NOFOLLOW`. Every open is `O_NONBLOCK`, so a FIFO can never hang us, and
the handle is then `fstat`-ed and read back through `/proc/self/fd` (Linux)
or `F_GETPATH` (macOS); where neither answers, by walking `..` from the handle's
folder up to the root (`walk_back`).
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lantern.errors import ToolError
from lantern.workspace.names import EXACT, Names

_SYS_OPENAT2 = 437  # the same number on every Linux architecture
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
# getattr: native Windows lacks these, and must still import this module (lantern/platform_gate.py)
_BASE_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)
_NOFOLLOW_ANY = getattr(os, "O_NOFOLLOW_ANY", 0)  # macOS


@dataclass(frozen=True)
class Identity:
    """What an approval is bound to: the file itself, not just its name.

    Device and inode number alone are not enough: a file deleted and created again
    often gets the same inode number back (ext4, tmpfs). So an identity also holds
    the inode's generation (Linux, where the file system keeps one), its birth time
    (where `os.stat` gives one: macOS, BSD) and, for a file's contents, the change
    time and size when it was opened: a new file, or the same file changed, is a
    new identity. A folder's identity leaves out change time and size, which change
    whenever a name inside it does.
    """

    dev: int
    ino: int
    generation: int | None = None
    birth_ns: int | None = None
    ctime_ns: int | None = None
    size: int | None = None


# FS_IOC_GETVERSION = _IOR('v', 1, long): the inode generation (ext4, btrfs, xfs, ...)
_FS_IOC_GETVERSION = (2 << 30) | (struct.calcsize("l") << 16) | (ord("v") << 8) | 1


def _generation(fd: int) -> int | None:
    if not sys.platform.startswith("linux"):
        return None
    import fcntl

    try:
        raw = fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(struct.calcsize("l")))
    except OSError:  # the file system keeps none (ENOTTY, EOPNOTSUPP)
        return None
    return int(struct.unpack_from("I", raw)[0])


def _birth_ns(st: os.stat_result) -> int | None:
    exact = getattr(st, "st_birthtime_ns", None)
    if isinstance(exact, int):
        return exact
    seconds = getattr(st, "st_birthtime", None)
    return int(seconds * 1e9) if isinstance(seconds, float | int) else None


def identity_of(fd: int, st: os.stat_result, *, contents: bool) -> Identity:
    """The identity of the open file `fd` (fstat-ed as `st`); `contents`: also bind
    it to the change time and size (a file's contents, not a folder's names)."""
    return Identity(
        st.st_dev,
        st.st_ino,
        _generation(fd),
        _birth_ns(st),
        st.st_ctime_ns if contents else None,
        st.st_size if contents else None,
    )


class _Openat2:
    """Lazy ctypes binding; `available` turns False after the first ENOSYS/EPERM/EINVAL."""

    def __init__(self) -> None:
        self.available = sys.platform.startswith("linux") and not os.environ.get(
            "LANTERN_NO_OPENAT2"
        )
        self._syscall: Any = None

    def open(self, dir_fd: int, rel: str, flags: int) -> int:
        """Return an fd, or raise OSError; raises `NotImplementedError` if unusable."""
        if self._syscall is None:
            import ctypes  # only here: it costs ~60 ms of start-up

            libc = ctypes.CDLL(None, use_errno=True)
            self._syscall = libc.syscall
        how = struct.pack(
            "QQQ", flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
        )
        import ctypes

        fd = int(
            self._syscall(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_int(dir_fd),
                ctypes.c_char_p(os.fsencode(rel)),
                ctypes.c_char_p(how),
                ctypes.c_size_t(len(how)),
            )
        )
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM, errno.EINVAL):
            self.available = False
            raise NotImplementedError
        raise OSError(err, os.strerror(err))


_openat2 = _Openat2()


def _walk_open(dir_fd: int, components: Sequence[str], flags: int) -> int:
    """The portable fallback: one `openat(O_NOFOLLOW)` per component."""
    fd = os.dup(dir_fd)
    try:
        for i, name in enumerate(components):
            last = i == len(components) - 1
            step_flags = (flags if last else _BASE_FLAGS | os.O_DIRECTORY) | os.O_NOFOLLOW
            try:
                nxt = os.open(name, step_flags | _NOFOLLOW_ANY, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(fd, name):
                    raise OSError(errno.ELOOP, "symbolic link") from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _refusal(exc: OSError, rel: str) -> ToolError:
    code = exc.errno
    if code == errno.ELOOP:
        return ToolError(
            "symlink", f"{rel} is or goes through a symbolic link; Lantern does not follow links"
        )
    if code == errno.EXDEV:
        return ToolError("outside_workspace", f"{rel} is outside the workspace")
    if code in (errno.ENOENT, errno.ENOTDIR):
        return ToolError("not_found", f"{rel} does not exist")
    if code in (errno.EACCES, errno.EPERM):
        return ToolError("permission_denied", f"{rel}: permission denied")
    if code in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
        return ToolError("not_regular_file", f"{rel} is not a regular file")
    if code == errno.ENAMETOOLONG:
        return ToolError("invalid_arguments", "path: too long for the file system")
    return ToolError("io_error", f"{rel}: could not be opened ({os.strerror(code or 0)})")


def open_beneath(root_fd: int, components: Sequence[str], rel: str, *, directory: bool) -> int:
    """Open `components` beneath `root_fd` without following any symbolic link."""
    flags = _BASE_FLAGS | (os.O_DIRECTORY if directory else 0)
    if not components:
        return os.dup(root_fd)
    try:
        if _openat2.available:
            try:
                return _openat2.open(root_fd, "/".join(components), flags)
            except NotImplementedError:
                pass
        return _walk_open(root_fd, components, flags)
    except OSError as exc:
        if directory and exc.errno == errno.ENOTDIR and not _is_link_path(root_fd, components):
            raise ToolError("not_found", f"{rel} is not a folder") from None
        raise _refusal(exc, rel) from None


def _is_link_path(root_fd: int, components: Sequence[str]) -> bool:
    """Whether the last component is a link (for telling `symlink` from `not_found`)."""
    try:
        parent = _walk_open(root_fd, components[:-1], _BASE_FLAGS | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        return _is_link(parent, components[-1])
    finally:
        os.close(parent)


def check_regular(fd: int, rel: str) -> os.stat_result:
    """Check 4: the handle must be a regular file with a single link."""
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError("is_directory", f"{rel} is a folder; use list_files to see inside it")
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "not a regular file"
        )
        raise ToolError("not_regular_file", f"{rel} is {kind}; Lantern reads regular files only")
    if st.st_nlink > 1:
        raise ToolError(
            "not_regular_file",
            f"{rel} has {st.st_nlink} hard links; Lantern does not read hard-linked files "
            "because another name may point at data outside the workspace",
        )
    return st


def handle_path(fd: int) -> str | None:
    """The path an open handle really has: `/proc/self/fd/N` on Linux, `F_GETPATH` on
    macOS; None where neither answers (see `readback_method`)."""
    if _READBACK.method == "F_GETPATH":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, _READBACK.f_getpath, bytes(_PATH_MAX))
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\0", 1)[0])
    if _READBACK.method != "/proc":
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        _READBACK.missing()
        return None


def real_components(
    fd: int, root_path: str, parts: Sequence[str], names: Names = EXACT
) -> tuple[str, ...] | None:
    """Check 5: where the handle really points, relative to the root; `parts` are the
    components it was opened by.

    Read back through /proc or F_GETPATH; where neither answers, by `walk_back`. Returns
    None only where no way exists (native Windows, where no tool runs); raises
    `outside_workspace` when the handle is not beneath `root_path`. Names are compared
    as the root compares them (`names`).
    """
    real = handle_path(fd)
    if real is None:
        return walk_back(fd, root_path, parts) if _READBACK.method != "none" else None
    below = names.within(real, root_path)
    if below is None:
        raise _outside()
    return below


def _outside() -> ToolError:
    return ToolError("outside_workspace", "the opened file is outside the workspace")


def _moved() -> ToolError:
    return ToolError(
        "io_error", "the opened file was moved while it was being opened; not served, try again"
    )


_UP_FLAGS = _BASE_FLAGS | getattr(os, "O_DIRECTORY", 0)
_MAX_UP = 4096  # folders walked above a moved handle before it counts as outside


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _holds(folder: int, name: str, st: os.stat_result) -> bool:
    """Whether `name` in the open `folder` is the file or folder `st` (no link followed)."""
    try:
        return _same(os.stat(name, dir_fd=folder, follow_symlinks=False), st)
    except OSError:
        return False


def walk_back(fd: int, root_path: str, parts: Sequence[str]) -> tuple[str, ...]:
    """Check 5 with no path to read back (no /proc, no F_GETPATH): portable `openat`s.

    From the handle's folder (a folder handle itself; for a file, which has no `..`, its
    folder opened again beneath the root, which must hold this very file, still of one
    link, under its name), `..` is opened once per component, and each parent must hold
    the folder below under the name it was opened by, until the root's device and inode.
    Returns `parts` (each one checked); raises `outside_workspace` when walking on up
    reaches the file system root instead of the root (the folder was moved out), and
    `io_error` when the handle is elsewhere in the workspace (moved while it was opened).
    Blocking: a system call or two per component.
    """
    root = os.stat(root_path)
    st = os.fstat(fd)
    folders = tuple(parts) if stat.S_ISDIR(st.st_mode) else tuple(parts[:-1])
    if folders == tuple(parts):
        here = os.dup(fd)
    else:
        root_fd = os.open(root_path, _UP_FLAGS)
        try:
            here = open_beneath(root_fd, folders, "", directory=True)
        except ToolError:  # the folder it was opened in is not there any more
            raise _moved() from None
        finally:
            os.close(root_fd)
        # Its one link is that name there (a link made since check 4 could be the only
        # way in from the workspace to a file that lies outside it).
        if not _holds(here, parts[-1], st) or os.fstat(fd).st_nlink != 1:
            os.close(here)
            raise _moved()
    try:
        for name in reversed(folders):
            below = os.fstat(here)
            up = os.open("..", _UP_FLAGS, dir_fd=here)
            os.close(here)
            here = up
            if not _holds(here, name, below):
                break
        else:
            if _same(os.fstat(here), root):
                return tuple(parts)
        raise _where(here, root)
    finally:
        os.close(here)


def _where(here: int, root: os.stat_result) -> ToolError:
    """Why a handle whose folders are not the ones asked for is refused: walking `..`
    on up from `here` (a handle the caller closes) meets the root (moved inside the
    workspace) or the file system root (outside it)."""
    fd = os.dup(here)
    try:
        for _ in range(_MAX_UP):
            st = os.fstat(fd)
            if _same(st, root):
                return _moved()
            try:
                up = os.open("..", _UP_FLAGS, dir_fd=fd)
            except OSError:  # a folder above that cannot be searched: not the workspace
                return _outside()
            os.close(fd)
            fd = up
            if _same(os.fstat(fd), st):  # `..` of the file system root is itself
                return _outside()
        return _outside()
    finally:
        os.close(fd)


class _Readback:
    """Which way check 5 reads a handle's path back on this machine, decided once:
    "/proc", "F_GETPATH", "walk" (`walk_back`, where /proc does not answer) or "none"
    (native Windows)."""

    def __init__(self) -> None:
        self.f_getpath = 0
        self.warned = False
        try:
            import fcntl
        except ImportError:  # native Windows: no tool runs there (`lantern.platform_gate`)
            self.method = "none"
            return
        self.f_getpath = int(getattr(fcntl, "F_GETPATH", 0))
        self.method = "F_GETPATH" if self.f_getpath else "/proc"

    def missing(self) -> None:
        """`/proc/self/fd` did not answer: walk back instead, and say so once."""
        if self.warned:
            return
        self.warned = True
        self.method = "walk"
        print(
            "lantern: /proc/self/fd does not answer here: check 5 (where an opened file "
            "really is) walks up from each opened handle's folder ('..') to the workspace "
            "folder instead; see docs/platforms.md.",
            file=sys.stderr,
        )


_PATH_MAX = 1024  # macOS MAXPATHLEN: what F_GETPATH writes at most
_READBACK = _Readback()


def readback_method() -> str:
    """How check 5 reads a handle's path back here: "/proc", "F_GETPATH", "walk" (up
    from the handle with `..`) or "none".

    "/proc" is confirmed by reading back a handle on the current folder."""
    if _READBACK.method == "/proc":
        try:
            fd = os.open(".", os.O_RDONLY)
        except OSError:
            return _READBACK.method
        try:
            handle_path(fd)
        finally:
            os.close(fd)
    return _READBACK.method
