"""Remove secrets from text before it is sent to an LLM.

``redact(text)`` returns a :class:`Redaction`: the text with every secret replaced by
``[REDACTED:<rule>]`` and a count of replacements per rule. Rules run in this order, each
on the output of the previous one, so a secret is redacted once, by the most specific rule:

1. ``private_key``: a PEM/PGP block from ``-----BEGIN ... PRIVATE KEY-----`` (RSA, EC, DSA,
   OPENSSH, ENCRYPTED, plain, ``PGP PRIVATE KEY BLOCK``) to the matching ``-----END``
   line, or to the end of the text when there is no END. The block becomes
   ``[REDACTED:private_key]`` followed by as many ``\\n`` as the block contained, so every
   line after it keeps its line number (callers cite ``path:line``).
2. Well-known token shapes, each anchored on a negative lookbehind for its alphabet so a
   match can only start at a token boundary:
   ``aws_access_key`` (``AKIA``/``ASIA``/``AGPA``/``AIDA``/``AROA``/... + 16 ``[A-Z0-9]``),
   ``github_token`` (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36+ base62,
   ``github_pat_`` + 22+ ``[A-Za-z0-9_]``), ``slack_token`` (``xox[bpars]-``, ``xapp-``,
   ``hooks.slack.com`` webhook URLs), ``anthropic_key`` (``sk-ant-`` + 20+),
   ``openai_key`` (``sk-``, ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-`` + 20+, never
   ``sk-ant-``; the body must contain a digit, which spares prose like ``sk-learn-...``),
   ``google_api_key`` (``AIza`` + 35), ``stripe_key`` (``sk_live_``/``rk_live_``/
   ``sk_test_``/``rk_test_`` + 16+), ``jwt`` (``eyJ...`` ``.`` ``eyJ...`` ``.`` signature).
3. ``assignment``: ``NAME=value``, ``NAME: value``, ``NAME := value``, ``export NAME=value``,
   ``--name=value``, ``"name": "value"``, ``'name' => 'value'``, ``name = "value"``,
   ``name: str = "value"`` where NAME (case-insensitive) contains ``key``, ``secret``,
   ``token``, ``passw``, ``pwd``, ``credential`` or ``auth``. Only the value is replaced:
   ``API_KEY="[REDACTED:assignment]"``; after an ``Authorization``-style scheme word
   (``Bearer``, ``Basic``, ``token``, ``bot``) only the credential after it. The value
   must look random:

   * 8 to 1024 characters (``MIN_VALUE_LENGTH``, ``MAX_VALUE_LENGTH``), no whitespace
     (spares prose and passphrases), not already a ``[REDACTED:`` marker;
   * not a reference/placeholder: not starting with ``$``, ``%`` or ``<``, no ``${`` or
     ``{{``; an unquoted value must not be followed by ``(`` or ``[`` (a call or a
     subscript: ``getpass()``, ``os.environ["X"]``) nor be a dotted name
     (``settings.SECRET``);
   * Shannon entropy >= 3.0 bits per character (``MIN_ENTROPY_BITS``): an 8-character
     value needs 8 distinct characters; ``aaaaaaa1``, ``xxxxxxxx``, ``12121212`` fail;
   * at least two of the classes {lower, upper, digit, symbol}, one of which is digit or
     symbol. ``_`` and ``.`` do not count as symbols, so ``snake_case`` and
     ``dotted.names`` are one class; mixed-case letters alone are not enough (a random
     secret of letters only is missed: the price of not flagging ``camelCaseNames``).
   Examples redacted: ``s3cr3t-P4ssw0rd-9f8e7d`` (3.9 bits), a 40-character AWS secret
   key (4.7 bits), a 32-digit hex string (3.6 bits). Left alone: ``getpass()``,
   ``settings.SECRET``, ``None``, ``"${TOKEN}"``, ``"Bearer"``, ``default_password``.

Linear time: the regexes never nest unbounded quantifiers, use possessive quantifiers
so a failed attempt cannot backtrack, bound the assignment parts ({0,64}, {8,1024}), and
can only start at a token or word boundary; the private-key scan searches for END once
per BEGIN and resumes after it. A 1 MB adversarial line takes about 0.1 s.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Redaction", "redact"]

MIN_VALUE_LENGTH = 8
MAX_VALUE_LENGTH = 1024
MIN_ENTROPY_BITS = 3.0


@dataclass(frozen=True)
class Redaction:
    """Redacted text and the number of replacements per rule (only rules that fired)."""

    text: str
    counts: dict[str, int]

    @property
    def count(self) -> int:
        """Total number of replacements."""
        return sum(self.counts.values())


def _marker(rule: str) -> str:
    return f"[REDACTED:{rule}]"


# --- 1. private keys ---------------------------------------------------------------------

_KEY_LABEL = r"(?:[A-Z0-9]++ ){0,4}?PRIVATE KEY(?: BLOCK)?-----"
_KEY_BEGIN = re.compile(r"-----BEGIN " + _KEY_LABEL)
_KEY_END = re.compile(r"-----END " + _KEY_LABEL)


def _redact_private_keys(text: str) -> tuple[str, int]:
    parts: list[str] = []
    pos = count = 0
    while (begin := _KEY_BEGIN.search(text, pos)) is not None:
        end = _KEY_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        block_newlines = text.count("\n", begin.start(), stop)
        parts += [text[pos : begin.start()], _marker("private_key"), "\n" * block_newlines]
        pos = stop
        count += 1
    parts.append(text[pos:])
    return "".join(parts), count


# --- 2. well-known tokens ----------------------------------------------------------------


def _token(prefix: str, width: int, alphabet: str, body: str) -> re.Pattern[str]:
    """Match ``prefix`` (a regex of fixed ``width``) + ``body``, but not right after a
    character of ``alphabet``. The lookbehind sits after the prefix, not before it, so
    ``re`` can still scan for the literal prefix instead of trying every position."""
    return re.compile(f"(?:{prefix})(?<![{alphabet}].{{{width}}}){body}")


def _has_digit(token: str) -> bool:
    return _DIGIT.search(token) is not None


_DIGIT = re.compile("[0-9]")

_AWS_PREFIX = "A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASCA|ABIA|ACCA"
_B64URL = "A-Za-z0-9_-"

# (rule, pattern, extra check on the match); a rule may have several patterns.
_TOKEN_RULES: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] = [
    ("aws_access_key", _token(_AWS_PREFIX, 4, "A-Za-z0-9", "[A-Z0-9]{16}(?![A-Za-z0-9])"), None),
    ("github_token", _token("gh[pousr]_", 4, "A-Za-z0-9_", "[A-Za-z0-9]{36,}+"), None),
    ("github_token", _token("github_pat_", 11, "A-Za-z0-9_", "[A-Za-z0-9_]{22,}+"), None),
    ("slack_token", _token("xox[bpars]-|xapp-", 5, _B64URL, "[A-Za-z0-9-]{10,}+"), None),
    (
        "slack_token",
        re.compile(r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{8,}+"),
        None,
    ),
    ("anthropic_key", _token("sk-ant-", 7, _B64URL, f"[{_B64URL}]{{20,}}+"), None),
    ("openai_key", _token("sk-", 3, _B64URL, f"(?!ant-)[{_B64URL}]{{20,}}+"), _has_digit),
    ("google_api_key", _token("AIza", 4, _B64URL, f"[{_B64URL}]{{35}}(?![{_B64URL}])"), None),
    ("stripe_key", _token("[sr]k_(?:live|test)_", 8, "A-Za-z0-9_", "[A-Za-z0-9]{16,}+"), None),
    (
        "jwt",
        _token("eyJ", 3, _B64URL, f"[{_B64URL}]*+\\.eyJ[{_B64URL}]*+\\.[{_B64URL}]++"),
        None,
    ),
]


def _redact_tokens(
    text: str, pattern: re.Pattern[str], rule: str, check: Callable[[str], bool] | None
) -> tuple[str, int]:
    if check is None:
        return pattern.subn(_marker(rule), text)
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if not check(match.group()):
            return match.group()
        count += 1
        return _marker(rule)

    return pattern.sub(replace, text), count


# --- 3. assignments ----------------------------------------------------------------------

_VALUE_CHAR = r"""[^\s"'`=:,;(){}\[\]<>\\]"""
_AUTH_SCHEME = r"(?:(?i:bearer|basic|token|bot)[ ]{1,8}+)?"  # "Authorization: Bearer <value>"
_ASSIGNMENT = re.compile(
    r"""
    (?<![A-Za-z0-9_.\-])                    # the name starts at a word boundary
    -{0,2}+                                 # --password=...
    (?P<nq>["']?)                           # "name": ... / 'name' => ...
    (?=[A-Za-z0-9_.\-]{0,60}?(?i:key|secret|token|passw|pwd|credential|auth))
    [A-Za-z_][A-Za-z0-9_.\-]{0,63}+
    (?P=nq)
    (?:[ \t]{0,8}+:[ \t]{0,8}+[A-Za-z_][A-Za-z0-9_.|\[\],\ \t]{0,64}+(?<=[ \t])(?==))?
    [ \t]{0,8}+(?::=|=>|=|:)[ \t]{0,8}+     # = : := =>
    (?:
        "SCHEME(?P<dq>[^"\r\n]{LEN}+)"
      | 'SCHEME(?P<sq>[^'\r\n]{LEN}+)'
      | `SCHEME(?P<bq>[^`\r\n]{LEN}+)`
      | SCHEME(?P<bare>VALUE{LEN}+={0,2}+)(?![^\s"'`=:,;){}\]<>\\])
    )
    """.replace("VALUE", _VALUE_CHAR)
    .replace("SCHEME", _AUTH_SCHEME)
    .replace("{LEN}", f"{{{MIN_VALUE_LENGTH},{MAX_VALUE_LENGTH}}}"),
    re.VERBOSE,
)
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)++")


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _looks_random(value: str, bare: bool) -> bool:
    if "[REDACTED:" in value or any(c.isspace() for c in value):
        return False
    if value.startswith(("$", "%", "<")) or "${" in value or "{{" in value:
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


_KEYWORD = re.compile(r"key|secret|token|passw|pwd|credential|auth")


def _redact_assignments(text: str) -> tuple[str, int]:
    """Run the assignment pattern only on lines that name a secret-like keyword.

    No part of `_ASSIGNMENT` crosses a line end, so skipping the other lines gives the
    same result; it saves scanning every identifier of ordinary code. Non-ASCII text
    keeps the full scan, since `(?i)` also folds letters like `ſ` or the Kelvin sign.
    """
    if not text.isascii():
        return _assignments_in(text)
    lowered = text.lower()
    pieces: list[str] = []
    count = 0
    pos = 0
    for hit in _KEYWORD.finditer(lowered):
        if hit.start() < pos:
            continue  # that line is done
        line_start = max(pos, text.rfind("\n", pos, hit.start()) + 1)
        line_end = text.find("\n", hit.end())
        line_end = len(text) if line_end < 0 else line_end
        done, n = _assignments_in(text[line_start:line_end])
        pieces += [text[pos:line_start], done]
        count += n
        pos = line_end
    if not pieces:
        return text, 0
    pieces.append(text[pos:])
    return "".join(pieces), count


def _assignments_in(text: str) -> tuple[str, int]:
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        group = next(g for g in ("dq", "sq", "bq", "bare") if match.group(g) is not None)
        if not _looks_random(match.group(group), bare=group == "bare"):
            return match.group()
        count += 1
        start, end = match.span(group)
        offset = match.start()
        whole = match.group()
        return whole[: start - offset] + _marker("assignment") + whole[end - offset :]

    return _ASSIGNMENT.sub(replace, text), count


# --- public API --------------------------------------------------------------------------


def redact(text: str) -> Redaction:
    """Replace secrets in ``text`` with ``[REDACTED:<rule>]``; see the module docstring."""
    counts: dict[str, int] = {}
    text, n = _redact_private_keys(text)
    if n:
        counts["private_key"] = n
    for rule, pattern, check in _TOKEN_RULES:
        text, n = _redact_tokens(text, pattern, rule, check)
        if n:
            counts[rule] = counts.get(rule, 0) + n
    text, n = _redact_assignments(text)
    if n:
        counts["assignment"] = n
    return Redaction(text=text, counts=counts)
