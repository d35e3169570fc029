"""Secrets in plain sight: prefixed SaaS tokens wherever they stand (a comment, a log
line, JSON, a notebook output, a URL query, quoted, at a line's start or end), and
secrets with no `NAME=` before them (`mysql -p…`, `sshpass -p`, `redis-cli -a`,
`docker login -p`, `?password=`, Azure SAS `sig=`, `Bearer` on the line below its key,
JWK `d`), a `.env` value holding `:` or `=`, passwords starting with `%` or `<`.

Every secret is built at run time from harmless pieces; its random part is a canary
that must never appear in the output. Lines are always kept.
"""

from __future__ import annotations

import random
import string
import time

import pytest
from lantern.workspace.redact.redactor import redact
from lantern.workspace.redact.values import is_placeholder

from tests.hang import HANG_S

_rng = random.Random(1818)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64URL = _ALNUM + "_-"


def _canary(alphabet: str, n: int) -> str:
    """Random, with a digit and a letter of each case the alphabet has, like a real key."""
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


# (name, prefix, random body): the body is the canary. Prefixes are split so no literal
# token sits in this file.
_UP = string.ascii_uppercase + string.digits
_FORMATS = [
    ("gitlab glptt", "gl" + "ptt-", _canary(_HEX, 40)),
    ("gitlab glrt", "gl" + "rt-", _canary(_B64URL, 20)),
    ("gitlab gldt", "gl" + "dt-", _canary(_B64URL, 20)),
    ("gitlab gloas", "gl" + "oas-", _canary(_B64URL, 64)),
    ("gitlab runner registration", "GR134" + "8941", _canary(_B64URL, 20)),
    ("gitlab glcbt", "gl" + "cbt-", "a1b_" + _canary(_B64URL, 20)),
    ("slack xoxe", "xo" + "xe-1-", _canary(_UP, 146)),
    ("google oauth secret", "GOC" + "SPX-", _canary(_B64URL, 28)),
    ("stripe webhook secret", "wh" + "sec_", _canary(_ALNUM, 32)),
    ("github (notebook escape)", "gh" + "p_", _canary(_ALNUM, 36)),
    ("digitalocean", "dop" + "_v1_", _canary(_HEX, 64)),
    ("shopify", "shp" + "at_", _canary(_HEX, 32)),
    ("sendgrid", "S" + "G.", _canary(_B64URL, 22) + "." + _canary(_B64URL, 43)),
    ("vault", "hv" + "s.", _canary(_B64URL, 95)),
    ("databricks", "da" + "pi", _canary(_HEX, 32)),
    ("perplexity", "pp" + "lx-", _canary(_ALNUM, 48)),
    ("huggingface org", "api" + "_org_", _canary(string.ascii_letters, 34)),
    ("telegram bot", _canary("123456789", 9) + ":A" + "A", _canary(_B64URL, 33)),
]

_CONTEXTS = {
    "comment": "# staging uses {s} for now\n",
    "log line": "2024-05-01T10:00:00Z INFO request sent with {s} (retry 2)\n",
    "json": '{{"value": "{s}", "n": 1}}\n',
    "notebook output": '   "text": [\n    "connected\\n{s}\\n"\n   ]\n',
    "url query": "https://api.example.com/v1/items?client={s}&page=2\n",
    "quoted": "call('{s}')\n",
    "line start": "{s} is the one for CI\n",
    "line end": "the one for CI is {s}",
    "env": "SERVICE_CREDENTIAL={s}\r\n",
}


@pytest.mark.parametrize("context", sorted(_CONTEXTS))
@pytest.mark.parametrize(("name", "prefix", "body"), _FORMATS, ids=[f[0] for f in _FORMATS])
def test_a_prefixed_token_is_redacted_in_every_context(
    name: str, prefix: str, body: str, context: str
) -> None:
    text = _CONTEXTS[context].format(s=prefix + body)
    out = _redacted(text)
    assert body not in out and body[-12:] not in out, (name, context, out)
    assert "[REDACTED:" in out


# --- secrets with no name before them ------------------------------------------------------

PW = "s3cr" + _canary(string.ascii_lowercase, 3)  # 7 characters: not random-looking


@pytest.mark.parametrize(
    "text",
    [
        f"mysql -u root -p{PW} app < dump.sql\n",
        f"mysqldump -uroot -p'{PW}' --all-databases\n",
        f"mariadb --password {PW} -h db\n",
        f"sshpass -p {PW} ssh -p 2222 deploy@host\n",
        f"sshpass -p '{PW}' scp a b:\n",
        f"redis-cli -h cache -a {PW} ping\n",
        f"docker login -u ci -p {PW} registry.example.com\n",
        f"podman login --password={PW} quay.io\n",
        f"url=jdbc:mysql://db:3306/app?user=app&password={PW}\n",
        f"jdbc:sqlserver://db;databaseName=a;user=sa;password={PW};\n",
        f"Server=db;User Id=sa;Pwd={PW};\n",
    ],
)
def test_a_password_on_a_command_line_or_in_a_query_string_is_redacted(text: str) -> None:
    assert PW not in _redacted(text)


def test_sshpass_redacts_its_own_password_and_not_the_ssh_port() -> None:
    out = _redacted(f"sshpass -p {PW} ssh -p 2222 deploy@host\n")
    assert out == "sshpass -p [REDACTED:command_password] ssh -p 2222 deploy@host\n"


def test_azure_sas_signature_is_redacted() -> None:
    sig = _canary(_ALNUM, 30) + "%2B" + _canary(_ALNUM, 10) + "%3D"
    for text in (
        f"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sr=b&sig={sig}\n",
        f"BlobEndpoint=https://a;SharedAccessSignature=sv=2022-11-02&sig={sig}\n",
    ):
        out = _redacted(text)
        assert sig[:30] not in out, out
        assert "sv=2022-11-02" in out  # only the signature goes


def test_bearer_on_the_line_below_its_key_and_in_a_log_line_is_redacted() -> None:
    token = _canary(_B64URL, 40)
    basic = _canary(_ALNUM + "+/", 30) + "=="
    out = _redacted(f'headers = {{"Authorization":\n    "Bearer {token}"}}\n')
    assert token not in out and '"Bearer [REDACTED:' in out
    out = _redacted(f"DEBUG sending Basic {basic} to upstream\n")
    assert basic[:20] not in out


def test_jwk_private_members_are_redacted_and_public_ones_kept() -> None:
    d, n = _canary(_B64URL, 86), _canary(_B64URL, 86)
    out = _redacted(f'{{"kty": "RSA", "e": "AQAB", "n": "{n}", "d": "{d}", "dp": "{d[::-1]}"}}\n')
    assert d not in out and d[::-1] not in out
    assert n in out  # the modulus is public


def test_env_values_with_colons_and_equals_are_redacted_whole() -> None:
    django = _canary(string.ascii_lowercase + string.digits, 20) + ":=^8c(-x)_" + "#q!2z"
    telegram = _canary("123456789", 9) + ":" + "AA" + _canary(_B64URL, 33)
    out = _redacted(f"DJANGO_SECRET_KEY={django}\nTELEGRAM_BOT_TOKEN={telegram}\n")
    assert django[:20] not in out and "(-x)_#q" not in out
    assert telegram not in out and telegram[-12:] not in out


def test_passwords_starting_with_percent_or_angle_bracket_are_not_placeholders() -> None:
    pct, angle = "%" + _canary(_ALNUM, 11), "<" + _canary(_ALNUM, 11)
    out = _redacted(f'DB_PASSWORD = "{pct}"\npassword: "{angle}"\n')
    assert pct not in out and angle not in out
    for value in ("%s", "%(password)s", "%-8.2f", "%DB_PASS%", "<password>", "<your api key>"):
        assert is_placeholder(value), value
    assert not is_placeholder(pct) and not is_placeholder(angle)


# --- what must not change ------------------------------------------------------------------


def test_uuids_hashes_and_integrity_strings_are_untouched() -> None:
    rng = random.Random(3)

    def hx(n: int) -> str:
        return "".join(rng.choice(_HEX) for _ in range(n))

    b64 = _ALNUM + "+/"
    integrity = "".join(rng.choice(b64) for _ in range(86))
    text = (
        f'id = "{hx(8)}-{hx(4)}-4{hx(3)}-a{hx(3)}-{hx(12)}"\n'
        f"commit {hx(40)}\n"
        f"Merge: {hx(7)} {hx(7)}\n"
        f'sha256 = "{hx(64)}"\n'
        f"  sha256:{hx(64)}\n"
        f'      "integrity": "sha512-{integrity}==",\n'
        f"  resolved https://registry.example.org/a/-/a-1.0.0.tgz#{hx(40)}\n"
        f"SK{hx(32).upper()} dapi{'0' * 32}\n"
    )
    assert redact(text).text == text


@pytest.mark.parametrize(
    "line",
    [
        "mysql -u root -p app\n",  # -p alone prompts
        "Usage: mysql [-u user] -p[password] db\n",
        'mysql -u root -p"$MYSQL_PWD" app\n',
        "sshpass -p $SSHPASS ssh host\n",
        "echo $PW | docker login -u ci --password-stdin reg\n",
        "redis-cli -a ${REDIS_PASSWORD} ping\n",
        'url = f"{base}?user={user}&password={password}"\n',
        "https://example.com/?password=${DB_PASSWORD}\n",
        "Uses Bearer authentication; see the Basic section.\n",
        'headers["Authorization"] = f"Bearer {token}"\n',
        '"d": "description_of_the_field_here",\n',
        "PASSWORD_HASHERS=settings.hashers(default)\n",
        "API_KEY=os.environ.get('API_KEY')\n",
        "for (i = 0; key=next(it); i++) {}\n",
        'password = "%s"\n',
        'password = "<password>"\n',
        # Seen in the false-positive benchmark (stdlib, site-packages):
        "    keywords=keywords)\n",
        "    authkey=process.current_process().authkey,\n",
        "        key1=value1//key2=value2//...\n",
        'For example `{"Proxy-Authorization": "Basic <username>:<password>"}`.\n',
        "key = '%s/PKG-INFO' % info_dir\n",
    ],
)
def test_ordinary_code_is_left_alone(line: str) -> None:
    assert redact(line).text == line


# --- linear on adversarial input -----------------------------------------------------------

_MB = 1_000_000
_SHAPES = {
    "prefix runs": ("gl" + "pat-") * (_MB // 6),
    "escaped prefixes": "\\n" + ("\\nghp_" * (_MB // 7)),
    "gitlab body, no end": "gl" + "rt-" + "a" * (2 * _MB),
    "azure-like": "abc1Q~" * (_MB // 6),
    "telegram digits": ("1234567890:AA" + "1" * 20) * (_MB // 33),
    "maxmind-like": ("a" * 35 + "_mmk") * (_MB // 40),
    "mysql flags": "mysql " + "-p " * _MB,
    "query names": "?" + "password=&" * (_MB // 10),
    "bearer runs": "Bearer " * (_MB // 7),
    "jwk members": '"d": "' * (_MB // 6),
    "env lines": ("SECRET_KEY=a:" + "b" * 50 + "\n") * (_MB // 64),
    "one long env line": "TOKEN=(" + "a(b)" * _MB,
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_each_new_rule_stays_linear_on_megabytes(shape: str) -> None:
    text = _SHAPES[shape]
    started = time.thread_time()
    result = redact(text)
    assert time.thread_time() - started < HANG_S, shape  # linear is seconds; quadratic, hours
    assert result.text.count("\n") == text.count("\n")
