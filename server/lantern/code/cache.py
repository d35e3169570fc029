"""A bounded, thread-safe LRU of what parsing a file found, keyed by its identity.

The caller gives a hashable identity for a file's bytes (the tools use device, inode,
size and mtime); a changed file has a new identity and is parsed again. An entry keeps
a file's `Scan` (`code/definitions.py`): the source bytes, the line table, the
definitions and the starts of their names; never the syntax tree (a tree is about
twenty times its source), so `uses` on a kept file parses its bytes again and searches
only where the name occurs (`code/references.py`). `uses_only` (find_references) keeps
nothing: on a miss it finds only the definitions around the name, not the file's list.
Each entry is charged for its source bytes plus an estimate of the rest, and the least
recently used entries are dropped while the total is over the cap. An entry that alone
exceeds the cap is computed and returned but not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import tree_sitter

from lantern.code import languages
from lantern.code.definitions import Definition, Scan, Unlisted, scan_tree
from lantern.code.references import FileUses, Use, naming, quick_uses, search

DEFAULT_CAP = 64 << 20
_DEFINITION_BYTES = 200  # a Definition object and its tuple slot, besides its strings

Source = bytes | Callable[[], bytes]


@dataclass
class _Entry:
    scan: Scan
    cost: int


def _cost(found: Scan) -> int:
    definitions = sum(_DEFINITION_BYTES + len(d.name) + len(d.signature) for d in found.definitions)
    return len(found.source) + found.lines.nbytes() + definitions + 8 * len(found.name_starts)


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
        return self._scan(key, source, language)[0].definitions

    def listing(
        self, key: Hashable, source: Source, language: str
    ) -> tuple[list[Definition], Unlisted]:
        """The definitions of the file `key`, and what they leave out."""
        found = self._scan(key, source, language)[0]
        return found.definitions, found.unlisted

    def uses(
        self, key: Hashable, source: Source, language: str, name: str, max_lines: int | None = None
    ) -> FileUses:
        """The uses of `name` in the file `key`: all, or those on its first `max_lines`
        lines with uses."""
        found, tree = self._scan(key, source, language)
        if tree is None:
            tree = languages.parse(found.source, language)
        return search(found, tree, language, name, max_lines)

    def uses_only(
        self, key: Hashable, source: Source, language: str, name: str, max_lines: int | None = None
    ) -> FileUses:
        """As `uses`, but a file not kept is searched without listing its definitions
        (`references.quick_uses`), and is not kept: for a lookup that wants only uses."""
        slot = (key, language)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is None:
                self.misses += 1
            else:
                self._entries.move_to_end(slot)
                self.hits += 1
        if entry is None:
            return quick_uses(source() if callable(source) else source, language, name, max_lines)
        tree = languages.parse(entry.scan.source, language)
        return search(entry.scan, tree, language, name, max_lines)

    def naming(self, key: Hashable, source: Source, language: str, name: str) -> list[Use]:
        """The uses of `name` in the file `key` that name a definition (no tree needed)."""
        return naming(self._scan(key, source, language)[0], name)

    def _scan(
        self, key: Hashable, source: Source, language: str
    ) -> tuple[Scan, tree_sitter.Tree | None]:
        """The file's scan, and its tree when it was parsed now."""
        slot = (key, language)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None:
                self._entries.move_to_end(slot)
                self.hits += 1
                return entry.scan, None
            self.misses += 1
        found, tree = scan_tree(source() if callable(source) else source, language)
        self._keep(slot, _Entry(found, _cost(found)))
        return found, tree

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
