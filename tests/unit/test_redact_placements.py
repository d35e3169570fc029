"""Placements that showed secrets (hardening round 3): a Django `SECRET_KEY` in a comment,
a notebook output and YAML; a JDBC `password=` in Go, JavaScript and a notebook; Groq,
xAI, LangSmith and Replicate keys; a .NET `<RSAKeyValue>`'s private parts; values inside
JSON-escaped quotes (a notebook's source, a Go string).

Every secret is built at run time; its random part is a canary that must never appear
in the output. Lines are always kept.
"""

from __future__ import annotations

import json
import random
import string
import time

import pytest
from lantern.workspace.redact.redactor import redact

from tests.hang import HANG_S

_rng = random.Random(2727)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"


def _canary(alphabet: str, n: int) -> str:
    classes = [str.isdigit, str.islower, str.isupper]
    wanted = [c for c in classes if any(c(ch) for ch in alphabet)]
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if all(any(c(ch) for ch in s) for c in wanted):
            return s


def _redacted(text: str) -> str:
    result = redact(text)
    assert result.text.count("\n") == text.count("\n"), "redaction must keep every line"
    return result.text


def _notebook(line: str) -> str:
    """`line` as a notebook stores it: a JSON string with its `\\n`, in a list."""
    return f'   "text": [\n    {json.dumps(line + chr(10))},\n   ]\n'


# --- Django's SECRET_KEY -----------------------------------------------------------------

# Django's generator draws 50 characters from this alphabet.
_DJANGO = _canary(string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)", 50)

_DJANGO_PLACEMENTS = {
    "python comment": f"# SECRET_KEY = {_DJANGO}\n",
    "comment, no spaces": f"# DJANGO_SECRET_KEY={_DJANGO}\n",
    "js comment": f"// SECRET_KEY={_DJANGO}\n",
    "block comment": f"/* SECRET_KEY={_DJANGO} */\n",
    "yaml": f"SECRET_KEY: {_DJANGO}\n",
    "nested yaml": f"django:\n  secret_key: {_DJANGO}\n",
    "ini": f"[django]\nsecret_key = {_DJANGO}\n",
    "notebook output": _notebook(f"SECRET_KEY={_DJANGO}"),
    "notebook output, yaml": _notebook(f"SECRET_KEY: {_DJANGO}"),
    "go string": f'env := "DJANGO_SECRET_KEY={_DJANGO}"\n',
    "docker run": f"docker run -e DJANGO_SECRET_KEY={_DJANGO} app\n",
    "log line": f"2024-05-01 INFO settings DJANGO_SECRET_KEY={_DJANGO}\n",
}


@pytest.mark.parametrize("placement", sorted(_DJANGO_PLACEMENTS))
def test_a_django_secret_key_is_redacted_wherever_it_is_written(placement: str) -> None:
    out = _redacted(_DJANGO_PLACEMENTS[placement])
    assert _DJANGO not in out and _DJANGO[-12:] not in out and _DJANGO[:12] not in out, out
    assert "[REDACTED:" in out


# --- JDBC passwords ----------------------------------------------------------------------

_PW = "s3cr" + _canary(string.ascii_lowercase, 3)  # 7 characters: not random-looking
_JDBC = {
    # Go's encoding/json and html/template write `&` as \u0026.
    "go json-escaped &": f'dsn := "jdbc:mysql://db/app?user=app\\u0026password={_PW}"\n',
    "js json-escaped &": f"const url = 'jdbc:mysql://db/app?user=app\\u0026password={_PW}';\n",
    "notebook json-escaped &": _notebook(f"jdbc:mysql://db/app?user=app\\u0026password={_PW}"),
    "go, # in the password": f'dsn := "jdbc:mysql://db/app?user=app&password=p#{_PW}"\n',
    "js, # in the password": f"const url = `jdbc:postgresql://db/app?password={_PW}#x1&ssl=1`;\n",
    "notebook, # in the password": _notebook(f"jdbc:sqlserver://db;user=sa;password=q#{_PW};"),
    "go, braced sql server value": f'dsn := "jdbc:sqlserver://db;user=sa;password={{{_PW};x}};"\n',
    "notebook, braced value": _notebook(f"jdbc:sqlserver://db;user=sa;password={{a;{_PW}}};"),
}


@pytest.mark.parametrize("placement", sorted(_JDBC))
def test_a_jdbc_password_is_redacted_in_go_javascript_and_notebooks(placement: str) -> None:
    out = _redacted(_JDBC[placement])
    assert _PW not in out, out
    assert "[REDACTED:" in out


# --- model-provider and tracing keys ------------------------------------------------------

_KEYS = {
    "groq": ("gs" + "k_", _canary(_ALNUM, 52)),
    "xai": ("xa" + "i-", _canary(_ALNUM, 80)),
    "langsmith personal": ("lsv2" + "_pt_", _canary(_HEX, 32) + "_" + _canary(_HEX, 10)),
    "langsmith service": ("lsv2" + "_sk_", _canary(_HEX, 32) + "_" + _canary(_HEX, 10)),
    "replicate": ("r" + "8_", _canary(_ALNUM, 37)),
}
_KEY_CONTEXTS = {
    "comment": "# staging uses {s} for now\n",
    "js comment": "// staging uses {s} for now\n",
    "log line": "2024-05-01T10:00:00Z INFO request sent with {s} (retry 2)\n",
    "notebook output": '   "text": [\n    "connected as bot\\n{s}\\n"\n   ]\n',
    "unnamed variable": 'client = Client("{s}")\n',
}


@pytest.mark.parametrize("context", sorted(_KEY_CONTEXTS))
@pytest.mark.parametrize("vendor", sorted(_KEYS))
def test_groq_xai_langsmith_and_replicate_keys_are_redacted(vendor: str, context: str) -> None:
    prefix, body = _KEYS[vendor]
    out = _redacted(_KEY_CONTEXTS[context].format(s=prefix + body))
    assert body not in out and body[-12:] not in out, out
    assert "[REDACTED:" in out


def test_identifiers_that_share_those_prefixes_are_left_alone() -> None:
    text = (
        "gsk_settings = load()\n"
        "xai-client is the package name\n"
        "r8_register_map_for_the_second_bank_of_io = 3\n"
        "lsv2_pt_helper()\n"
    )
    assert redact(text).text == text


# --- .NET RSAKeyValue -----------------------------------------------------------------------

_PRIVATE_TAGS = ("P", "Q", "DP", "DQ", "InverseQ", "D")


def _rsa_key_value(sep: str) -> tuple[str, str, dict[str, str]]:
    modulus = _canary(_B64, 171) + "="
    private = {tag: _canary(_B64, 86) + "==" for tag in _PRIVATE_TAGS}
    parts = [("Modulus", modulus), ("Exponent", "AQAB"), *private.items()]
    inner = sep.join(f"<{tag}>{value}</{tag}>" for tag, value in parts)
    return f"<RSAKeyValue>{sep}{inner}{sep[:1]}</RSAKeyValue>\n", modulus, private


@pytest.mark.parametrize("sep", ["", "\n  ", "\r\n\t"], ids=["one line", "pretty", "crlf"])
def test_the_private_parts_of_a_dotnet_rsa_key_value_are_redacted(sep: str) -> None:
    text, modulus, private = _rsa_key_value(sep)
    for shown in (text, _notebook(text.rstrip("\n")), f"// {text}"):
        out = _redacted(shown)
        for tag, value in private.items():
            assert value[:40] not in out and value[-14:] not in out, (tag, out)
        assert modulus in out and "AQAB" in out  # the public key stays readable
        assert "<D>[REDACTED:rsa_key_value]</D>" in out


def test_short_or_plain_p_and_d_elements_are_left_alone() -> None:
    text = "<p>Hello, world</p>\n<D>2024-05-01</D>\n<Q>What is a key?</Q>\n"
    assert redact(text).text == text


# --- values inside JSON-escaped quotes --------------------------------------------------------


def test_secrets_inside_escaped_quotes_are_redacted() -> None:
    api = _canary(_ALNUM + "#!", 20)
    jwk = _canary(_ALNUM + "_-", 86)
    lines = {
        "notebook source": _notebook(f'API_KEY = "{api}"'),
        "notebook password": _notebook(f'db_password = "{_PW}"'),
        "go string": f'conf := "DB_PASSWORD = \\"{_PW}\\""\n',
        "notebook jwk": _notebook(f'{{"kty": "RSA", "d": "{jwk}"}}'),
    }
    for name, text in lines.items():
        out = _redacted(text)
        for secret in (api, _PW, jwk):
            assert secret not in out, (name, out)
        assert "[REDACTED:" in out, name


# --- typed constants ----------------------------------------------------------------------

_TYPED = _canary(_ALNUM + "#!", 14)


@pytest.mark.parametrize(
    "template",
    [
        'const Password string = "{pw}"\n',
        '\tDBPassword   string = "{pw}"\n',
        'var apiKey string = "{pw}"\n',
        'const SECRET: &str = "{pw}";\n',
        'static API_KEY: &\'static str = "{pw}";\n',
        'pub(crate) const DB_PASSWORD: &str = "{pw}";\n',
        '#define DB_PASSWORD "{pw}"\n',
        '  #  define API_KEY L"{pw}"\n',
        '// #define API_TOKEN "{pw}"\n',
    ],
)
def test_typed_secret_constants_are_redacted(template: str) -> None:
    for secret in (_TYPED, "hunter42x"):  # random-looking; a password with a digit
        if "assw" not in template and secret == "hunter42x":
            continue
        out = _redacted(template.format(pw=secret))
        assert secret not in out and "[REDACTED:assignment]" in out, out


@pytest.mark.parametrize(
    "line",
    [
        "const KeyLength int = 32\n",
        "pub const TOKEN_TTL: u64 = 3600;\n",
        '#define API_KEY_HEADER "X-Api-Key"\n',
        '#define PASSWORD_PROMPT "Password: "\n',
        "#define KEY_UP 0x48\n",
        'const PasswordField string = "password"\n',
    ],
)
def test_typed_constants_that_hold_no_secret_are_left_alone(line: str) -> None:
    assert redact(line).text == line


# --- what must not change -------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "    key=f(x),\n",
        "    api_key: Optional[str]=None\n",
        "    token = tokens[i:j]\n",
        "AUTH_URL: https://login.example.com/oauth2/v2.0/token\n",
        "# token_url = https://login.example.com/oauth2/token\n",
        "  secret_key: ${DJANGO_SECRET_KEY}\n",
        "  auth: {user: admin, pass: admin}\n",
        '    "auth_header = f\\"Bearer {token}\\"\\n",\n',
        "settings.configure(DEBUG=True, SECRET_KEY=make_key(seed))\n",
        "env SECRET_KEY=$(cat /run/secrets/key) ./manage.py runserver\n",
        'x = "?user=app&password=%s" % pw\n',
        'url = f"{base}?user={user}&password={password}"\n',
        "if token==other_token: pass\n",
    ],
)
def test_code_and_references_near_the_new_rules_are_left_alone(line: str) -> None:
    assert redact(line).text == line


_MB = 1_000_000
_SHAPES = {
    "comment env lines": ("# SECRET_KEY=a:" + "b(" * 30 + "\n") * (_MB // 64),
    "string starts": '="SECRET_KEY=' * (_MB // 13),
    "upper names after spaces": " API_KEY:" * (_MB // 9),
    "escaped quotes": 'API_KEY = \\"' + "a\\" * _MB,
    "rsa tags": "<D>" * (_MB // 3),
    "query escapes": "\\u0026password=" * (_MB // 16),
    "escape runs at a value's end": "# SECRET_KEY=a:b" + "\\n" * _MB + "\n",
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_the_widened_rules_stay_linear_on_megabytes(shape: str) -> None:
    text = _SHAPES[shape]
    started = time.thread_time()
    result = redact(text)
    assert time.thread_time() - started < HANG_S, shape  # linear is seconds; quadratic, hours
    assert result.text.count("\n") == text.count("\n")
