"""Secrets the first redaction rules missed: long values, SSH2 and PuTTY keys, passwords in
URLs, XML, YAML values below their key, `curl -u`, tokens split across string literals.

Every secret is assembled at run time from harmless pieces (a canary that must never
appear in the output), so the repository itself holds nothing a scanner would flag.
"""

from __future__ import annotations

import base64
import json
import random
import time

import pytest
from lantern.workspace.redact.redactor import redact

_rng = random.Random(9)
CANARY = "Cn4ry" + "-x7Q9-" + "w2Lk8Zp"  # 17 characters, looks random
LONG_B64 = base64.b64encode(_rng.randbytes(1650)).decode()  # 2,200 characters
DASHES4 = "-" * 4


def _lines_kept(text: str) -> str:
    result = redact(text)
    assert result.text.count("\n") == text.count("\n"), "redaction must keep every line"
    return result.text


# --- long values -----------------------------------------------------------------------


def test_kubernetes_secret_with_a_2_kb_tls_key_is_redacted() -> None:
    text = f"apiVersion: v1\nkind: Secret\ndata:\n  tls.crt: abc\n  tls.key: {LONG_B64}\n"
    result = redact(text)
    assert LONG_B64[:40] not in result.text and LONG_B64[-40:] not in result.text
    assert "  tls.key: [REDACTED:assignment]" in result.text
    assert result.counts == {"assignment": 1}


def test_a_1200_character_json_api_key_is_redacted() -> None:
    value = base64.b64encode(_rng.randbytes(900)).decode()
    assert len(value) == 1200
    result = redact(json.dumps({"name": "svc", "api_key": value}))
    assert value[:30] not in result.text
    assert result.text == '{"name": "svc", "api_key": "[REDACTED:assignment]"}'


def test_a_quoted_value_cut_at_the_line_end_is_still_redacted() -> None:
    """A window cut inside a long quoted value has no closing quote: still a secret."""
    result = redact(f'{{"api_key": "{LONG_B64[:1500]}')
    assert LONG_B64[:20] not in result.text
    assert result.counts == {"assignment": 1}


# Long values (the 5 MB lines) and every new rule's worst shape (1 MB each, to keep the
# suite quick): each must stay linear. A quadratic rule takes minutes on these.
_MB = 1_000_000
_SHAPES = {
    "long bare value": "api_key=" + "A1b2+" * _MB,
    "long quoted value": '{"api_key": "' + "A1b2+" * _MB + '"}',
    "unterminated quote": 'token: "' + "a1B2 " * _MB,
    "many names": "secret_key=" * (_MB // 2),
    "url without at": "postgres://user:" + "p4ss" * (_MB // 4),
    "many urls": "a://b:c" * (_MB // 7),
    "xml open tags": "<password>" * (_MB // 10),
    "literal chain": '"sk-" ' * (_MB // 6),
    "yaml keys": "password:\n" * (_MB // 10),
    "curl users": "curl " + "-u a:b " * (_MB // 7),
    "ppk lines": "Private-Lines: 999999\n" * (_MB // 22),
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_an_adversarial_shape_stays_linear(shape: str) -> None:
    """A complexity guard, not a benchmark (see the report for measured figures)."""
    text = _SHAPES[shape]
    started = time.thread_time()  # CPU time: other processes on a busy machine do not count
    result = redact(text)
    assert time.thread_time() - started < 30.0, shape  # ~2 s linear; quadratic is minutes
    assert result.text.count("\n") == text.count("\n")


# --- SSH2 (RFC 4716) and PuTTY keys ----------------------------------------------------------


def test_ssh2_encrypted_private_key_block_is_redacted_line_by_line() -> None:
    body = [CANARY + "P2/56wAAAi4AAAA3aWYtbW9k", "ZGVsCg" + CANARY + "==", "Zm9v"]
    text = "\n".join(
        [
            "intro",
            f"{DASHES4} BEGIN SSH2 ENCRYPTED PRIVATE KEY {DASHES4}",
            'Comment: "rsa-key-20240101"',
            *body,
            f"{DASHES4} END SSH2 ENCRYPTED PRIVATE KEY {DASHES4}",
            "after",
        ]
    )
    result = redact(text)
    assert CANARY not in result.text and "Zm9v" not in result.text
    lines = result.text.split("\n")
    assert lines[0] == "intro" and lines[-1] == "after"
    assert lines[1:-1] == ["[REDACTED:private_key]"] * 6
    assert result.counts == {"private_key": 1}


def test_ssh2_public_key_block_is_left_alone() -> None:
    text = f"{DASHES4} BEGIN SSH2 PUBLIC KEY {DASHES4}\nAAAAB3Nza\n{DASHES4} END SSH2 PUBLIC KEY"
    assert redact(text).count == 0


@pytest.mark.parametrize("version", ["2", "3"])
def test_putty_private_key_is_redacted(version: str) -> None:
    ppk = [
        f"PuTTY-User-Key-File-{version}: ssh-ed25519",
        "Encryption: none",
        "Comment: ed25519-key-20240101",
        "Public-Lines: 2",
        "AAAAC3NzaC1lZDI1NTE5AAAAIOb",
        "PUBLICtail0",
        "Private-Lines: 2",
        "AAAAI" + CANARY,
        CANARY + "Q==",
        "Private-MAC: " + "9f8e7d6c5b4a" * 4,
    ]
    text = "\n".join(["# my key", *ppk, "after the key"])
    result = redact(text)
    assert CANARY not in result.text and "9f8e7d6c5b4a" not in result.text
    lines = result.text.split("\n")
    assert lines[0] == "# my key" and lines[-1] == "after the key"
    assert lines[1:-1] == ["[REDACTED:private_key]"] * len(ppk)
    assert result.counts == {"private_key": 1}


def test_putty_private_lines_without_their_header_are_redacted() -> None:
    text = f"notes\nPrivate-Lines: 1\nAAAAIG{CANARY}\nPrivate-MAC: 0a1b2c3d4e5f\nmore notes"
    result = redact(text)
    assert CANARY not in result.text and "0a1b2c3d4e5f" not in result.text
    assert result.text.split("\n")[0] == "notes" and result.text.endswith("\nmore notes")


# --- passwords in URLs and on command lines -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"postgres://app:{CANARY}@db:5432/x", "postgres://app:[REDACTED:url_password]@db:5432/x"),
        (
            f"MONGO_URI=mongodb+srv://admin:{CANARY}@cluster0.example.net/db?retryWrites=true",
            "MONGO_URI=mongodb+srv://admin:[REDACTED:url_password]@cluster0.example.net/db"
            "?retryWrites=true",
        ),
        (f"redis://:{CANARY}@cache:6379/0", "redis://:[REDACTED:url_password]@cache:6379/0"),
        (f'url = "amqp://guest:{CANARY}@mq/"', 'url = "amqp://guest:[REDACTED:url_password]@mq/"'),
        (f"mysql://root:p@ss{CANARY}@h/db", "mysql://root:[REDACTED:url_password]@h/db"),
        (f"curl -u admin:{CANARY} https://x", "curl -u admin:[REDACTED:curl_password] https://x"),
        (
            f"curl -s --user 'bot:{CANARY}' -X POST https://x",
            "curl -s --user 'bot:[REDACTED:curl_password]' -X POST https://x",
        ),
    ],
)
def test_password_in_url_or_curl_is_redacted(text: str, expected: str) -> None:
    assert _lines_kept(text) == expected
    assert CANARY not in redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com:8080/path@v2 for details",
        "postgres://user:${DB_PASSWORD}@db/app",
        "redis://:$REDIS_PASSWORD@cache",
        "https://user:<password>@host/",
        'curl -u "$USER:$TOKEN" https://x',
        "git push -u origin main:main",
        "docker run -u 1000:1000 image",
        "mailto:someone@example.com",
    ],
)
def test_urls_and_commands_without_a_password_are_left_alone(text: str) -> None:
    assert redact(text).text == text


# --- more assignment shapes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"DB_PASS={CANARY}", "DB_PASS=[REDACTED:assignment]"),
        (f'pw = "{CANARY}"', 'pw = "[REDACTED:assignment]"'),
        ('pw = "hunter42"', 'pw = "[REDACTED:assignment]"'),
        (f"<password>{CANARY}</password>", "<password>[REDACTED:assignment]</password>"),
        (
            f'<add key="x"/><apiKey type="t">{CANARY}</apiKey>',
            '<add key="x"/><apiKey type="t">[REDACTED:assignment]</apiKey>',
        ),
    ],
)
def test_more_assignment_shapes_are_redacted(text: str, expected: str) -> None:
    assert _lines_kept(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "bypass_cache = True",
        'compass = "N0rth-West"',
        "<password>Password</password>",
        "<passwordHint>Your first pet</passwordHint>",
        '"password": "Password"',
        "<key>CFBundleName</key>",
        "passthrough: enabled",
    ],
)
def test_similar_code_is_left_alone(text: str) -> None:
    assert redact(text).text == text


# --- YAML values below their key -------------------------------------------------------------


def test_yaml_value_on_the_next_line_is_redacted() -> None:
    text = f"db:\n  user: app\n  password:\n    {CANARY}\n  port: 5432\n"
    assert _lines_kept(text) == (
        "db:\n  user: app\n  password:\n    [REDACTED:assignment]\n  port: 5432\n"
    )


def test_yaml_block_scalar_under_a_secret_key_is_redacted_whole() -> None:
    text = f"password: |\n  {CANARY}\n  second-Line-42\n\nname: demo\n"
    assert _lines_kept(text) == (
        "password: |\n  [REDACTED:assignment]\n  [REDACTED:assignment]\n\nname: demo\n"
    )


def test_yaml_folded_block_in_a_list_item_is_redacted() -> None:
    text = f"secrets:\n  - api_token: >-\n      {CANARY}\n  - name: x\n"
    assert CANARY not in _lines_kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "auth:\n  username: bob\n  method: basic\n",
        "tokens:\n  - a\n  - b\n",
        "password:\n  # set in CI\nother: 1\n",
        "description: |\n  s3cr3t-P4ssw0rd-9f8e7d but not under a secret key\n",
        "api_key: |\n  The key is read from the environment\n  at start-up.\n",
        "class Token:\n    pass\n",
        "if token:\n    return x9-Y8_z7w6\n",
    ],
)
def test_yaml_structure_and_prose_are_left_alone(text: str) -> None:
    assert redact(text).text == text


# --- tokens split across string literals -------------------------------------------------------

OPENAI_BODY = "Ab1Cd2Ef3Gh4" + "Ij5Kl6Mn7Op8"
GITHUB_BODY = "A1b2" * 9


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        (
            f'key = "sk-proj-" + "{OPENAI_BODY}"',
            'key = "[REDACTED:openai_key]" + ""',
            "openai_key",
        ),
        (f"tok = 'ghp_' '{GITHUB_BODY}'", "tok = '[REDACTED:github_token]' ''", "github_token"),
        (
            f'$t = "gh" . "p_" . "{GITHUB_BODY}";',
            '$t = "[REDACTED:github_token]" . "" . "";',
            "github_token",
        ),
        (
            f'TOKEN = ("ghp_"\n         "{GITHUB_BODY}")',
            'TOKEN = ("[REDACTED:github_token]"\n         "")',
            "github_token",
        ),
    ],
)
def test_token_split_across_literals_is_redacted(text: str, expected: str, rule: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.counts == {rule: 1}


@pytest.mark.parametrize(
    "text",
    [
        'print("sk-" + "learn")',
        'x = "ghp_" + suffix',
        'names = ["ghp_", "' + GITHUB_BODY + '"]',
    ],
)
def test_literals_that_do_not_join_into_a_token_are_left_alone(text: str) -> None:
    assert redact(text).text == text


# --- more token shapes, and credentials after an auth scheme ------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Authorization: Basic " + "dXNlcjpw" + "YXNz",
            "Authorization: Basic [REDACTED:assignment]",
        ),
        ("NPM_TOKEN=npm_" + "aB3dE5fG7h" * 3 + "AbCdEf", "NPM_TOKEN=[REDACTED:npm_token]"),
        ("glpat-" + "Ab1_" * 5, "[REDACTED:gitlab_token]"),
        ("hf_" + "abcdefghij" * 3 + "ABCD", "[REDACTED:huggingface_token]"),
        ("pypi-AgEIcHlwaS5vcmc" + "A1b2" * 15, "[REDACTED:pypi_token]"),
    ],
)
def test_more_credentials_are_redacted(text: str, expected: str) -> None:
    assert redact(text).text == expected


@pytest.mark.parametrize(
    "text", ["auth: basic authentication", "Authorization: Bearer ${TOKEN}", 'auth = "Bearer"']
)
def test_scheme_words_alone_are_left_alone(text: str) -> None:
    assert redact(text).text == text
