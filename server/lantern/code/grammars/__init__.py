"""Per-language tables: which syntax nodes are definitions, what they are called, and
which tokens are identifiers. `grammar_for` loads a language's table on first use."""

from __future__ import annotations

import importlib

from lantern.code.grammars.common import Grammar

_MODULES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "typescript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
}


def grammar_for(language: str) -> Grammar:
    """The definition table for a supported language name."""
    module = _MODULES.get(language)
    if module is None:
        raise ValueError(f"unsupported language: {language!r}")
    found: Grammar = importlib.import_module(f"lantern.code.grammars.{module}").GRAMMAR
    return found
