"""A bounded, thread-safe LRU of what parsing a file found, keyed by its identity.

The caller gives a hashable identity for a file's bytes (the tools use device, inode,
size and mtime); a changed file has a new identity and is parsed again. An entry keeps
the source bytes, the line table, the definitions and, once `uses` has been asked, the
identifier index; never the syntax tree (a tree is about twenty times its source). Each
entry is charged for its source bytes plus an estimate of the rest, and the least
recently used entries are dropped while the total is over the cap. An entry that alone
exceeds the cap is computed and returned but not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from lantern.code.definitions import Definition, scan
from lantern.code.references import Identifiers, Use, find_uses, identifiers
from lantern.code.text import LineTable

DEFAULT_CAP = 64 << 20
_DEFINITION_BYTES = 200  # a Definition object and its tuple slot, besides its strings

Source = bytes | Callable[[], bytes]


@dataclass
class _Entry:
    source: bytes
    lines: LineTable
    definitions: list[Definition]
    name_starts: frozenset[int]
    tokens: Identifiers | None
    cost: int


def _cost(entry: _Entry) -> int:
    definitions = sum(_DEFINITION_BYTES + len(d.name) + len(d.signature) for d in entry.definitions)
    tokens = entry.tokens.nbytes() if entry.tokens is not None else 0
    return (
        len(entry.source) + entry.lines.nbytes() + definitions + tokens + 8 * len(entry.name_starts)
    )


class ParseCache:
    """Parse results by (identity, language), least recently used dropped first once the
    charged bytes pass `cap_bytes`."""

    def __init__(self, cap_bytes: int = DEFAULT_CAP) -> None:
        self.cap_bytes = cap_bytes
        self._entries: OrderedDict[tuple[Hashable, str], _Entry] = OrderedDict()
        self._charged = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def charged_bytes(self) -> int:
        """The bytes the entries kept now are charged for (never above `cap_bytes`)."""
        return self._charged

    def __len__(self) -> int:
        return len(self._entries)

    def definitions(self, key: Hashable, source: Source, language: str) -> list[Definition]:
        """The definitions of the file `key` (parsed from `source` on a miss)."""
        return self._entry(key, source, language, need_tokens=False).definitions

    def uses(self, key: Hashable, source: Source, language: str, name: str) -> list[Use]:
        """The uses of `name` in the file `key` (parsed from `source` on a miss)."""
        entry = self._entry(key, source, language, need_tokens=True)
        assert entry.tokens is not None
        return find_uses(entry.source, entry.lines, entry.tokens, entry.name_starts, name)

    def _entry(self, key: Hashable, source: Source, language: str, *, need_tokens: bool) -> _Entry:
        slot = (key, language)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None and (entry.tokens is not None or not need_tokens):
                self._entries.move_to_end(slot)
                self.hits += 1
                return entry
            self.misses += 1
        data = entry.source if entry is not None else (source() if callable(source) else source)
        parsed = scan(data, language)
        tokens = identifiers(parsed.tree, language) if need_tokens else None
        fresh = _Entry(data, parsed.lines, parsed.definitions, parsed.name_starts, tokens, 0)
        fresh.cost = _cost(fresh)
        self._keep(slot, fresh)
        return fresh

    def _keep(self, slot: tuple[Hashable, str], entry: _Entry) -> None:
        with self._lock:
            old = self._entries.pop(slot, None)
            if old is not None:
                self._charged -= old.cost
            if entry.cost > self.cap_bytes:
                return
            self._entries[slot] = entry
            self._charged += entry.cost
            while self._charged > self.cap_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._charged -= dropped.cost

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._charged = 0
