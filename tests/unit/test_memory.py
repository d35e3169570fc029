"""lantern.memory: with glibc, threads share the arenas `limit_arenas` allows and `release`
gives freed heap pages back to the system; with another C library both do nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from lantern import memory

from tests.hang import HANG_S

glibc = pytest.mark.skipif(memory._glibc() is None, reason="glibc only")

# Four threads allocate at the same time, then malloc_stats() (stderr) names each arena.
THREADS = """
import ctypes, sys, threading
from lantern import memory
if sys.argv[1] == "limit":
    assert memory.limit_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
together = threading.Barrier(4)
def work():
    together.wait()
    for _ in range(2000):
        libc.free(ctypes.c_void_p(libc.malloc(4096)))
    together.wait()
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
libc.malloc_stats()
"""

# 60 MB in blocks malloc keeps on its heap, all freed but the last: only a trim of the
# heap's middle gives them back.
FREED = """
import ctypes
from lantern import memory
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
def rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
blocks = [libc.malloc(100_000) for _ in range(600)]
for block in blocks:
    ctypes.memset(block, 1, 100_000)
for block in blocks[:-1]:
    libc.free(ctypes.c_void_p(block))
held = rss()
released = memory.release()
print(released, held - rss())
"""


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=True,
    )


@glibc
def test_threads_share_the_arenas_allowed() -> None:
    def arenas(*args: str) -> int:
        return _run(THREADS, *args).stderr.count("Arena ")

    assert arenas("limit") == memory.ARENAS
    assert arenas("free") > memory.ARENAS  # without the limit each thread may get its own


@glibc
def test_release_gives_freed_heap_pages_back() -> None:
    released, kib = _run(FREED).stdout.split()
    assert released == "True"
    assert int(kib) > 50_000


def test_another_c_library_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert memory.limit_arenas() is False
    assert memory.release() is False
