"""What the C allocator keeps of the server's memory (glibc only; elsewhere nothing).

Parsing builds tree-sitter trees in C, many megabytes for a big file, on the worker
threads the tools run on, and frees them once the definitions are read. glibc gives a
thread that allocates while another does an arena of its own (up to eight per core),
and each arena keeps what was freed in it: over the Linux kernel's tree, 200 navigation
calls left `lantern serve` holding about 50 MB more at its peak than with one arena
(`benchmarks/scale_bench.py --kernel --only serve`). `limit_arenas` makes every thread
share one arena, as `MALLOC_ARENA_MAX=1` would, and is called before the server starts
any thread; `release` hands the heap's free pages back to the system (`malloc_trim`)
once a question is answered. With another C library (musl, macOS, Windows) both do
nothing.
"""

from __future__ import annotations

import ctypes
import sys

ARENAS = 1  # the tools' threads hold the GIL while they parse: one arena costs no waiting
_M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h


def _glibc() -> ctypes.CDLL | None:
    """The process's C library when it is glibc, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    # glibc's own function: musl has mallopt but not this, nor the arena parameter.
    return libc if hasattr(libc, "gnu_get_libc_version") else None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Let threads created from now on share at most `arenas` malloc arenas; whether the
    limit was set (glibc only)."""
    libc = _glibc()
    return libc is not None and libc.mallopt(_M_ARENA_MAX, arenas) == 1


def release() -> bool:
    """Hand the pages malloc holds free back to the system; whether any were (glibc only)."""
    libc = _glibc()
    return libc is not None and libc.malloc_trim(0) == 1
