"""Garbage collection while a command loads its modules.

Loading allocates hundreds of thousands of objects that live as long as the process,
and Python's collector, which counts allocations, would scan them again and again: a
full collection once pygls is loaded, and a young one every 700 allocations. While a
command loads (`loading` to `loaded`), the youngest objects are collected every 10,000
allocations, which still frees what loading throws away as it goes, and no full
collection runs: `lantern serve` answers `initialize` about 6 % sooner
(`benchmarks/server_bench.py`). The command line calls `loading` before it dispatches;
each command calls `loaded` once its modules are in, `lantern serve` once `initialize`
is answered.
"""

from __future__ import annotations

import gc

#: The collector's thresholds while loading: the youngest generation, the middle one,
#: and never the oldest.
LOADING = (10_000, 10, 1 << 30)

_saved: list[tuple[int, int, int]] = []


def loading() -> None:
    """Collect less until `loaded` (once; a second call changes nothing)."""
    if not _saved:
        _saved.append(gc.get_threshold())
        gc.set_threshold(*LOADING)


def loaded() -> None:
    """Collect as usual again (nothing to do when `loading` was not called)."""
    if _saved:
        gc.set_threshold(*_saved.pop())
