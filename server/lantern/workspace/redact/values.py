"""What every redaction rule shares: the marker, the secret-like names, "does it look random".

A rule finds a candidate (a value after a secret-like name, a password in a URL, ...)
and asks these checks whether to replace it, so the rules agree on what is a secret
and what is ordinary code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

MIN_VALUE_LENGTH = 8
MIN_ENTROPY_BITS = 3.0
MIN_PASSWORD_LENGTH = 6

# A name is secret-like when it holds one of these (case-insensitive). `pass` and `pw`
# only count as whole words (`DB_PASS`, `pw`), so `bypass` or `compass` do not.
KEYWORD = r"(?i:key|secret|token|passw|pwd|credential|auth|(?<![a-z])(?:pass|pw)(?![a-z]))"
# The cheap, over-matching form used to pick the lines worth a full scan.
KEYWORD_HINT = re.compile(r"key|secret|token|pass|pwd|pw|credential|auth")
# Names whose value is a password even when it does not look random (`hunter42`).
_PASSWORD_NAME = re.compile(r"(?i:passw|pwd|passphrase|(?<![a-z])(?:pass|pw)(?![a-z]))")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)++")


def marker(rule: str) -> str:
    return f"[REDACTED:{rule}]"


def is_password_name(name: str) -> bool:
    return _PASSWORD_NAME.search(name) is not None


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# What only stands for a value: a `%` conversion (`%s`, `%(pw)s`, `%-8.2f`; followed by no
# letter or digit, so `%k9!Lq2` and `%d8Kq` are passwords), a Windows `%VAR%`, and a value
# made of nothing but `<password>`-style names (`<user>:<password>`). A value that merely
# starts with `%` or `<` is not one.
_CONVERSION = re.compile(
    r"%(?:\([\w.]{0,64}+\))?+[-+ #0]{0,4}+[0-9]{0,4}+(?:\.[0-9]{1,4}+)?+[sdrifxXeEgGcbouqa]"
    r"(?![A-Za-z0-9])|%[A-Za-z_][A-Za-z0-9_]{0,64}+%"
)
_ANGLE_NAME = re.compile(r"<[A-Za-z_][\w .:/-]{0,64}+>")


def is_placeholder(value: str) -> bool:
    """A reference or template, not a value: `$X`, `${X}`, `%s`, `%(x)s/y`, `%X%`,
    `<password>`, `<user>:<password>`, `{{x}}`, `***`. A password such as `%k9!Lq2` or
    `<Zr8#p` is not one."""
    if "[REDACTED:" in value or not value.strip("*x. "):
        return True
    if value.startswith("$") or "${" in value or "{{" in value:
        return True
    if "%" in value and _CONVERSION.search(value) is not None:
        return True
    return value.startswith("<") and not _ANGLE_NAME.sub("", value).strip(":@/.,;- ")


def looks_random(value: str, *, bare: bool) -> bool:
    """Whether `value` looks like a generated secret (see the rules in redact.py).

    `bare` values (unquoted) may also be code: a dotted name like `settings.SECRET`.
    """
    if len(value) < MIN_VALUE_LENGTH or is_placeholder(value):
        return False
    if any(c.isspace() for c in value):
        return False
    if bare and _DOTTED_NAME.fullmatch(value):
        return False
    if _entropy(value) < MIN_ENTROPY_BITS:
        return False
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in "_." for c in value)
    return (digit or symbol) and lower + upper + digit + symbol >= 2


def is_secret_value(name: str, value: str, *, bare: bool) -> bool:
    """`looks_random`, or, after a password-like name, a quoted word with a digit in it."""
    if looks_random(value, bare=bare):
        return True
    if bare or not is_password_name(name) or len(value) < MIN_PASSWORD_LENGTH:
        return False
    if is_placeholder(value) or any(c.isspace() for c in value):
        return False
    return any(c.isdigit() for c in value)


# (rule, first line, last line): one replaced secret and the 0-based lines it covered.
Span = tuple[str, int, int]
# (start, end, replacement) in the text a rule scanned; sorted, never overlapping.
Edit = tuple[int, int, str]


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with every edit made, in one pass."""
    if not edits:
        return text
    parts: list[str] = []
    pos = 0
    for start, end, new in edits:
        parts += [text[pos:start], new]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


class LineOf:
    """The 0-based line of positions in `text`, asked in increasing order (linear overall)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 0

    def __call__(self, pos: int) -> int:
        if pos < self._pos:  # out of order: count from the start again
            self._pos = self._line = 0
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line


def on_lines(
    text: str, literals: tuple[str, ...], fix: Callable[[str, int], str], *, fold: bool = False
) -> str:
    """`text` with `fix(line, line number)` applied to each line holding one of `literals`
    (found by `str.find`, so other lines cost nothing; `fold`: case-insensitively).
    Non-ASCII text with `fold` is scanned whole, since lower-casing may change lengths."""
    if fold and not text.isascii():
        return fix(text, 0)
    hay = text.lower() if fold else text
    lines: set[int] = set()
    for literal in literals:
        pos = hay.find(literal)
        while pos >= 0:
            lines.add(text.rfind("\n", 0, pos) + 1)
            end = text.find("\n", pos)
            pos = -1 if end < 0 else hay.find(literal, end)
    if not lines:
        return text
    parts: list[str] = []
    done = 0
    line_of = LineOf(text)
    for start in sorted(lines):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        parts += [text[done:start], fix(text[start:end], line_of(start))]
        done = end
    parts.append(text[done:])
    return "".join(parts)
