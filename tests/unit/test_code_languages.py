"""lantern.code.languages, and the engine on hostile input: any bytes, huge files and
very deep nesting give an answer (what tree-sitter could make of them), never an error
or a Python recursion."""

from __future__ import annotations

import random
import threading

import pytest
from lantern.code.definitions import MAX_DEPTH, definitions, scan
from lantern.code.languages import LANGUAGES, language_for, parse
from lantern.code.references import uses

from tests.hang import HANG_S

EXTENSIONS = {
    "python": [".py", ".pyi"],
    "javascript": [".js", ".mjs", ".cjs", ".jsx"],
    "typescript": [".ts", ".mts", ".cts"],
    "tsx": [".tsx"],
    "go": [".go"],
    "rust": [".rs"],
    "java": [".java"],
    "c": [".c", ".h"],
    "cpp": [".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"],
}


def test_every_language_has_its_extensions_in_any_case() -> None:
    assert sorted(EXTENSIONS) == sorted(LANGUAGES)
    for language, extensions in EXTENSIONS.items():
        for extension in extensions:
            assert language_for(f"src/module{extension}") == language
            assert language_for(f"SRC/MODULE{extension.upper()}") == language
            assert language_for(f"dir\\name{extension}") == language


@pytest.mark.parametrize(
    "path", ["README.md", "Makefile", "src/app.py.bak", ".py", "dir/.js", "a.pyc", "x.hs", ""]
)
def test_other_files_have_no_language(path: str) -> None:
    assert language_for(path) is None


def test_an_unknown_language_name_is_refused() -> None:
    with pytest.raises(ValueError):
        definitions(b"x", "cobol")


def test_parsers_work_from_many_threads_at_once() -> None:
    source = b"".join(b"def f%d(a):\n    return a\n" % i for i in range(300))
    results: list[int] = []

    def work() -> None:
        for _ in range(5):
            results.append(len(definitions(source, "python")))
            parse(b"function f() {}", "javascript")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_S)
        assert not thread.is_alive()
    assert results == [300] * 20


def _hostile() -> dict[str, bytes]:
    rng = random.Random(19)
    return {
        "empty": b"",
        "bom": b"\xef\xbb\xbf",
        "line ends": b"\r\n\r\r\n\n",
        "random": rng.randbytes(64_000),
        "nul-and-high": bytes(range(256)) * 200,
        "parens": b"x = " + b"(" * 100_000 + b"a" + b")" * 100_000 + b"\n",
        "brackets": b"[" * 100_000,
        "braces": b"{" * 100_000 + b"}" * 100_000,
        "unclosed-string": b'x = "' + b"a" * 50_000,
        "functions": b"function a(){" * 5_000 + b"}" * 5_000,
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_hostile_input_never_raises(language: str) -> None:
    for name, source in _hostile().items():
        found = definitions(source, language)
        assert all(d.start <= d.end for d in found), name
        assert isinstance(uses(source, language, "a"), list), name


def test_deeply_nested_definitions_are_nested_without_recursion() -> None:
    depth = 5_000
    source = b"function a(){" * depth + b"}" * depth
    found = scan(source, "javascript")
    assert len(found.definitions) == MAX_DEPTH + 1  # the rest are counted
    assert found.definitions[-1].depth == MAX_DEPTH
    assert found.definitions[-1].name == ".".join(["a"] * (MAX_DEPTH + 1))
    assert found.unlisted.nested == depth - MAX_DEPTH - 1


@pytest.mark.parametrize(
    ("language", "unit"),
    [
        ("python", b'class C:\n    def m(self, x):\n        return g(x, "s", [1, 2])  # c\n'),
        ("javascript", b"export class C {\n  m(x) {\n    return g(x, `s`, [1, 2]); // c\n  }\n}\n"),
    ],
)
def test_a_2_mb_file_is_read_whole(language: str, unit: bytes) -> None:
    count = (2 << 20) // len(unit) + 1
    found = definitions(unit * count, language)
    assert len(found) == 2 * count
    lines = unit.count(b"\n")
    assert (found[-1].name, found[-1].start) == ("C.m", (count - 1) * lines + 2)
    assert len(uses(unit * count, language, "g")) == count


def test_a_huge_syntax_error_keeps_the_definitions_around_it() -> None:
    source = b"def before():\n    pass\n" + b"[" * 60_000 + b" gone\ndef after():\n    pass\n"
    assert [d.name for d in definitions(source, "python")][:1] == ["before"]
    assert [u.line for u in uses(source, "python", "before")] == [1]
    assert [u.line for u in uses(source, "python", "gone")] == [3]
