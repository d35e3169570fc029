"""Redaction recall (formats x contexts) and false-positive rate on real code.

    .venv/bin/python benchmarks/redaction_bench.py [--fp-root DIR ...] [--max-files N]
        [--show-misses] [--show-fp N]

Recall: every format below gets a fake but well-formed secret (drawn from one seeded
`random.Random`, so runs are repeatable) placed in every context; a placement counts as
redacted when neither the secret nor its last 12 characters survive `redact()`. Figures
per family, per context, and overall.

False positives: every `*.py` file under the roots (default: this Python's stdlib and the
venv's site-packages) is redacted whole; a line counts when redaction changed it. Real
code holds a few real-looking secrets in tests (a line changed there is not always
wrong), so the figure is an upper bound on false positives. Also checked: UUIDs, hex
hashes and lockfile integrity strings, which must never change.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from lantern.workspace.redact.redactor import redact

_rng = random.Random(18)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64URL = ALNUM + "_-"
B64 = ALNUM + "+/"


def _r(alphabet: str, n: int) -> str:
    # Always mix in a digit and both cases where the alphabet has them, like real keys.
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if not any(c.isdigit() for c in alphabet) or any(c.isdigit() for c in s):
            return s


def _join(*parts: str) -> str:
    return "".join(parts)


# (family, secret): prefixed formats, one family per vendor. Assembled from pieces so
# this file holds no literal token a scanner would flag.
def prefixed_formats() -> list[tuple[str, str]]:
    r = _r
    return [
        ("aws", _join("AKIA", r(UPPER_ALNUM, 16))),
        ("aws", _join("ASIA", r(UPPER_ALNUM, 16))),
        ("aws_bedrock", _join("ABSK", r(B64, 120))),
        ("github", _join("ghp_", r(ALNUM, 36))),
        ("github", _join("gho_", r(ALNUM, 36))),
        ("github", _join("ghs_", r(ALNUM, 36))),
        ("github", _join("github_pat_", r(ALNUM, 22), "_", r(ALNUM, 59))),
        ("gitlab", _join("glpat-", r(B64URL, 20))),
        ("gitlab", _join("glptt-", r(HEX, 40))),
        ("gitlab", _join("glrt-", r(B64URL, 20))),
        ("gitlab", _join("gldt-", r(B64URL, 20))),
        ("gitlab", _join("gloas-", r(B64URL, 64))),
        ("gitlab", _join("glcbt-", r(ALNUM, 3), "_", r(B64URL, 20))),
        ("gitlab", _join("glft-", r(B64URL, 20))),
        ("gitlab", _join("glimt-", r(B64URL, 25))),
        ("gitlab", _join("glagent-", r(B64URL, 50))),
        ("gitlab", _join("glsoat-", r(B64URL, 20))),
        ("gitlab", _join("glffct-", r(B64URL, 20))),
        ("gitlab", _join("GR1348941", r(B64URL, 20))),
        ("slack", _join("xoxb-", r("0123456789", 12), "-", r(ALNUM, 24))),
        ("slack", _join("xoxp-", r("0123456789", 11), "-", r(ALNUM, 32))),
        ("slack", _join("xoxe-1-", r(UPPER_ALNUM, 146))),
        ("slack", _join("xoxe.xoxp-1-", r(UPPER_ALNUM, 164))),
        ("slack", _join("xapp-1-", r(UPPER_ALNUM, 11), "-", r("0123456789", 13), "-", r(HEX, 64))),
        ("openai", _join("sk-proj-", r(B64URL, 74), "T3Blbk", "FJ", r(B64URL, 74))),
        ("anthropic", _join("sk-ant-api03-", r(B64URL, 93), "AA")),
        ("google", _join("AIza", r(B64URL, 35))),
        ("google", _join("GOCSPX-", r(B64URL, 28))),
        ("stripe", _join("sk_live_", r(ALNUM, 24))),
        ("stripe", _join("rk_test_", r(ALNUM, 24))),
        ("stripe", _join("whsec_", r(ALNUM, 32))),
        ("npm", _join("npm_", r(ALNUM, 36))),
        ("pypi", _join("pypi-AgEIcHlwaS5vcmc", r(B64URL, 60))),
        ("huggingface", _join("hf_", r(string.ascii_letters, 34))),
        ("huggingface", _join("api_org_", r(string.ascii_letters, 34))),
        ("jwt", _join("eyJhbGciOiJIUzI1NiJ9", ".eyJ", r(B64URL, 30), ".", r(B64URL, 43))),
        ("1password", _join("ops_eyJ", r(B64, 260))),
        (
            "1password",
            _join(
                "A3-",
                r(UPPER_ALNUM, 6),
                "-",
                r(UPPER_ALNUM, 11),
                "-",
                r(UPPER_ALNUM, 5),
                "-",
                r(UPPER_ALNUM, 5),
                "-",
                r(UPPER_ALNUM, 5),
            ),
        ),
        ("adobe", _join("p8e-", r(LOWER_ALNUM, 32))),
        ("age", _join("AGE-SECRET-KEY-1", r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))),
        ("airtable", _join("pat", r(ALNUM, 14), ".", r(HEX, 64))),
        ("alibaba", _join("LTAI", r(ALNUM, 20))),
        ("artifactory", _join("AKCp", r(ALNUM, 69))),
        ("artifactory", _join("cmVmd", r(ALNUM, 59))),
        ("azure", _join(r(ALNUM, 3), "8Q~", r(ALNUM + "_~.-", 34))),
        ("clickhouse", _join("4b1d", r(ALNUM, 38))),
        ("clojars", _join("CLOJARS_", r(LOWER_ALNUM, 60))),
        ("cloudflare", _join("v1.0-", r(HEX, 24), "-", r(HEX, 146))),
        ("databricks", _join("dapi", r(HEX, 32))),
        ("digitalocean", _join("dop_v1_", r(HEX, 64))),
        ("digitalocean", _join("doo_v1_", r(HEX, 64))),
        ("doppler", _join("dp.pt.", r(ALNUM, 43))),
        ("duffel", _join("duffel_live_", r(B64URL, 43))),
        ("dynatrace", _join("dt0c01.", r(UPPER_ALNUM, 24), ".", r(UPPER_ALNUM, 64))),
        ("easypost", _join("EZAK", r(ALNUM, 54))),
        ("facebook", _join("EAAC", r(ALNUM, 120))),
        ("flutterwave", _join("FLWSECK_TEST-", r(HEX, 32), "-X")),
        ("flyio", _join("fo1_", r(B64URL, 43))),
        ("frameio", _join("fio-u-", r(B64URL, 64))),
        ("grafana", _join("glc_", r(B64, 40))),
        ("grafana", _join("glsa_", r(ALNUM, 32), "_", r(HEX, 8))),
        ("grafana", _join("eyJrIjoi", r(ALNUM, 80))),
        ("harness", _join("pat.", r(B64URL, 22), ".", r(ALNUM, 24), ".", r(ALNUM, 20))),
        ("hashicorp", _join(r(LOWER_ALNUM, 14), ".atlasv1.", r(B64URL, 64))),
        ("heroku", _join("HRKU-AA", r(B64URL, 58))),
        ("infracost", _join("ico-", r(ALNUM, 32))),
        ("intra42", _join("s-s4t2ud-", r(HEX, 64))),
        ("linear", _join("lin_api_", r(ALNUM, 40))),
        ("maxmind", _join(r(ALNUM, 6), "_", r(ALNUM, 29), "_mmk")),
        ("notion", _join("ntn_", r("0123456789", 11), r(ALNUM, 35))),
        ("octopus", _join("API-", r(UPPER_ALNUM, 26))),
        ("openshift", _join("sha256~", r(B64URL, 43))),
        ("perplexity", _join("pplx-", r(ALNUM, 48))),
        ("planetscale", _join("pscale_tkn_", r(B64URL, 43))),
        ("planetscale", _join("pscale_pw_", r(B64URL, 43))),
        ("postman", _join("PMAK-", r(HEX, 24), "-", r(HEX, 34))),
        ("prefect", _join("pnu_", r(ALNUM, 36))),
        ("pulumi", _join("pul-", r(HEX, 40))),
        ("readme", _join("rdme_", r(LOWER_ALNUM, 70))),
        ("rubygems", _join("rubygems_", r(HEX, 48))),
        ("scalingo", _join("tk-us-", r(B64URL, 48))),
        ("sendgrid", _join("SG.", r(B64URL, 22), ".", r(B64URL, 43))),
        ("sendinblue", _join("xkeysib-", r(HEX, 64), "-", r(ALNUM, 16))),
        ("sentry", _join("sntryu_", r(HEX, 64))),
        ("settlemint", _join("sm_pat_", r(ALNUM, 16))),
        ("shippo", _join("shippo_live_", r(HEX, 40))),
        ("shopify", _join("shpat_", r(HEX, 32))),
        ("shopify", _join("shpss_", r(HEX, 32))),
        ("sourcegraph", _join("sgp_", r(HEX, 16), "_", r(HEX, 40))),
        ("square", _join("sq0atp-", r(B64URL, 22))),
        ("square", _join("EAAA", r(B64URL, 60))),
        ("twilio", _join("SK", r(HEX, 32))),
        ("vault", _join("hvs.", r(B64URL, 95))),
        ("vault", _join("hvb.", r(B64URL, 140))),
        ("telegram", _join(r("123456789", 9), ":AA", r(B64URL, 33))),
        ("groq", _join("gsk_", r(ALNUM, 52))),
        ("xai", _join("xai-", r(ALNUM, 80))),
        ("langsmith", _join("lsv2_pt_", r(HEX, 32), "_", r(HEX, 10))),
        ("langsmith", _join("lsv2_sk_", r(HEX, 32), "_", r(HEX, 10))),
        ("replicate", _join("r8_", r(ALNUM, 37))),
    ]


# Contexts a prefixed token is placed in: "{s}" is the secret.
CONTEXTS: dict[str, str] = {
    "assignment": 'API_TOKEN = "{s}"\n',
    "env": "SERVICE_CREDENTIAL={s}\n",
    "unnamed_var": 'x = "{s}"\n',
    "comment": "# staging uses {s} for now\n",
    "comment_slashes": "// staging uses {s} for now\n",
    "comment_block": "/* staging uses {s} for now */\n",
    "comment_sql": "-- staging uses {s} for now\n",
    "comment_html": "<!-- staging uses {s} -->\n",
    "log_line": "2024-05-01T10:00:00Z INFO request sent with {s} (retry 2)\n",
    "json": '{{"value": "{s}", "n": 1}}\n',
    "notebook_output": '   "text": [\n    "connected as bot\\n{s}\\n"\n   ]\n',
    "url_query": "https://api.example.com/v1/items?client={s}&page=2\n",
    "single_quoted": "call('{s}')\n",
    "line_start": "{s} is the one for CI\n",
    "line_end": "the one for CI is {s}\n",
    "markdown": "Use `{s}` in the header.\n",
    "yaml_list": "  - {s}\n",
    "csv": "prod,{s},2024\n",
    "html_attr": '<meta name="x" content="{s}">\n',
    "crlf": "value {s}\r\n",
    "yaml_value": "  api: {s}\n",
    "go_call": 'client := api.New("{s}")\n',
    "js_template": "const client = new Client(`{s}`);\n",
}


# Secrets with no prefix of their own: (family, context, text, secret).
def other_placements() -> list[tuple[str, str, str, str]]:
    r = _r
    pw = _join("Zq", r(ALNUM, 10), "!")
    django = _join(r(LOWER_ALNUM, 20), ":=", r(LOWER_ALNUM + "!@#^&*(-_+)", 28))
    telegram = _join(r("123456789", 9), ":AA", r(B64URL, 33))
    bearer = r(B64URL, 40)
    basic = r(B64, 30) + "=="
    sig = r(ALNUM, 30) + "%2B" + r(ALNUM, 10) + "%3D"
    jwk = r(B64URL, 86)
    weak = _join("s3cr", r(string.ascii_lowercase, 3))  # 7 characters, not random-looking
    pct = _join("%", r(ALNUM, 11))
    lt = _join("<", r(ALNUM, 11))
    rsa_d = r(B64, 170) + "=="
    return [
        ("telegram", "env", f"TELEGRAM_BOT_TOKEN={telegram}\n", telegram),
        ("telegram", "comment", f"# bot: {telegram}\n", telegram),
        ("django", "settings", f"SECRET_KEY = '{django}'\n", django),
        ("django", "env", f"DJANGO_SECRET_KEY={django}\n", django),
        ("jdbc", "properties", f"url=jdbc:mysql://db:3306/app?user=app&password={weak}\n", weak),
        (
            "jdbc",
            "sqlserver",
            f"jdbc:sqlserver://db;databaseName=a;user=sa;password={weak};\n",
            weak,
        ),
        (
            "authorization",
            "next_line",
            f'headers = {{"Authorization":\n    "Bearer {bearer}"}}\n',
            bearer,
        ),
        ("authorization", "log_line", f"DEBUG sending Authorization: Basic {basic}\n", basic),
        ("authorization", "http", f"GET / HTTP/1.1\nAuthorization: Bearer {bearer}\n", bearer),
        ("mysql", "shell", f"mysql -u root -p{weak} app < dump.sql\n", weak),
        ("mysql", "quoted", f"mysqldump -uroot -p'{pw}' app\n", pw),
        ("sshpass", "shell", f"sshpass -p {weak} ssh deploy@host\n", weak),
        ("sshpass", "quoted", f"sshpass -p '{pw}' scp a b:\n", pw),
        ("redis", "shell", f"redis-cli -h cache -a {weak} ping\n", weak),
        ("docker", "shell", f"docker login -u ci -p {weak} registry.example.com\n", weak),
        ("docker", "long", f"docker login --username ci --password {pw} reg\n", pw),
        (
            "azure_sas",
            "url",
            f"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={sig}\n",
            sig,
        ),
        ("azure_sas", "conn", f"SharedAccessSignature=sv=2022-11-02&sr=b&sig={sig}\n", sig),
        ("jwk", "json", f'{{"kty": "RSA", "n": "{r(B64URL, 86)}", "d": "{jwk}"}}\n', jwk),
        ("jwk", "pretty", f'  "d": "{jwk}",\n', jwk),
        ("password", "percent", f'DB_PASSWORD = "{pct}"\n', pct),
        ("password", "angle", f'password: "{lt}"\n', lt),
        ("django", "yaml", f"SECRET_KEY: {django}\n", django),
        ("django", "yaml_nested", f"django:\n  secret_key: {django}\n", django),
        ("django", "yaml_list", f"env:\n  - DJANGO_SECRET_KEY={django}\n", django),
        ("jdbc", "yaml", f"url: jdbc:postgresql://db/app?user=app&password={weak}\n", weak),
        ("jdbc", "properties_spaced", f"db.url = jdbc:mysql://db/app?password={weak}\n", weak),
        ("typed_constant", "go", f'const Password string = "{pw}"\n', pw),
        ("typed_constant", "rust", f'const SECRET: &str = "{pw}";\n', pw),
        ("typed_constant", "rust_static", f'static API_KEY: &\'static str = "{pw}";\n', pw),
        ("typed_constant", "c_define", f'#define DB_PASSWORD "{pw}"\n', pw),
        ("rsa_key_value", "dotnet_xml", _rsa_key_value(rsa_d), rsa_d),
        ("rsa_key_value", "dotnet_xml_pretty", _rsa_key_value(rsa_d, "\n  "), rsa_d),
    ]


def _rsa_key_value(d: str, sep: str = "") -> str:
    """A .NET `<RSAKeyValue>` (`RSA.ToXmlString(true)`) whose private exponent is `d`."""
    parts = [("Modulus", _r(B64, 171) + "="), ("Exponent", "AQAB")]
    parts += [(tag, _r(B64, 86) + "==") for tag in ("P", "Q", "DP", "DQ", "InverseQ")]
    parts.append(("D", d))
    inner = sep.join(f"<{tag}>{value}</{tag}>" for tag, value in parts)
    return f"<RSAKeyValue>{sep}{inner}{sep[:1]}</RSAKeyValue>\n"


def _js_quoted(line: str) -> str:
    """`line` as a JavaScript string literal, in the quotes it does not hold."""
    return f'"{line}"' if "'" in line else f"'{line}'"


# Each one-line placement above is also placed in these contexts: a comment of each
# language family, a log line, a notebook output (a JSON string with a `\n` escape),
# Go and JavaScript string literals.
WRAPPERS: dict[str, Callable[[str], str]] = {
    "comment_hash": lambda line: f"# {line}",
    "comment_slashes": lambda line: f"// {line}",
    "comment_block": lambda line: f"/* {line} */",
    "comment_sql": lambda line: f"-- {line}",
    "comment_html": lambda line: f"<!-- {line} -->",
    "log_line": lambda line: f"2024-05-01T10:00:00Z INFO loaded {line}",
    "notebook_output": lambda line: f"    {json.dumps(line + chr(10))},",
    "go_string": lambda line: f"conf := {json.dumps(line)}",
    "js_string": lambda line: f"const conf = {_js_quoted(line)};",
    "js_template": lambda line: f"const conf = `{line}`;",
}


def _redacted(text: str, secret: str) -> bool:
    out = redact(text).text
    return secret not in out and secret[-12:] not in out


def recall(show_misses: bool) -> dict[str, object]:
    by_family: dict[str, list[int]] = {}
    by_context: dict[str, list[int]] = {}
    misses: list[str] = []

    def count(family: str, context: str, ok: bool, text: str) -> None:
        for table, key in ((by_family, family), (by_context, context)):
            cell = table.setdefault(key, [0, 0])
            cell[0] += ok
            cell[1] += 1
        if not ok:
            misses.append(f"{family}/{context}: {text.rstrip()[:140]}")

    for family, secret in prefixed_formats():
        for context, template in CONTEXTS.items():
            text = template.format(s=secret)
            count(family, context, _redacted(text, secret), text)
    for family, context, text, secret in other_placements():
        count(family, "other:" + context, _redacted(text, secret), text)
        if text.count("\n") != 1:
            continue
        for wrapper, wrap in WRAPPERS.items():
            placed = wrap(text.rstrip("\n")) + "\n"
            count(family, "wrapped:" + wrapper, _redacted(placed, secret), placed)
    hit = sum(v[0] for v in by_family.values())
    total = sum(v[1] for v in by_family.values())
    if show_misses:
        print("\n".join(misses))
    return {
        "recall": f"{hit}/{total} ({100 * hit / total:.1f}%)",
        "families_fully_redacted": sum(v[0] == v[1] for v in by_family.values()),
        "families": len(by_family),
        "by_family": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_family.items())},
        "by_context": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_context.items())},
    }


def must_not_change() -> list[str]:
    """UUIDs, hashes, integrity strings: the lines that changed (should be none)."""
    rng = random.Random(7)
    lines = []
    for _ in range(200):
        u = "".join(rng.choice(HEX) for _ in range(32))
        lines.append(f'id = "{u[:8]}-{u[8:12]}-4{u[13:16]}-a{u[17:20]}-{u[20:]}"')
        lines.append(f"commit {''.join(rng.choice(HEX) for _ in range(40))}")
        lines.append(f'sha256 = "{"".join(rng.choice(HEX) for _ in range(64))}"')
        integrity = "".join(rng.choice(B64) for _ in range(86)) + "=="
        lines.append(f'      "integrity": "sha512-{integrity}",')
        lines.append(f"  integrity sha1-{''.join(rng.choice(B64) for _ in range(27))}=")
    return [line for line in lines if redact(line).text != line]


def false_positives(
    roots: list[Path], max_files: int, show: int, listing: Path | None = None
) -> dict[str, object]:
    files = sorted(p for root in roots for p in root.rglob("*.py") if p.is_file())[:max_files]
    lines = changed = 0
    rules: Counter[str] = Counter()
    samples: list[str] = []
    every: list[str] = []
    started = time.perf_counter()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        result = redact(text)
        before, after = text.split("\n"), result.text.split("\n")
        lines += len(before)
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            if a != b:
                changed += 1
                every.append(f"{path}:{i + 1}: {a.strip()[:160]}")
                if len(samples) < show:
                    samples.append(every[-1])
        rules.update(result.counts)
    seconds = time.perf_counter() - started
    if samples:
        print("\n".join(samples))
    if listing is not None:
        listing.write_text("".join(line + "\n" for line in every), encoding="utf-8")
    return {
        "files": len(files),
        "lines": lines,
        "lines_changed": changed,
        "rate": f"{100 * changed / max(lines, 1):.3f}%",
        "by_rule": dict(rules.most_common()),
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    stdlib = Path("/usr/lib/python3.11")
    stdlib = stdlib if stdlib.is_dir() else Path(sysconfig.get_paths()["stdlib"])
    default_roots = [stdlib, Path(sysconfig.get_paths()["purelib"])]
    parser.add_argument("--fp-root", type=Path, action="append")
    parser.add_argument("--max-files", type=int, default=100_000)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--show-fp", type=int, default=0, metavar="N")
    parser.add_argument("--fp-list", type=Path, help="write every changed line to this file")
    parser.add_argument("--no-fp", action="store_true", help="recall only")
    args = parser.parse_args(argv)
    report: dict[str, object] = {"recall": recall(args.show_misses)}
    report["unchanged_ids_hashes_integrity"] = must_not_change() or "all unchanged"
    if not args.no_fp:
        roots = args.fp_root or default_roots
        report["false_positives"] = {"roots": [str(r) for r in roots]} | false_positives(
            roots, args.max_files, args.show_fp, args.fp_list
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
