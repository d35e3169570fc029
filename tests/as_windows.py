"""Run `lantern` the way native Windows would, as far as Linux can show it.

    python tests/as_windows.py ARG...    (the arguments of `lantern`)

This is an EMULATION, not Windows. It shows one thing: that Lantern's modules
import, start and refuse every tool without the POSIX pieces that CPython on
Windows does not have. Before Lantern is imported it takes those pieces away:

- the `os` names Windows lacks that Lantern touches: `O_NONBLOCK`,
  `O_DIRECTORY`, `O_NOFOLLOW`, `O_NOCTTY`, `O_CLOEXEC` (and macOS's
  `O_NOFOLLOW_ANY`), `pidfd_open`, `sched_getaffinity`;
- the modules Windows lacks, `resource` and `fcntl`, made unimportable
  (`sys.modules[name] = None` makes `import name` raise ImportError);
- `dir_fd` support: `os.supports_dir_fd` is empty, as on Windows;
- then `sys.platform` says "win32". The standard library pieces that choose
  their Windows half at import (asyncio's event loop, subprocess) or read
  Linux build data named after the platform (sysconfig) are loaded first, on
  their Linux half, because their Windows half cannot load here. So is
  platformdirs, which would ask the Windows shell where AppData is: the
  config file and the audit log stay in the XDG folders the test sets.

What it cannot show: anything about the Windows kernel, NTFS, or Windows
paths. Lantern does not claim a jail there: it refuses every tool
(`unsupported_platform`), which tests/cli/test_windows_emulation.py and
tests/lsp/test_serve_as_windows.py check through this launcher.
"""

from __future__ import annotations

import asyncio.unix_events  # noqa: F401 - asyncio's Linux half, loaded before "win32"
import os
import subprocess  # noqa: F401
import sys
import sysconfig

import platformdirs  # noqa: F401 - its Windows half calls the Windows shell

HIDDEN_OS_NAMES = (
    "O_NONBLOCK",
    "O_DIRECTORY",
    "O_NOFOLLOW",
    "O_NOCTTY",
    "O_CLOEXEC",
    "O_NOFOLLOW_ANY",
    "pidfd_open",
    "sched_getaffinity",
)
HIDDEN_MODULES = ("resource", "fcntl")


def become_windows() -> None:
    """Take away what native Windows lacks, then say "win32" (see the module's docstring)."""
    for name in HIDDEN_OS_NAMES:
        if hasattr(os, name):
            delattr(os, name)
    for name in HIDDEN_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]
    os.supports_dir_fd = set()
    sysconfig.get_config_vars()  # read now: the file is named after the Linux platform
    sys.platform = "win32"


if __name__ == "__main__":
    del sys.path[0]  # this script's folder (tests/): nothing there may stand in for a module
    become_windows()
    if "lantern" in sys.modules:
        raise SystemExit("as_windows.py: lantern was imported before the emulation began")
    from lantern.cli.commands import main

    sys.exit(main(sys.argv[1:]))
