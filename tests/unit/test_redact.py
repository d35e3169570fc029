"""Tests for lantern.workspace.redact.redactor.

Every secret is assembled at run time from harmless pieces so that the repository itself
holds nothing a secret scanner would flag.
"""

from __future__ import annotations

import base64
import json
import random
import string
import time

import pytest
from lantern.workspace.redact.redactor import Redaction, redact

# --- fake secrets --------------------------------------------------------------------------

AWS_KEY_ID = "AKIA" + "Q3ZR7XW2M4N8P6T5"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
PASSWORD = "s3cr3t-P4ss" + "w0rd-9f8e7d"
HEX_SECRET = "a8f5f167f44f4964" + "e6c998dee827110c"
GITHUB = "ghp_" + "A1b2" * 9


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": "1234567890", "name": "Jane"}).encode())
    return f"{header}.{payload}.{_b64url(bytes(range(32)))}"


def _pem(label: str, body_lines: int = 3) -> str:
    dashes = "-" * 5
    body = ["MIIEpAIBAAKCAQEA" + "x7Y2z" * 10 for _ in range(body_lines)]
    return "\n".join([f"{dashes}BEGIN {label}{dashes}", *body, f"{dashes}END {label}{dashes}"])


TOKENS: list[tuple[str, str]] = [
    ("aws_access_key", AWS_KEY_ID),
    ("aws_access_key", "ASIA" + "ABCDEFGHIJ234567"),
    ("github_token", GITHUB),
    ("github_token", "gho_" + "Z9y8X7w6" * 5),
    ("github_token", "github_pat_" + "11ABCDEFG0" + "aB3_" * 15),
    ("slack_token", "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGh1234" * 2),
    ("slack_token", "xoxp-" + "1234567890-" + "9876543210-" + "a1B2c3D4"),
    ("slack_token", "xapp-" + "1-A0123456789-" + "1234567890123-" + "ab12" * 8),
    ("slack_token", "https://hooks." + "slack.com/services/" + "T0000AAAA/B0000BBBB/" + "x1Y2" * 6),
    ("openai_key", "sk-" + "A1b2C3d4" * 6),
    ("openai_key", "sk-proj-" + "Ab1_Cd2-Ef3" * 8),
    ("openai_key", "sk-svcacct-" + "Zz9Yy8Xx7" * 5),
    ("openai_key", "sk-admin-" + "Qq1Ww2Ee3" * 5),
    ("anthropic_key", "sk-ant-" + "api03-" + "A1b2_C3d4-" * 9 + "AA"),
    ("anthropic_key", "sk-ant-" + "admin01-" + "Xy9Zw8" * 8),
    ("jwt", _jwt()),
    ("google_api_key", "AIza" + "Sy" + "A1b2C3d4E5" * 3 + "f6g"),
    ("stripe_key", "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe_key", "rk_" + "live_" + "51Habc" * 5),
]


# --- token rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "secret"), TOKENS)
def test_token_rule_redacts(rule: str, secret: str) -> None:
    result = redact(f"use {secret} here")
    assert secret not in result.text
    assert result.text == f"use [REDACTED:{rule}] here"
    assert result.counts == {rule: 1}
    assert result.count == 1


def test_anthropic_key_is_not_an_openai_key() -> None:
    key = "sk-ant-" + "api03-" + "A1b2C3d4" * 6
    assert redact(key).counts == {"anthropic_key": 1}


def test_token_inside_assignment_gets_the_specific_rule() -> None:
    result = redact(f'GITHUB_TOKEN="{GITHUB}"')
    assert result.text == 'GITHUB_TOKEN="[REDACTED:github_token]"'
    assert result.counts == {"github_token": 1}


@pytest.mark.parametrize(
    "text",
    [
        "x" + AWS_KEY_ID,  # not at a token boundary
        "AKIA" + "SHORT123",
        "ghp_" + "tooShort123",
        "sk-learn-compatible-estimators",  # prose: no digit
        "see eyJhbGciOiJIUzI1NiJ9 alone",
        "prefix_" + GITHUB[:-30],
    ],
)
def test_token_lookalikes_are_left_alone(text: str) -> None:
    result = redact(text)
    assert result == Redaction(text=text, counts={})


# --- private keys --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label",
    [
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_private_key_block_keeps_line_numbers(label: str) -> None:
    block = _pem(label)
    text = f"line one\nkey = '''{block}'''\nline after\n"
    result = redact(text)
    assert "MIIEpAIBAAKCAQEA" not in result.text
    assert result.counts == {"private_key": 1}
    assert result.text.count("\n") == text.count("\n")
    lines = result.text.split("\n")
    assert lines[1] == "key = '''[REDACTED:private_key]"
    assert lines[2:5] == ["[REDACTED:private_key]"] * 3, "one marker per line of the block"
    assert lines[5] == "[REDACTED:private_key]'''"
    assert lines[6] == "line after"


def test_unterminated_private_key_redacts_to_end() -> None:
    block = _pem("RSA PRIVATE KEY").rsplit("\n", 1)[0]  # drop the END line
    text = f"before\n{block}\nmore\nlines"
    result = redact(text)
    assert result.text == "before\n" + "\n".join(["[REDACTED:private_key]"] * 6)
    assert result.counts == {"private_key": 1}


def test_two_private_keys_count_twice() -> None:
    text = _pem("EC PRIVATE KEY") + "\nmiddle\n" + _pem("PRIVATE KEY", body_lines=1)
    result = redact(text)
    assert result.counts == {"private_key": 2}
    assert result.text.split("\n")[5] == "middle"
    assert result.text.count("\n") == text.count("\n")


def test_escaped_single_line_private_key() -> None:
    text = '{"private_key": "' + _pem("PRIVATE KEY").replace("\n", "\\n") + '\\n", "id": 1}'
    result = redact(text)
    assert result.text == '{"private_key": "[REDACTED:private_key]\\n", "id": 1}'
    assert result.counts == {"private_key": 1}


# --- assignments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'API_KEY="{PASSWORD}"', 'API_KEY="[REDACTED:assignment]"'),
        (f"API_KEY={HEX_SECRET}", "API_KEY=[REDACTED:assignment]"),
        (f"export DB_PASSWORD={PASSWORD}", "export DB_PASSWORD=[REDACTED:assignment]"),
        (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED:assignment]"),
        (f"client_secret: {HEX_SECRET}", "client_secret: [REDACTED:assignment]"),
        (f'accessToken := "{HEX_SECRET}"', 'accessToken := "[REDACTED:assignment]"'),
        (f'{{"apiKey": "{AWS_SECRET}"}}', '{"apiKey": "[REDACTED:assignment]"}'),
        (f"'auth_token' => '{PASSWORD}'", "'auth_token' => '[REDACTED:assignment]'"),
        (f'password = "{PASSWORD}"', 'password = "[REDACTED:assignment]"'),
        (f'api_key: str = "{HEX_SECRET}"', 'api_key: str = "[REDACTED:assignment]"'),
        (f"mysql --password={PASSWORD} db", "mysql --password=[REDACTED:assignment] db"),
        (f"Credentials=`{PASSWORD}`", "Credentials=`[REDACTED:assignment]`"),
        (
            f'curl -H "Authorization: Bearer {HEX_SECRET}"',
            'curl -H "Authorization: Bearer [REDACTED:assignment]"',
        ),
    ],
)
def test_assignment_redacts_only_the_value(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.counts == {"assignment": 1}


@pytest.mark.parametrize(
    "text",
    [
        'token = request.headers.get("x")',
        "password = getpass()",
        'api_key = os.environ["API_KEY"]',
        "SECRET_KEY = settings.SECRET",
        "key = None",
        "tokens = tokenize(text)",
        "password_length = 12",
        '"token": "${TOKEN}"',
        'auth = "Bearer"',
        "password = default_password",
        "secret: ${DB_SECRET}",
        'password = "correct horse battery staple"',
        "api_key = aaaaaaa1",  # entropy too low
        'token = "AbCdEfGhIjKl"',  # letters only
        f'name = "{PASSWORD}"',  # name is not secret-like
        f'if token == "{HEX_SECRET}":',  # a comparison, not an assignment
    ],
)
def test_ordinary_code_is_left_alone(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.count == 0
    assert result.counts == {}


# --- combinations --------------------------------------------------------------------------


def test_several_secrets_on_one_line() -> None:
    jwt = _jwt()
    text = f"{AWS_KEY_ID} {GITHUB} API_KEY={PASSWORD} Authorization: Bearer {jwt}"
    result = redact(text)
    assert result.text == (
        "[REDACTED:aws_access_key] [REDACTED:github_token] API_KEY=[REDACTED:assignment]"
        " Authorization: Bearer [REDACTED:jwt]"
    )
    assert result.counts == {"aws_access_key": 1, "github_token": 1, "jwt": 1, "assignment": 1}
    assert result.count == 4


def test_redaction_is_idempotent() -> None:
    text = "\n".join(
        [
            _pem("OPENSSH PRIVATE KEY"),
            *(f"{rule} = {secret}" for rule, secret in TOKENS),
            f'DB_PASSWORD="{PASSWORD}"',
            f"aws_secret_access_key: {AWS_SECRET}",
            f"Authorization: Basic {HEX_SECRET}",
        ]
    )
    once = redact(text)
    assert once.count == len(TOKENS) + 4
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


def test_clean_text_is_unchanged() -> None:
    text = "def f(x):\n    return x + 1\n"
    assert redact(text) == Redaction(text=text, counts={})


# --- complexity guard ----------------------------------------------------------------------

_MB = 1_000_000
_rng = random.Random(0)
_ADVERSARIAL = {
    "a": "a" * _MB,
    "eyJ": "eyJ" * (_MB // 3),
    "key=": "key=" * (_MB // 4),
    "sk-": "sk-" * (_MB // 3),
    "ghp_base62": "ghp_" + "".join(_rng.choices(string.ascii_letters + string.digits, k=_MB)),
    "A=": "A=" * (_MB // 2),
    "begin_no_end": "-" * 5 + "BEGIN RSA PRIVATE KEY" + "-" * 5 + "a" * _MB,
    "json_token": '"token": "' * (_MB // 10),
    "base64": base64.b64encode(_rng.randbytes(_MB * 3 // 4)).decode(),
}


@pytest.mark.parametrize("shape", sorted(_ADVERSARIAL))
def test_adversarial_megabyte_line_is_linear(shape: str) -> None:
    text = _ADVERSARIAL[shape]
    start = time.thread_time()  # CPU time: other processes on a busy machine do not count
    redact(text)
    assert time.thread_time() - start < 10.0, shape  # ~0.5 s linear; quadratic is minutes
