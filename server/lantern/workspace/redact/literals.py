"""Which of a fixed set of literals a text holds, found in one scan of it.

Most token patterns can only match where their literal prefix stands (`tokens.py`), so
each runs only on a text that holds it. Asking `literal in text` for each of some 130
literals reads the text 130 times; `Literals.held` reads it once. Each literal is found
from its *anchor*, the one of its characters that is rarest in source text (`_ANCHORS`):
one regular expression stops only at the anchors' characters and there checks the part
of a literal before its anchor (a lookbehind) and after it (a lookahead).

The answer is exact. The scan stops at every position that holds an anchor's character
(a match takes that one character) and reports the first literal anchored on it that
stands there; another literal with the same anchor standing at the same place would go
unreported, so for each literal reported the others with its anchor are asked with
`in` (a text that holds any literal at all is rare).

Compiled on first use, like the token patterns (`lazy.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Characters that few source texts hold often, rarest first; together they are in every
# literal of `tokens.py` and `saas.py`. A literal is anchored on the first of them it
# holds (else on its last character: still exact, only slower).
_ANCHORS = "~J9K84V21Ak.-p_"


def _anchor(literal: str) -> int:
    """Where `literal`'s anchor is."""
    for char in _ANCHORS:
        if char in literal:
            return literal.index(char)
    return len(literal) - 1


class Literals:
    """A fixed set of literals, and which of them a text holds."""

    def __init__(self, literals: Iterable[str]) -> None:
        self._literals = sorted(set(literals))
        # The scan, the literal each of its groups stands for, and each literal's
        # fellows: the other literals with its anchor.
        self._built: tuple[re.Pattern[str], list[str], dict[str, list[str]]] | None = None

    def _build(self) -> tuple[re.Pattern[str], list[str], dict[str, list[str]]]:
        fellows: dict[str, list[str]] = {}  # anchor character: its literals
        for literal in self._literals:
            fellows.setdefault(literal[_anchor(literal)], []).append(literal)
        alternatives: list[str] = []
        order: list[str] = []
        for char, literals in fellows.items():
            checks: list[str] = []
            for literal in literals:
                at = _anchor(literal)
                before = f"(?<={re.escape(literal[: at + 1])})" if at else ""
                after = f"(?={re.escape(literal[at + 1 :])})" if at + 1 < len(literal) else ""
                checks.append(f"{before}{after}()")  # the group tells which literal
                order.append(literal)
            alternatives.append(f"{re.escape(char)}(?:{'|'.join(checks)})")
        same = {literal: literals for literals in fellows.values() for literal in literals}
        return re.compile("|".join(alternatives)), order, same

    def held(self, text: str) -> set[str]:
        """The literals that `text` holds."""
        if self._built is None:
            self._built = self._build()
        scan, order, same = self._built
        found = {order[match.lastindex - 1] for match in scan.finditer(text) if match.lastindex}
        for literal in list(found):
            found.update(other for other in same[literal] if other not in found and other in text)
        return found
