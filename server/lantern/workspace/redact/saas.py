"""Prefixed SaaS tokens: a vendor's fixed prefix and a body of a known alphabet and length.

Each pattern starts with its literal prefix (so ``re`` scans for the prefix, not every
position) and looks behind the prefix, not before it, for a character that would make
the prefix part of a longer word. A JSON or notebook escape (``\\n``, ``\\t``) just
before the prefix does not count, so ``"text": ["…\\nghp_…"]`` is redacted too.

The few formats without a prefix (a suffix such as ``_mmk``, an infix such as
``.atlasv1.``) start with a bounded character class and run only when the text holds
their literal (``HINTS``), so ordinary text costs one ``in`` check.

Bodies are possessive or of fixed length, followed by a check that the token does not
go on: no pattern backtracks, so each is linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lantern.workspace.redact.lazy import Lazy

Check = Callable[[str], bool] | None
Rule = tuple[str, Lazy, Check]

A = "A-Za-z0-9"  # alphanumeric
W = "A-Za-z0-9_"  # word
U = "A-Za-z0-9_-"  # base64url
B = "A-Za-z0-9+/"  # base64
HEX = "a-fA-F0-9"
_DIGIT = re.compile("[0-9]")
_LETTER = re.compile("[A-Za-z]")


def prefixed(prefix: str, body: str, before: str = W) -> Lazy:
    """``prefix`` (literal) + ``body`` (a regex), not right after a character of
    ``before`` unless that character is part of a backslash escape (compiled on first
    use: only a text holding ``prefix`` is searched with it)."""
    if not before:
        return Lazy(re.escape(prefix) + body)
    width = len(prefix)
    return Lazy(f"{re.escape(prefix)}(?<!(?<!\\\\)[{before}].{{{width}}}){body}")


def fixed(alphabet: str, n: int) -> str:
    """Exactly ``n`` characters of ``alphabet``, not followed by another."""
    return f"[{alphabet}]{{{n}}}(?![{alphabet}])"


def run(alphabet: str, low: int, high: int | None = None) -> str:
    """``low`` to ``high`` (or more) characters of ``alphabet``, taken possessively."""
    if high is None:
        return f"[{alphabet}]{{{low},}}+"
    return f"[{alphabet}]{{{low},{high}}}+(?![{alphabet}])"


def has_digit(token: str) -> bool:
    return _DIGIT.search(token) is not None


def digit_and_letter(token: str) -> bool:
    return _DIGIT.search(token) is not None and _LETTER.search(token) is not None


def mixed(token: str) -> bool:
    """A digit, a lower-case and an upper-case letter: a random alphanumeric body."""
    return has_digit(token) and token.lower() != token and token.upper() != token


def _rules(rule: str, prefixes: str, body: str, check: Check = None, before: str = W) -> list[Rule]:
    """One rule per prefix; `check` sees the token without its prefix."""
    rules: list[Rule] = []
    for prefix in prefixes.split():
        pattern = prefixed(prefix, body, before)
        PREFIX_OF[pattern] = prefix
        rules.append((rule, pattern, _body_check(check, len(prefix))))
    return rules


def _body_check(check: Check, width: int) -> Check:
    if check is None:
        return None
    return lambda token: check(token[width:])


# The literal each pattern starts with: a text without it cannot match, and `in` is cheap.
PREFIX_OF: dict[Lazy, str] = {}

_B64_PAD = f"{run(B, 20)}={{0,3}}+(?![{B}=])"

SAAS_RULES: list[Rule] = [
    *_rules("1password_token", "ops_eyJ", run(B, 250) + "={0,3}+"),
    *_rules(
        "1password_secret_key",
        "A3-",
        "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}(?![A-Za-z0-9])",
    ),
    *_rules("adobe_secret", "p8e-", fixed(A, 32)),
    *_rules("age_secret_key", "AGE-SECRET-KEY-1", fixed("02-9AC-HJ-NP-Z", 58)),
    *_rules("airtable_token", "pat", f"[{A}]{{14}}\\.{fixed(HEX, 64)}"),
    *_rules("alibaba_key", "LTAI", fixed(A, 20), has_digit),
    *_rules("artifactory_token", "AKCp", fixed(A, 69)),
    *_rules("artifactory_token", "cmVmd", fixed(A, 59)),
    *_rules("aws_bedrock_key", "ABSK", run(B, 100) + "={0,2}+"),
    *_rules("aws_bedrock_key", "bedrock-api-key-", _B64_PAD),
    *_rules("atlassian_token", "ATATT3", run("A-Za-z0-9_=-", 150)),
    *_rules("clickhouse_key", "4b1d", fixed(A, 38), mixed),
    *_rules("clojars_token", "CLOJARS_", fixed(A, 60)),
    *_rules("cloudflare_key", "v1.0-", f"[{HEX}]{{24}}-{fixed(HEX, 146)}"),
    *_rules("databricks_token", "dapi", f"[{HEX}]{{32}}(?:-[0-9])?(?![{U}])", digit_and_letter),
    *_rules("digitalocean_token", "dop_v1_ doo_v1_ dor_v1_", fixed(HEX, 64)),
    *_rules(
        "doppler_token", "dp.pt. dp.st. dp.ct. dp.sa. dp.scim. dp.audit.", run(A, 40), None, W + "."
    ),
    *_rules("duffel_token", "duffel_live_ duffel_test_", run("A-Za-z0-9_=-", 40)),
    *_rules("dynatrace_token", "dt0c01.", f"[{A}]{{24}}\\.{fixed(A, 64)}"),
    *_rules("easypost_key", "EZAK EZTK", fixed(A, 54)),
    *_rules("facebook_token", "EAAC EAAM", run(A, 100) + "(?![+/=])", has_digit, B),
    *_rules(
        "flutterwave_key", "FLWSECK_TEST- FLWSECK- FLWPUBK_TEST- FLWPUBK-", run(A, 12) + "(?:-X)?+"
    ),
    *_rules("flyio_token", "fo1_", fixed(U, 43)),
    *_rules("flyio_token", "fm1a_ fm1r_ fm2_", run(B, 60) + "={0,3}+"),
    *_rules("frameio_token", "fio-u-", run("A-Za-z0-9_=-", 60)),
    *_rules(
        "gitlab_token",
        "glpat- glptt- glrt- glrtr- gldt- glft- glsoat- glffct- glimt- glagent- gloas- glcbt- "
        "GR1348941",
        f"{run(U, 20)}(?:\\.[a-z0-9]{{9}}(?![{U}]))?+",
    ),
    *_rules("gitlab_token", "_gitlab_session=", fixed("a-z0-9", 32), None, A),
    *_rules("google_oauth_secret", "GOCSPX-", run(U, 24)),
    *_rules("google_oauth_token", "ya29.", run(U, 30), None, W + "."),
    *_rules("grafana_token", "eyJrIjoi", run(A, 60) + "={0,3}+"),
    *_rules("grafana_token", "glc_", _B64_PAD),
    *_rules("grafana_token", "glsa_", f"[{A}]{{32}}_{fixed(HEX, 8)}"),
    *_rules("groq_key", "gsk_", fixed(A, 52), has_digit),
    *_rules(
        "harness_token", "pat. sat.", f"[{U}]{{22}}\\.[{A}]{{24}}\\.{fixed(A, 20)}", None, W + "."
    ),
    *_rules("heroku_key", "HRKU-AA", fixed(U, 58)),
    *_rules("huggingface_token", "api_org_", run("A-Za-z", 34)),
    *_rules("infracost_token", "ico-", fixed(A, 32), has_digit),
    *_rules("intra42_secret", "s-s4t2ud- s-s4t2af-", fixed(HEX, 64)),
    *_rules("langsmith_key", "lsv2_pt_ lsv2_sk_", f"[{HEX}]{{32}}_{fixed(HEX, 10)}"),
    *_rules("linear_key", "lin_api_", fixed(A, 40)),
    *_rules("mapbox_token", "sk.eyJ", f"{run(U, 40)}\\.{run(U, 16)}", None, W + "."),
    *_rules("newrelic_key", "NRAK- NRII- NRJS-", run(A, 19), has_digit),
    *_rules("notion_token", "ntn_", f"[0-9]{{11}}{fixed(A, 35)}"),
    *_rules("notion_token", "secret_", fixed(A, 43), mixed),
    *_rules("octopus_key", "API-", fixed("A-Z0-9", 26), digit_and_letter),
    *_rules("openshift_token", "sha256~", fixed(U, 43)),
    *_rules("perplexity_key", "pplx-", run(A, 40)),
    *_rules("planetscale_token", "pscale_tkn_ pscale_oauth_ pscale_pw_", run("A-Za-z0-9_=.-", 32)),
    *_rules("postman_token", "PMAK-", f"[{HEX}]{{24}}-{fixed(HEX, 34)}"),
    *_rules("prefect_token", "pnu_", fixed(A, 36)),
    *_rules("pulumi_token", "pul-", fixed(HEX, 40)),
    *_rules("readme_token", "rdme_", fixed("a-z0-9", 70)),
    *_rules("replicate_token", "r8_", fixed(U, 37), mixed),
    *_rules("rubygems_token", "rubygems_", fixed(HEX, 48)),
    *_rules("scalingo_token", "tk-us-", fixed(U, 48)),
    *_rules("sendgrid_token", "SG.", f"[{U}]{{22}}\\.{fixed(U, 43)}", None, W + "."),
    *_rules("sendinblue_token", "xkeysib-", f"[{HEX}]{{64}}-{fixed(A, 16)}"),
    *_rules("sentry_token", "sntryu_", fixed(HEX, 64)),
    *_rules("sentry_token", "sntrys_", f"eyJ{run(B, 20)}={{0,2}}+_{fixed(B, 43)}"),
    *_rules("settlemint_token", "sm_aat_ sm_pat_ sm_sat_", fixed(A, 16)),
    *_rules("shippo_token", "shippo_live_ shippo_test_", fixed(HEX, 40)),
    *_rules("shopify_token", "shpat_ shpca_ shppa_ shpss_", fixed(HEX, 32)),
    *_rules("sourcegraph_token", "sgp_", f"(?:[{HEX}]{{16}}_|local_)?+{fixed(HEX, 40)}"),
    *_rules("square_token", "sq0atp- sq0csp-", run(U, 22)),
    *_rules("square_token", "EAAA", run(U, 22, 100) + "(?![+/=])", mixed, B),
    *_rules("stripe_key", "whsec_", run(A, 24)),
    *_rules("stripe_key", "sk_prod_ rk_prod_", run(A, 16)),
    *_rules("twilio_key", "SK", fixed("a-f0-9", 32), digit_and_letter, A),
    *_rules("vault_token", "hvs. hvb. hvr.", run(U, 24), None, W + "."),
    *_rules("xai_key", "xai-", fixed(W, 80), has_digit),
    *_rules("discord_webhook", "https://discord.com/api/webhooks/", "[0-9]{5,}+/" + run(U, 40)),
    *_rules("discord_webhook", "https://discordapp.com/api/webhooks/", "[0-9]{5,}+/" + run(U, 40)),
    *_rules("teams_webhook", "webhook.office.com/webhookb2/", "[^\\s\"'`<>]{40,}+", None, ""),
]

# Formats with no literal prefix: (rule, the literal that must be in the text, pattern).
HINTED_RULES: list[tuple[str, str, Lazy]] = [
    (
        "azure_client_secret",
        "Q~",
        Lazy(r"(?<!(?<!\\)[\w~.-])[\w~.]{3}[0-9]Q~[\w~.-]{31,34}+(?![\w~.-])"),
    ),
    ("maxmind_key", "_mmk", Lazy(r"(?<!(?<!\\)\w)[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?!\w)")),
    (
        "hashicorp_token",
        ".atlasv1.",
        Lazy(r"(?<!(?<!\\)[A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}+(?![\w=-])"),
    ),
    ("telegram_token", ":AA", Lazy(r"(?<!(?<!\\)[\w:])[0-9]{8,10}+:AA[\w-]{33}(?![\w-])")),
]
