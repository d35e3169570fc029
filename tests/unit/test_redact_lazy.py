"""Token patterns compile on first use (`redact/lazy.py`): a pattern that could not
compile would otherwise show only when a file first holds its prefix, in the middle of
a user's read. Every one compiles, and a rule redacts its token on the read that
compiles it and on later ones."""

from __future__ import annotations

import re

from lantern.workspace.redact.redactor import redact
from lantern.workspace.redact.saas import HINTED_RULES, PREFIX_OF
from lantern.workspace.redact.tokens import TOKEN_RULES


def test_every_token_pattern_compiles() -> None:
    patterns = [pattern for _, pattern, _ in TOKEN_RULES] + [p for _, _, p in HINTED_RULES]
    assert len(patterns) > 100
    for pattern in patterns:
        assert isinstance(pattern.compiled, re.Pattern), pattern.source
    assert set(PREFIX_OF) <= set(patterns)


def test_a_lazily_compiled_rule_redacts_its_token_each_time() -> None:
    token = "glsa_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + "_0a1b2c3d"
    for text in (f"grafana = {token}\n", f"# {token}\n"):
        shown = redact(text).text
        assert token not in shown
        assert "[REDACTED:" in shown
