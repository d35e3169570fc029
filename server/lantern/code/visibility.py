"""Whether a top-level definition is public: meant for use outside its file, by its
language's own rule.

- Python: a name without a leading underscore (a dunder such as `__getattr__` is public).
- JavaScript, TypeScript, TSX: in a file with an `export` statement, what it exports (a
  declaration inside `export`, a name in an `export { … }` clause that has no `from`,
  `export default NAME`); in a file without one (a script, CommonJS), a name without a
  leading underscore.
- Go: a name that starts with an upper-case letter (a method: its own name).
- Rust: `pub` in any form (`pub(crate)` too) before the name.
- Java: the `public` modifier.
- C and C++: no `static` before the name, and (C++) not in an anonymous namespace.

The modifiers are read from the definition's header (its signature), the words before
its name; exports from the file's top-level statements, looked at once.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import tree_sitter

from lantern.code.grammars.common import field, text

# (start byte of the definition's node, its name, its signature) -> public
Judge = Callable[[int, str, str], bool]

_SCRIPTS = frozenset({"javascript", "typescript", "tsx"})
_MODIFIER = {"rust": "pub", "java": "public"}


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _underscore_public(name: str) -> bool:
    last = _last(name)
    dunder = len(last) > 4 and last.startswith("__") and last.endswith("__")
    return dunder or not last.startswith("_")


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _word_at(text: str, word: str) -> int:
    """Where `word` first stands as a whole word in `text`, or -1."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not (at and _is_word(text[at - 1])) and not (end < len(text) and _is_word(text[end])):
            return at
        at = text.find(word, at + 1)
    return -1


def _has_word(word: str, name: str, signature: str) -> bool:
    """Whether `word` stands in the header before the definition's own name (anywhere in
    it when the name is not found there)."""
    at = _word_at(signature, _last(name))
    return _word_at(signature if at < 0 else signature[:at], word) >= 0


def _within(starts: list[int], ends: list[int], at: int) -> bool:
    """Whether byte `at` is inside one of the sorted, disjoint ranges."""
    i = bisect.bisect_right(starts, at) - 1
    return i >= 0 and at < ends[i]


def _exports(tree: tree_sitter.Tree, source: bytes) -> tuple[list[int], list[int], set[str]]:
    """The byte ranges (starts, ends) of the top-level `export` statements, and the local
    names exported by clause or by `export default NAME`."""
    starts: list[int] = []
    ends: list[int] = []
    names: set[str] = set()
    for statement in tree.root_node.named_children:
        if statement.type != "export_statement":
            continue
        starts.append(statement.start_byte)
        ends.append(statement.end_byte)
        if field(statement, "source") is not None:
            continue  # `export { a } from "./m"` exports another file's names
        value = field(statement, "value")
        if value is not None and value.type == "identifier":
            names.add(text(value, source))
        for clause in statement.named_children:
            if clause.type != "export_clause":
                continue
            for specifier in clause.named_children:
                local = field(specifier, "name")
                if specifier.type == "export_specifier" and local is not None:
                    names.add(text(local, source))
    return starts, ends, names


def _exported(tree: tree_sitter.Tree, source: bytes) -> Judge | None:
    """The rule of a JavaScript or TypeScript module, or None for a file without `export`."""
    starts, ends, names = _exports(tree, source)
    if not starts:
        return None

    def judge(start: int, name: str, _signature: str) -> bool:
        return _within(starts, ends, start) or _last(name) in names

    return judge


def _not_static(tree: tree_sitter.Tree, language: str) -> Judge:
    """The C and C++ rule: no `static`, and not in a top-level anonymous namespace."""
    starts: list[int] = []
    ends: list[int] = []
    if language == "cpp":
        for node in tree.root_node.named_children:
            if node.type == "namespace_definition" and field(node, "name") is None:
                starts.append(node.start_byte)
                ends.append(node.end_byte)

    def judge(start: int, name: str, signature: str) -> bool:
        return not _has_word("static", name, signature) and not _within(starts, ends, start)

    return judge


def judge(language: str, tree: tree_sitter.Tree, source: bytes) -> Judge:
    """The rule that tells the file's public top-level definitions."""
    if language in _SCRIPTS:
        exported = _exported(tree, source)
        if exported is not None:
            return exported
    if language == "go":
        return lambda _start, name, _signature: _last(name)[:1].isupper()
    if language in _MODIFIER:
        word = _MODIFIER[language]
        return lambda _start, name, signature: _has_word(word, name, signature)
    if language in ("c", "cpp"):
        return _not_static(tree, language)
    return lambda _start, name, _signature: _underscore_public(name)
