"""lantern.code.cache.ParseCache: a hit parses nothing, a changed identity parses again,
and what it keeps stays under its byte cap, evicting the least recently used."""

from __future__ import annotations

import sysconfig
import threading
from pathlib import Path

from lantern.code.cache import ParseCache
from lantern.code.definitions import definitions
from lantern.code.references import uses

from tests.hang import HANG_S

STDLIB = Path(sysconfig.get_paths()["stdlib"])
REAL = ["argparse.py", "dataclasses.py", "typing.py", "inspect.py", "ast.py", "enum.py"]


class Reader:
    """A source callable that counts how often the cache asked for the bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls = 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.data


def test_a_hit_reads_and_parses_nothing() -> None:
    cache = ParseCache()
    reader = Reader(b"def f():\n    return g()\n\ndef g():\n    return f()\n")
    first = cache.definitions(("dev", 1, 50, 7), reader, "python")
    assert [d.name for d in first] == ["f", "g"]
    again = cache.definitions(("dev", 1, 50, 7), reader, "python")
    assert again == first and reader.calls == 1
    key = ("dev", 1, 50, 7)
    assert [u.line for u in cache.uses(key, reader, "python", "g").uses] == [2, 4]
    assert [u.line for u in cache.uses(key, reader, "python", "f").uses] == [1, 5]
    assert [u.line for u in cache.naming(key, reader, "python", "f")] == [1]
    assert reader.calls == 1  # the bytes were kept; `uses` parsed them again, `naming` not
    assert (cache.hits, cache.misses) == (4, 1)


def test_a_changed_identity_is_parsed_again() -> None:
    cache = ParseCache()
    assert [d.name for d in cache.definitions((1, 1), b"def old(): pass\n", "python")] == ["old"]
    assert [d.name for d in cache.definitions((1, 2), b"def new(): pass\n", "python")] == ["new"]
    # The same identity in another language is another entry.
    assert [d.name for d in cache.definitions((1, 2), b"function js() {}\n", "javascript")] == [
        "js"
    ]
    assert cache.misses == 3


def test_results_are_those_of_the_uncached_functions() -> None:
    cache = ParseCache()
    source = (STDLIB / "argparse.py").read_bytes()
    assert cache.definitions("argparse", source, "python") == definitions(source, "python")
    for name in ("ArgumentParser", "self", "_", "action", "NotThere"):
        every = uses(source, "python", name)
        assert cache.uses("argparse", source, "python", name).uses == every
        first = sorted({u.line for u in every})[:3]  # the uses on the first three lines
        assert cache.uses("argparse", source, "python", name, 3).uses == [
            u for u in every if u.line in first
        ]
        assert cache.naming("argparse", source, "python", name) == [
            u for u in every if u.is_definition
        ]


def test_eviction_keeps_real_sources_under_the_cap() -> None:
    sources = {name: (STDLIB / name).read_bytes() for name in REAL}
    probe = ParseCache()
    costs = {}
    for name, data in sources.items():
        probe.uses(name, data, "python", "self")
        costs[name] = probe.charged_bytes - sum(costs.values())
    assert all(cost >= len(sources[name]) for name, cost in costs.items())

    cap = costs["argparse.py"] + costs["dataclasses.py"] + costs["typing.py"]
    cache = ParseCache(cap_bytes=cap)
    readers = {name: Reader(data) for name, data in sources.items()}
    for name in REAL:
        cache.uses(name, readers[name], "python", "self")
        assert cache.charged_bytes <= cap
    assert len(cache) < len(REAL)
    cache.definitions("enum.py", readers["enum.py"], "python")  # the newest: still kept
    assert readers["enum.py"].calls == 1
    cache.definitions("argparse.py", readers["argparse.py"], "python")  # the oldest: evicted
    assert readers["argparse.py"].calls == 2
    assert cache.charged_bytes <= cap


def test_an_entry_larger_than_the_cap_is_answered_but_not_kept() -> None:
    cache = ParseCache(cap_bytes=1000)
    reader = Reader(b"def f(): pass\n" * 200)
    assert len(cache.definitions("big", reader, "python")) == 200
    assert len(cache.definitions("big", reader, "python")) == 200
    assert reader.calls == 2 and len(cache) == 0 and cache.charged_bytes == 0


def test_threads_share_one_cache() -> None:
    cache = ParseCache(cap_bytes=400_000)
    sources = {name: (STDLIB / name).read_bytes() for name in REAL}
    expected = {name: definitions(data, "python") for name, data in sources.items()}
    failures: list[str] = []

    def work(offset: int) -> None:
        for i in range(6):
            name = REAL[(i + offset) % len(REAL)]
            if cache.definitions(name, sources[name], "python") != expected[name]:
                failures.append(name)
            cache.uses(name, sources[name], "python", "self")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_S)
        assert not thread.is_alive()
    assert failures == []
    assert cache.charged_bytes <= 400_000
