"""Well-known token shapes (cloud, chat and model-provider keys, JWTs), also when a token is
split across string literals (`"sk-proj-" + "abc…"`, `'ghp_' 'xyz…'`).

No pattern here crosses a line end, except a chain of literals joined over one line
break; only the literals' contents change, so lines keep their numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from lantern.workspace.redact.lazy import Lazy
from lantern.workspace.redact.literals import Literals
from lantern.workspace.redact.saas import HINTED_RULES, PREFIX_OF, SAAS_RULES
from lantern.workspace.redact.values import Edit, LineOf, Span, apply_edits, marker


def _token(prefix: str, width: int, alphabet: str, body: str) -> Lazy:
    """Match ``prefix`` (a regex of fixed ``width``) + ``body``, but not right after a
    character of ``alphabet``. The lookbehind sits after the prefix, not before it, so
    ``re`` can still scan for the literal prefix instead of trying every position. A
    character that ends a backslash escape (``\\n`` in JSON) does not count."""
    pattern = Lazy(f"(?:{prefix})(?<!(?<!\\\\)[{alphabet}].{{{width}}}){body}")
    if re.escape(prefix) == prefix:  # a plain literal: skip texts without it
        PREFIX_OF[pattern] = prefix
    return pattern


def _has_digit(token: str) -> bool:
    return _DIGIT.search(token) is not None


_DIGIT = re.compile("[0-9]")
_AWS_PREFIX = "A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASCA|ABIA|ACCA"
_B64URL = "A-Za-z0-9_-"

# (rule, pattern, extra check on the match); a rule may have several patterns.
TOKEN_RULES: list[tuple[str, Lazy, Callable[[str], bool] | None]] = [
    ("aws_access_key", _token(_AWS_PREFIX, 4, "A-Za-z0-9", "[A-Z0-9]{16}(?![A-Za-z0-9])"), None),
    ("github_token", _token("gh[pousr]_", 4, "A-Za-z0-9_", "[A-Za-z0-9]{36,}+"), None),
    ("github_token", _token("github_pat_", 11, "A-Za-z0-9_", "[A-Za-z0-9_]{22,}+"), None),
    ("slack_token", _token("xox[abeoprs]-|xapp-", 5, _B64URL, "[A-Za-z0-9-]{10,}+"), None),
    (
        "slack_token",
        Lazy(r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{8,}+"),
        None,
    ),
    ("anthropic_key", _token("sk-ant-", 7, _B64URL, f"[{_B64URL}]{{20,}}+"), None),
    ("openai_key", _token("sk-", 3, _B64URL, f"(?!ant-)[{_B64URL}]{{20,}}+"), _has_digit),
    ("google_api_key", _token("AIza", 4, _B64URL, f"[{_B64URL}]{{35}}(?![{_B64URL}])"), None),
    ("stripe_key", _token("[sr]k_(?:live|test)_", 8, "A-Za-z0-9_", "[A-Za-z0-9]{16,}+"), None),
    ("npm_token", _token("npm_", 4, "A-Za-z0-9_", "[A-Za-z0-9]{36}(?![A-Za-z0-9])"), None),
    ("gitlab_token", _token("glpat-", 6, _B64URL, "[A-Za-z0-9_-]{20,}+"), None),
    ("huggingface_token", _token("hf_", 3, "A-Za-z0-9_", "[A-Za-z]{34,}+"), None),
    ("pypi_token", _token("pypi-AgE", 8, _B64URL, f"[{_B64URL}]{{50,}}+"), None),
    (
        "jwt",
        _token("eyJ", 3, _B64URL, f"[{_B64URL}]*+\\.eyJ[{_B64URL}]*+\\.[{_B64URL}]++"),
        None,
    ),
    *SAAS_RULES,
]


# The literal prefixes and hints, all found in one scan of a text before the rules run.
# A rule's marker may add one (`[REDACTED:npm_token]` holds `npm_`): those few are asked
# of the text as it is when their rule's turn comes, as every literal once was.
_LITERALS = Literals([*PREFIX_OF.values(), *(hint for _, hint, _ in HINTED_RULES)])


@cache
def _in_markers() -> frozenset[str]:
    """The literals that some marker of these rules holds."""
    rules = {rule for rule, _, _ in TOKEN_RULES} | {rule for rule, _, _ in HINTED_RULES}
    return frozenset(_LITERALS.held(" ".join(marker(rule) for rule in sorted(rules))))


def tokens(text: str) -> tuple[str, list[Span]]:
    spans: list[Span] = []
    held, marked = _LITERALS.held(text), _in_markers()
    for rule, pattern, check in TOKEN_RULES:
        prefix = PREFIX_OF.get(pattern)
        absent = prefix is not None and prefix not in held
        if absent and (prefix not in marked or prefix not in text):
            continue
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

        text = pattern.sub(replace, text)
    for rule, hint, pattern in HINTED_RULES:
        if hint in held or (hint in marked and hint in text):
            text = _sub_hinted(rule, pattern, text, spans)
    return text, spans


def _sub_hinted(rule: str, pattern: Lazy, text: str, spans: list[Span]) -> str:
    line_of = LineOf(text)

    def replace(match: re.Match[str]) -> str:
        line = line_of(match.start())
        spans.append((rule, line, line))
        return marker(rule)

    return pattern.sub(replace, text)


# --- tokens split across string literals -------------------------------------------------

# A short, one-line string literal. Scanning left to right pairs the quotes as a reader
# would in ordinary code.
_LITERAL = re.compile(r"""(["'`])([^"'`\\\n]{0,256}+)\1""")
# What may join two literals: nothing (C, Python), `+`, `.` (PHP), `..` (Lua), `||` (SQL),
# `&` (VB), with at most one line break.
_JOIN = r"[ \t]*+(?:\+|\.\.?|\|\||&)?[ \t]*+"
_GAP = re.compile(rf"{_JOIN}(?:\\?\r?\n{_JOIN})?")
_PREFIX_HINT = re.compile(r"[_-]$|^(?:AKIA|ASIA|AIza|eyJ|sk|xox[bpars]|xapp|gh[pousr]|github)")
# Two or more literals joined: found by one scan, then split into literals.
_BODY = r"""[^"'`\\\n]{0,256}+"""
_CHAIN = re.compile(rf"""(["'`]){_BODY}\1(?:{_GAP.pattern}(["'`]){_BODY}\2)++""")


def split_tokens(text: str) -> tuple[str, list[Span]]:
    """Join each chain of adjacent literals and look for a token in the joined text; a
    token that spans literals replaces them all (the first holds the marker)."""
    edits: list[Edit] = []
    spans: list[Span] = []
    line_of = LineOf(text)
    for chain in _CHAIN.finditer(text):
        literals = list(_LITERAL.finditer(text, chain.start(), chain.end()))
        _check_chain(literals, edits, spans, line_of)
    return apply_edits(text, edits), spans


def _check_chain(
    chain: list[re.Match[str]],
    edits: list[tuple[int, int, str]],
    spans: list[Span],
    line_of: LineOf,
) -> None:
    if len(chain) < 2 or not any(_PREFIX_HINT.search(m.group(2)) for m in chain):
        return
    bodies = [m.group(2) for m in chain]
    starts: list[int] = []  # where each body starts in the joined text
    at = 0
    for body in bodies:
        starts.append(at)
        at += len(body)
    joined = "".join(bodies)
    for rule, pattern, check in TOKEN_RULES:
        for found in pattern.finditer(joined):
            if check is not None and not check(found.group()):
                continue
            first = max(i for i, s in enumerate(starts) if s <= found.start())
            last = max(i for i, s in enumerate(starts) if s < found.end())
            if first == last:
                continue  # inside one literal: the plain token rule already ran
            for i in range(first, last + 1):
                keep_before = found.start() - starts[i] if i == first else 0
                keep_after = found.end() - starts[i] if i == last else len(bodies[i])
                new = bodies[i][:keep_before] + (marker(rule) if i == first else "")
                new += bodies[i][keep_after:]
                edits.append((chain[i].start(2), chain[i].end(2), new))
            spans.append((rule, line_of(chain[first].start()), line_of(chain[last].start())))
            return
