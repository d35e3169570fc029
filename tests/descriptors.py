"""Running out of file descriptors, for a moment, inside the test process.

`descriptors_left(n)` lowers the soft `RLIMIT_NOFILE` just above the descriptors already
open, takes every free one, and gives back `n`: inside the block the process can open
exactly `n` more files, as a process near `ulimit -n` can. Everything is restored after.
POSIX only (the `resource` module).
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator


@contextlib.contextmanager
def descriptors_left(free: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    taken = [os.open(os.devnull, os.O_RDONLY)]
    resource.setrlimit(resource.RLIMIT_NOFILE, (taken[0] + 256, hard))
    try:
        with contextlib.suppress(OSError):
            while True:
                taken.append(os.dup(taken[0]))
        for _ in range(free):
            os.close(taken.pop())
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
