"""Which language a file is in, and parsing its bytes with that language's grammar.

Each grammar ships compiled in its wheel. `Language` objects are made on first use and
shared; a `Parser` is kept per thread (a parser holds state while it parses), so the
tools may call `parse` from worker threads. A language's table may hand the parser its
bytes prepared (`Grammar.prepare`: C's attribute macros blanked), byte for byte in place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tree_sitter

from lantern.code.grammars import grammar_for

LANGUAGES: tuple[str, ...] = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
)

_EXTENSIONS: dict[str, str] = {
    **dict.fromkeys((".py", ".pyi"), "python"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"),
    **dict.fromkeys((".ts", ".mts", ".cts"), "typescript"),
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"), "cpp"),
}


def language_for(path: str) -> str | None:
    """The language of a file by its extension (any case), or None when unsupported."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:  # no extension, or a dot file such as `.py`
        return None
    return _EXTENSIONS.get(name[dot:].lower())


def _loader(language: str) -> Callable[[], Any]:
    """The grammar wheel's function that returns the language pointer."""
    if language == "python":
        import tree_sitter_python

        return tree_sitter_python.language
    if language == "javascript":
        import tree_sitter_javascript

        return tree_sitter_javascript.language
    if language in ("typescript", "tsx"):
        import tree_sitter_typescript

        if language == "tsx":
            return tree_sitter_typescript.language_tsx
        return tree_sitter_typescript.language_typescript
    if language == "go":
        import tree_sitter_go

        return tree_sitter_go.language
    if language == "rust":
        import tree_sitter_rust

        return tree_sitter_rust.language
    if language == "java":
        import tree_sitter_java

        return tree_sitter_java.language
    if language == "c":
        import tree_sitter_c

        return tree_sitter_c.language
    if language == "cpp":
        import tree_sitter_cpp

        return tree_sitter_cpp.language
    raise ValueError(f"unsupported language: {language!r}")


_lock = threading.Lock()
_languages: dict[str, tree_sitter.Language] = {}
_local = threading.local()


def grammar(language: str) -> tree_sitter.Language:
    """The tree-sitter `Language` for a supported language name (made once, shared)."""
    found = _languages.get(language)
    if found is None:
        with _lock:
            found = _languages.get(language)
            if found is None:
                found = tree_sitter.Language(_loader(language)())
                _languages[language] = found
    return found


def parse(source: bytes, language: str) -> tree_sitter.Tree:
    """Parse `source` with `language`'s grammar. Never raises on odd bytes: tree-sitter
    recovers from errors and the tree holds what it could make sense of."""
    parsers: dict[str, tree_sitter.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(language)
    if parser is None:
        parser = tree_sitter.Parser(grammar(language))
        parsers[language] = parser
    prepare = grammar_for(language).prepare
    return parser.parse(source if prepare is None else prepare(source))
