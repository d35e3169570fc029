"""Where Lantern may run its tools: the one check for the platforms its jail does not cover.

The read path (docs/read-path.md) stands on POSIX: opening beneath a folder
handle without following links (openat2, else `O_NOFOLLOW` one component at a
time), non-blocking opens, and reading back where an open handle really is.
Native Windows offers none of these as such, and adds names those checks do
not know: alternate data streams, 8.3 short names, trailing dots and spaces,
device names, junctions and other reparse points. Until a Windows jail exists
(its design is in docs/platforms.md), Lantern still starts there, so that an
editor or a script gets a clear answer rather than a crash: `lantern serve`
answers `initialize`, `lantern doctor` runs, and every tool call, and every
question, is refused with `unsupported_platform` and `MESSAGE`. Pythons that
run on Windows' own file system through a POSIX layer (Cygwin, MSYS2) are
refused too: the same names reach the same disk there, and nobody has shown
the jail holding on them.

Nothing else in Lantern decides this; `sys.platform` is read at each call.
"""

from __future__ import annotations

import sys
from typing import Final

from lantern.errors import ToolError

CODE: Final = "unsupported_platform"
MESSAGE = (
    "native Windows is not supported yet: Lantern's read jail is proven only on Linux and "
    "macOS. Run Lantern inside WSL or on a Linux or macOS machine (in VS Code: Remote - WSL "
    "or Remote - SSH)."
)
_WINDOWS = frozenset({"win32", "cygwin", "msys"})


def unsupported(platform: str | None = None) -> str | None:
    """Why Lantern's tools cannot run on `platform` (default: this one), or None where they can."""
    return MESSAGE if (sys.platform if platform is None else platform) in _WINDOWS else None


def require_supported() -> None:
    """Raise the `unsupported_platform` tool error where Lantern's tools cannot run."""
    reason = unsupported()
    if reason is not None:
        raise ToolError(CODE, reason)
