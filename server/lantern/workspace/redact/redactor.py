"""Remove secrets from text before it is sent to an LLM.

``redact(text)`` returns a :class:`Redaction`: the text with every secret replaced by
``[REDACTED:<rule>]``, a count of replacements per rule, and the lines each one covered.

**Lines are kept.** The result has exactly as many lines (``\\n``) as the input, and
line N of the result is the redacted line N of the input: a secret that spans lines (a
private key block, a YAML value below its key) has every one of its lines replaced by
the marker (indentation kept), and no rule removes or adds a line end. So a caller may
redact a whole file and then pick lines by number (search hits, a read_file window),
and ``Redaction.counts_in(first, last)`` says which secrets touched the lines it shows.

Rules run in this order, each on the output of the previous one, so a secret is
redacted once, by the most specific rule:

1. ``private_key``: a PEM/PGP block from ``-----BEGIN ... PRIVATE KEY-----`` (RSA, EC,
   DSA, OPENSSH, ENCRYPTED, plain, ``PGP PRIVATE KEY BLOCK``) or an SSH2 (RFC 4716)
   block from ``---- BEGIN SSH2 ... PRIVATE KEY ----`` to the matching END line,
   or to the end of the text when there is no END; and a PuTTY ``.ppk`` key from its
   ``PuTTY-User-Key-File-N:`` (or ``Private-Lines: N``) line to its ``Private-MAC:``
   line.
2. Well-known token shapes, each anchored so a match can only start at a token
   boundary: ``aws_access_key``, ``github_token``, ``slack_token``, ``anthropic_key``,
   ``openai_key`` (the body must contain a digit, which spares ``sk-learn-...``),
   ``google_api_key``, ``stripe_key``, ``npm_token``, ``gitlab_token``,
   ``huggingface_token``, ``pypi_token``, ``jwt``, and the prefixed formats of
   ``saas.py`` (GitLab's family, Slack ``xoxe-``, ``GOCSPX-``, ``whsec_``, Groq, xAI,
   LangSmith, Replicate, …); also when the token is split across adjacent string
   literals (``"sk-proj-" + "abc…"``, ``'ghp_' 'xyz…'``, ``..``, ``||``, one line break
   allowed): the literals' contents are replaced.
3. ``url_password``: the password of ``scheme://user:password@host`` (``postgres://``,
   ``mongodb+srv://``, ``redis://:pw@``, ``amqp://``, any scheme), up to the last ``@``
   before a host, so ``p@ss#w/rd?`` written without percent-encoding is hidden whole
   (``host:8080/path@v2`` is a port, left alone); ``curl_password``:
   ``curl -u user:password`` / ``--user``. Placeholders (``$PW``, ``${PW}``, ``<pw>``,
   ``%s``, ``***``) are left.
4. ``assignment``: ``NAME=value``, ``NAME: value``, ``NAME := value``, ``export NAME=value``,
   ``--name=value``, ``"name": "value"``, ``'name' => 'value'``, ``name = "value"``,
   ``name: str = "value"``, typed constants (``const Password string = "value"`` in Go,
   ``const SECRET: &str = "value"`` and ``static KEY: &'static str`` in Rust, C's
   ``#define DB_PASSWORD "value"``), ``<name>value</name>``, ``define('NAME', 'value')`` (a quoted
   name, a comma, a quoted value: call arguments), a value in JSON-escaped quotes
   (``API_KEY = \\"…\\"`` in a notebook's source or a string literal), a value
   holding ``:``, ``=`` or brackets (a Django ``SECRET_KEY``) at a line's start, after a
   comment marker or a notebook string's quote, as YAML or INI, at a string literal's
   start or after an upper-case environment name anywhere (``env_lines.py``), a YAML
   value below its key
   (``password:\\n  value``; a block scalar ``key: |`` is replaced whole), and a value
   on the lines below ``NAME = (``, ``[``, triple quotes, a backtick or a shell ``\\``
   (the next line, then deeper-indented ones; ``continued.py``), where NAME
   (case-insensitive) contains ``key``, ``secret``, ``token``, ``passw``, ``pwd``,
   ``credential`` or ``auth``, or is the word ``pass`` or ``pw`` (``DB_PASS``, ``pw``).
   Only the value is replaced: ``API_KEY="[REDACTED:assignment]"``; after an
   ``Authorization``-style scheme word (``Bearer``, ``Basic``, ``token``, ``bot``) only
   the credential after it, which needs only 8 characters and not to be a plain
   lowercase word (base64 of ``user:pass`` may be letters only). Values have no length
   limit (a 2 KB base64 ``tls.key``); a quoted value with no closing quote on its line
   runs to the line end. Otherwise the value must look random:

   * at least 8 characters (``MIN_VALUE_LENGTH``), no whitespace (spares prose and
     passphrases), not a placeholder or an earlier marker;
   * not a reference: an unquoted value must not be followed by ``(`` or ``[`` (a call
     or a subscript: ``getpass()``, ``os.environ["X"]``) nor be a dotted name
     (``settings.SECRET``);
   * Shannon entropy >= 3.0 bits per character (``MIN_ENTROPY_BITS``): an 8-character
     value needs 8 distinct characters; ``aaaaaaa1``, ``xxxxxxxx``, ``12121212`` fail;
   * at least two of the classes {lower, upper, digit, symbol}, one of which is digit or
     symbol. ``_`` and ``.`` do not count as symbols, so ``snake_case`` and
     ``dotted.names`` are one class; mixed-case letters alone are not enough.

   After a password-like name (``passw``, ``pwd``, ``pass``, ``pw``) a *quoted* value of
   6+ characters with a digit is a secret too (``pw = "hunter42"``).
   Left alone: ``getpass()``, ``settings.SECRET``, ``None``, ``"${TOKEN}"``, ``"Bearer"``,
   ``default_password``, ``"correct horse battery staple"``.

Not redacted (known limits): secrets of letters only after a secret-like name, random
strings under names that say nothing (``x = "9f8e…"``), passwords given as separate
command-line words to commands other than those ``plain.py`` knows (``mysql``,
``sshpass``, ``redis-cli``, registry logins), values split over
several variables, encodings other than plain text (base64 of a ``.env``, hex dumps),
secrets in file names, a literal chain spread over more than one line break, and the
second and later unindented lines of a multi-line string below a name.

Linear time: the regexes never nest unbounded quantifiers, use possessive quantifiers
so a failed attempt cannot backtrack, bound the name parts ({0,64}), and can only start
at a token or word boundary; a block's END is searched once per BEGIN and the scan
resumes after it. Measured on 5 MB adversarial lines: 0.3 to 1.2 s each; the slowest
shape is one that makes every few characters a secret (700,000 `-u a:b` after `curl`,
about 5 s), since each becomes a marker that later rules scan again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lantern.workspace.redact.assignments import assignments, named_values, url_passwords
from lantern.workspace.redact.blocks import private_key_blocks, putty_keys, yaml_values
from lantern.workspace.redact.continued import continued_values
from lantern.workspace.redact.env_lines import env_values
from lantern.workspace.redact.plain import plain_secrets
from lantern.workspace.redact.tokens import split_tokens, tokens
from lantern.workspace.redact.values import Span

__all__ = ["BLOCK_HINT", "CUT_MARGIN", "YAML_HINT", "Redaction", "redact", "redacted_prefix"]

# The passes, in order; each returns the new text and a span per secret it replaced.
_PASSES: tuple[Callable[[str], tuple[str, list[Span]]], ...] = (
    private_key_blocks,
    putty_keys,
    tokens,
    split_tokens,
    url_passwords,
    env_values,
    assignments,
    named_values,
    yaml_values,
    continued_values,
    plain_secrets,
)

# Hints, for whoever shows only some lines of a text (a read_file window, search hits).
# Every rule is line-local (a literal chain may also use the line before or after)
# except two: when BLOCK_HINT matches, a key block may cover lines far below its first
# line; when YAML_HINT matches, a YAML value may sit on lines below its key. Where
# neither matches the text up to the last line shown, redacting the shown lines with
# one line of context either side gives the same result as redacting the whole text.
BLOCK_HINT = re.compile(rb"PRIVATE[ \t]{1,4}+KEY|Private-Lines:")
YAML_HINT = re.compile(
    rb"(?im:^[ \t]*+(?:-[ \t]++)?[\"']?(?=[\w.-]{0,60}?(?:key|secret|token|pass|pw|credential"
    rb"|auth))[\w.-]{1,64}+[\"']?[ \t]*+:[ \t]*+(?:[|>][-+0-9]{0,2}+)?[ \t]*+(?:#[^\n]*+)?\r?$)"
)


@dataclass(frozen=True)
class Redaction:
    """Redacted text, the number of replacements per rule (only rules that fired), and
    one span per replacement: (rule, first line, last line), lines counted from 0."""

    text: str
    counts: dict[str, int]
    spans: tuple[Span, ...] = ()

    @property
    def count(self) -> int:
        """Total number of replacements."""
        return sum(self.counts.values())

    def counts_in(self, first: int, last: int) -> dict[str, int]:
        """Replacements per rule that touch lines `first`..`last` (0-based, inclusive)."""
        found: dict[str, int] = {}
        for rule, start, end in self.spans:
            if start <= last and end >= first:
                found[rule] = found.get(rule, 0) + 1
        return found


def redact(text: str) -> Redaction:
    """Replace secrets in ``text`` with ``[REDACTED:<rule>]``, keeping every line in place;
    see the module docstring."""
    spans: list[Span] = []
    for step in _PASSES:
        text, found = step(text)
        spans += found
    counts: dict[str, int] = {}
    for rule, _, _ in spans:
        counts[rule] = counts.get(rule, 0) + 1
    return Redaction(text=text, counts=counts, spans=tuple(spans))


#: How far past a cut a text is redacted, so that a token straddling the cut is still
#: recognised (`redacted_prefix`, a read_file window's long lines). A secret that runs
#: further (a value whose closing quote or tag lies past it) is redacted to the cut: the
#: rules take a line's end for a value's end.
CUT_MARGIN = 1024


def redacted_prefix(text: str, limit: int) -> tuple[str, bool]:
    """The first `limit` characters of `text` as the model may see them, and whether
    anything was cut off: redacted first (up to `CUT_MARGIN` characters past the cut, so
    a token that straddles it is recognised whole), then cut. Cutting first would leave
    a token's first part, which no rule recognises, in plain sight."""
    if len(text) <= limit:
        return redact(text).text, False
    return redact(text[: limit + CUT_MARGIN]).text[:limit], True
