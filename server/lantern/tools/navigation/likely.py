"""Which candidate files most likely define a name, judged from ripgrep's matching lines.

`find_symbol` parses candidate files in this order, so that on a big tree the files that
define the name are parsed first and a budget can leave the rest (`navigation/files.py`).
A line scores when the name stands where a definition puts it (no parse: a guess that
only chooses and orders files, never decides what is a definition):

- 2: after a defining keyword (`def`, `class`, `fn`, `func`, `function`, `type`,
  `interface`, `trait`, `module`, `namespace`, `typedef`, `#define`, …), after
  `struct`/`union`/`enum`/`class` with a body, a base list or nothing after it (not
  `struct name *p`), or at `} name;` (the end of a C `typedef`);
- 1: a declaration-like head (`int name(…` or `public void name(…` not ending in `;`,
  at the start of a line in C and C++ also `name (…`,
  a method header `name(…) {`, `name = …`, `const name: T`): only words, spaces,
  `*&:<>,[]` and parenthesised attributes before the name, never a call's `(`, `.`,
  `->` or `return`.

A file's score is its best line's, plus 1 when its file name (less its suffix, `_` and
`-`, any case) is the name. ripgrep reports at most `MAX_LINES` matching lines a file
(`--json`, read as it streams: only the scores are kept).
"""

from __future__ import annotations

import json
import re

from lantern.code.languages import language_for
from lantern.tools.ripgrep.hits import rg_text
from lantern.workspace.ignore.files import NeedsWorker, inline_now

_C_LIKE = frozenset({"c", "cpp"})
MAX_LINES = 64  # matching lines a file that ripgrep reports (`--max-count`)
MAX_LINE_CHARS = 1000  # a longer line is not scored (minified code)
INLINE_BYTES = 64 << 10  # more output than this is scored on a worker thread
_KEYWORDS = (
    "def|class|fn|func|function|type|interface|trait|module|namespace|typedef"
    "|macro_rules!|record|protocol|object|impl|mod"
)
_NOT_HEADS = frozenset(
    [
        "return",
        "else",
        "case",
        "goto",
        "sizeof",
        "new",
        "await",
        "yield",
        "throw",
        "do",
        "if",
        "while",
        "for",
        "switch",
        "not",
        "and",
        "or",
        "in",
        "is",
        "delete",
        "typeof",
        "print",
    ]
)


class Likely:
    """Scores the lines where one name stands as a word."""

    def __init__(self, name: str) -> None:
        word = re.escape(name)
        before, after = r"(?<![\w$])", r"(?![\w$])"
        self._bodied = re.compile(rf"\b(?:struct|union|enum|class)\s+{word}{after}\s*(?:[{{:(]|$)")
        # A keyword before the name (a Go receiver or pointer stars between them).
        self._keyword = re.compile(
            rf"(?:^|[^\w$.])(?:{_KEYWORDS})\s+(?:\([^)]*\)\s*)?\**{word}{after}"
        )
        self._define = re.compile(rf"^\s*#\s*define\s+{word}{after}")
        self._typedef_end = re.compile(rf"^\s*\}}\s*{word}\s*;")
        # Only declaration-like text (and parenthesised attributes) before the name.
        self._head = re.compile(
            rf"^(\s*)((?:\([^()]*\)|[\w$\s*&:<>,\[\]])*?){before}{word}{after}\s*(\(|==|=|::|:)?"
        )
        self._plain = name.replace("_", "").casefold()

    def line(self, text: str, c_like: bool = False) -> int:
        """2: the name is defined here; 1: it may be; 0: a use, as far as one line says.
        `c_like` (C, C++): a name followed by `(` at the very start of a line, as GNU
        style puts a function's, may be a definition; elsewhere that is a call."""
        if len(text) > MAX_LINE_CHARS:
            return 0
        if (
            self._bodied.search(text)
            or self._keyword.search(text)
            or self._define.match(text)
            or self._typedef_end.match(text)
        ):
            return 2
        head = self._head.match(text)
        if head is None:
            return 0
        words = re.sub(r"\([^()]*\)", " ", head.group(2)).split()
        if words and words[0] in _NOT_HEADS:
            return 0
        follows = head.group(3)
        stripped = text.rstrip()
        if follows == "(":
            if stripped.endswith(";"):
                return 0  # a call, or a prototype
            at_start = not head.group(1) and c_like
            return 1 if at_start or words or stripped.endswith("{") else 0
        return 1 if follows == "=" or (follows == ":" and words) else 0

    def named(self, file_name: str) -> int:
        """1 when the file is named for the name (`task_struct.h`, `ClientModel.java`)."""
        stem = file_name.rsplit(".", 1)[0].replace("_", "").replace("-", "").casefold()
        return int(bool(stem) and stem == self._plain)


class Scores:
    """ripgrep's `--json` matches, read as they stream: each file's best line score, and
    the files in the order ripgrep named them."""

    def __init__(self, likely: Likely) -> None:
        self.likely = likely
        self.best: dict[str, int] = {}
        self._rest = b""

    def feed(self, chunk: bytes, final: bool) -> None:
        """A piece of ripgrep's output (`final`: the last). On the event loop, a big piece
        is kept for a worker thread (`NeedsWorker`: `ripgrep.pump`)."""
        if inline_now() and len(self._rest) + len(chunk) > INLINE_BYTES:
            self._rest += chunk
            raise NeedsWorker
        lines = (self._rest + chunk).split(b"\n")
        self._rest = b"" if final else lines.pop()
        for raw in lines:
            if raw.startswith(b'{"type":"match"'):
                self._match(raw)

    def _match(self, raw: bytes) -> None:
        try:
            data = json.loads(raw).get("data")
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        path = rg_text(data.get("path"))
        if path is None:
            return
        text = rg_text(data.get("lines"))
        c_like = language_for(path) in _C_LIKE
        score = self.likely.line(text, c_like) if text is not None else 0
        if score > self.best.get(path, -1):
            self.best[path] = score
