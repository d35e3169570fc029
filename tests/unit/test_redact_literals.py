"""The token rules run only on a text that holds their literal prefix, found for all of
them in one scan (`redact/literals.py`). That scan must name exactly the literals a
text holds, and skipping the other rules must change nothing: `tokens` gives what
running every rule on every text gives.

Every token is assembled at run time from harmless pieces.
"""

from __future__ import annotations

import random
import re
import string
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from lantern.workspace.redact.literals import Literals
from lantern.workspace.redact.saas import HINTED_RULES, PREFIX_OF
from lantern.workspace.redact.tokens import TOKEN_RULES, tokens
from lantern.workspace.redact.values import LineOf, Span, marker

LITERALS = sorted(set(PREFIX_OF.values()) | {hint for _, hint, _ in HINTED_RULES})
MARKERS = [marker(rule) for rule in sorted({rule for rule, _, _ in TOKEN_RULES})]


def _mixture(rng: random.Random, pieces: list[str]) -> str:
    """Literals, cut at either end or whole, run together with a few characters between:
    literals that overlap, share an anchor, or stand inside one another."""
    filler = "".join(sorted(set("".join(pieces)))) + " \n_-.:"
    parts: list[str] = []
    for _ in range(rng.randint(1, 30)):
        piece = rng.choice(pieces)
        if rng.random() < 0.4:
            piece = piece[rng.randint(0, 2) : len(piece) - rng.randint(0, 2)]
        parts.append(piece + "".join(rng.choice(filler) for _ in range(rng.randint(0, 2))))
    return "".join(parts)


def _stdlib_texts() -> list[str]:
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:40]
    return [path.read_text(errors="replace") for path in files]


def test_held_names_exactly_the_literals_a_text_holds() -> None:
    rng = random.Random(3)
    literals = Literals(LITERALS)
    texts = [_mixture(rng, LITERALS + MARKERS) for _ in range(4000)] + _stdlib_texts()
    texts += ["", "x", *LITERALS, " ".join(MARKERS)]
    for text in texts:
        assert literals.held(text) == {lit for lit in LITERALS if lit in text}, text


def test_held_with_literals_that_share_anchors_and_prefixes() -> None:
    # Made-up literals: the same anchor at the same place, one inside another, none.
    chosen = ["pat", "pat.", "spat", "~a", "b~", "a~b", "9", "x9", "9y", "zz", "zzz"]
    literals = Literals(chosen)
    rng = random.Random(8)
    for _ in range(3000):
        text = "".join(rng.choice("pats.~abxyz9 ") for _ in range(rng.randint(0, 20)))
        assert literals.held(text) == {lit for lit in chosen if lit in text}, text


def _every_rule(text: str) -> tuple[str, list[Span]]:
    """`tokens` as it would be without skipping any rule."""
    spans: list[Span] = []
    for rule, pattern, check in TOKEN_RULES:
        line_of = LineOf(text)

        def replace(
            match: re.Match[str],
            rule: str = rule,
            check: Callable[[str], bool] | None = check,
            line_of: LineOf = line_of,
        ) -> str:
            if check is not None and not check(match.group()):
                return match.group()
            line = line_of(match.start())
            spans.append((rule, line, line))
            return marker(rule)

        text = pattern.compiled.sub(replace, text)
    for rule, _, pattern in HINTED_RULES:
        line_of = LineOf(text)

        def hinted(match: re.Match[str], rule: str = rule, line_of: LineOf = line_of) -> str:
            line = line_of(match.start())
            spans.append((rule, line, line))
            return marker(rule)

        text = pattern.compiled.sub(hinted, text)
    return text, spans


@pytest.mark.parametrize("seed", range(6))
def test_tokens_redact_what_running_every_rule_redacts(seed: int) -> None:
    rng = random.Random(seed)
    body = string.ascii_letters + string.digits
    hexes = "0123456789abcdef"
    pieces = [*LITERALS, *MARKERS, "\n", " ", '"', "=", "-", "_", "."]
    pieces += ["".join(rng.choice(body) for _ in range(n)) for n in (16, 20, 32, 36, 40, 60)]
    pieces += ["".join(rng.choice(hexes) for _ in range(n)) for n in (32, 40, 48, 64)]
    rules: set[str] = set()
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        redacted, spans = tokens(text)
        assert (redacted, spans) == _every_rule(text), text
        rules.update(rule for rule, _, _ in spans)
    assert len(rules) >= 10  # many rules found their tokens
