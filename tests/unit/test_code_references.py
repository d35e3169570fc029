"""lantern.code.references: uses of a name are identifier tokens, never a word in a
comment or a string, and the ones that name a definition are marked."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import pytest
from lantern.code.definitions import scan_tree
from lantern.code.references import Use, quick_uses, search, uses

PYTHON = b'''"""retry is in this docstring."""
# retry is in this comment
RETRY = 3


def retry(times=RETRY):
    message = "call retry again"  # and retry here
    value = f"{retry} retry"
    return retry(times - 1), obj.retry, retry_count


class Client:
    def retry(self):
        return self.retry
'''


def _where(found: list[Use]) -> list[tuple[int, int, bool]]:
    return [(u.line, u.column, u.is_definition) for u in found]


def test_python_uses_skip_comments_strings_and_longer_words() -> None:
    assert _where(uses(PYTHON, "python", "retry")) == [
        (6, 4, True),  # def retry
        (8, 15, False),  # inside the f-string's {…}: code
        (9, 11, False),
        (9, 33, False),  # obj.retry
        (13, 8, True),  # Client.retry
        (14, 20, False),  # self.retry
    ]
    assert _where(uses(PYTHON, "python", "RETRY")) == [(3, 0, True), (6, 16, False)]
    assert uses(PYTHON, "python", "docstring") == []
    assert uses(PYTHON, "python", "again") == []


JAVASCRIPT = b"""// render is a comment
/* render in a block comment */
export function render(node) {
  const label = "render";
  const text = `render ${render.name} ${node}`;
  return { render, other: node.render };
}
const re = /render/;
class View { render() { return render(this); } }
"""


def test_javascript_uses_skip_comments_strings_templates_and_regexes() -> None:
    assert _where(uses(JAVASCRIPT, "javascript", "render")) == [
        (3, 16, True),
        (5, 25, False),  # ${render.name}: code inside the template
        (6, 11, False),  # shorthand property
        (6, 31, False),  # node.render
        (9, 13, True),  # View.render
        (9, 31, False),
    ]


def test_columns_are_bytes_and_lines_count_a_lone_cr() -> None:
    source = "é = 1\rx = é + é\r\n".encode()
    assert _where(uses(source, "python", "é")) == [(1, 0, False), (2, 4, False), (2, 9, False)]
    assert _where(uses(source, "python", "x")) == [(2, 0, False)]


def test_a_name_that_is_not_a_bare_identifier_finds_nothing() -> None:
    assert uses(PYTHON, "python", "") == []
    assert uses(PYTHON, "python", "Client.retry") == []
    assert uses(PYTHON, "python", "obj.retry") == []  # in the source, but two tokens
    assert uses(PYTHON, "python", "retry(") == []
    assert uses(PYTHON, "python", "(") == []


FIXTURES = Path(__file__).parent / "code_fixtures"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
SOURCES = [
    *[
        (FIXTURES / name, language)
        for name, language in [
            ("shapes.c", "c"),
            ("shapes.cpp", "cpp"),
            ("annotated.cpp", "cpp"),
            ("shapes.go", "go"),
            ("shapes.rs", "rust"),
            ("Shapes.java", "java"),
            ("shapes.js", "javascript"),
            ("shapes.ts", "typescript"),
            ("shapes.tsx", "tsx"),
            ("shapes.py.txt", "python"),
        ]
    ],
    (STDLIB / "argparse.py", "python"),
]


@pytest.mark.parametrize(("path", "language"), SOURCES, ids=lambda v: getattr(v, "name", v))
def test_quick_uses_are_those_of_the_whole_scan(path: Path, language: str) -> None:
    """find_references' search, which finds only the definitions around the name, marks
    and finds exactly what the search after a whole definitions scan does: for each word
    of the file (every 10th of a long one, and every definition's name), all its uses
    and the first two lines' worth."""
    source = path.read_bytes()
    scanned, tree = scan_tree(source, language)
    words = sorted({w.decode() for w in re.findall(rb"[A-Za-z_$][\w$]*", source)})
    assert len(words) > 20
    if len(words) > 200:
        words = sorted({*words[::10], *(d.name.rsplit(".", 1)[-1] for d in scanned.definitions)})
    for word in words:
        for most in (None, 2):
            expected = search(scanned, tree, language, word, most)
            assert quick_uses(source, language, word, most) == expected, word
