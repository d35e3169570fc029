"""Token patterns compiled when first used, not when Lantern starts.

Most token rules run only on a text that holds their literal prefix (`saas.py`,
`tokens.py`): compiling all of them up front costs every command that reads a file
(`lantern tool read_file`) a few milliseconds for rules that ordinary text never
reaches. A `Lazy` compiles its source on first use; from then on its `sub` and
`finditer` are the compiled pattern's own, so a search that redacts thousands of
runs of text pays nothing for the indirection. Two threads that race compile the
same pattern twice, which is harmless.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Replace = Callable[[re.Match[str]], str]


class Lazy:
    """A regular expression's source, compiled on first use."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None
        self.sub: Callable[[Replace, str], str] = self._first_sub
        self.finditer: Callable[[str], Iterator[re.Match[str]]] = self._first_finditer

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            compiled = re.compile(self.source)
            self.sub, self.finditer = compiled.sub, compiled.finditer
            self._compiled = compiled
        return self._compiled

    def _first_sub(self, replace: Replace, text: str) -> str:
        return self.compiled.sub(replace, text)

    def _first_finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)
