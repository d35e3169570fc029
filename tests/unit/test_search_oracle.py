"""search is no redaction oracle: whether a line is a hit never depends on a secret.

A hit line always shows `[REDACTED:…]`, but if a match inside the secret still made a
hit, ~200 patterns like `ghp_.{i}[A-Z]` would rebuild the token. Each result here must
read exactly like the result for a pattern that matches nowhere. Real files and the
real rg; the canary token is assembled at run time.
"""

from __future__ import annotations

import asyncio
import string
from pathlib import Path

import pytest
from lantern.tools.base import ToolResult
from lantern.tools.ripgrep import process as ripgrep
from lantern.tools.ripgrep.recheck import changed_spans

from tests.conftest import call, ctx_for, write
from tests.hang import HANG_S

# 36 characters after `ghp_`: upper, lower and digits, so every class test has a say.
BODY = "Qx7" + "mK2pL9vR4tZ8wN1cB6hJ3fD5gS0yU7aE2iOq"[:33]
TOKEN = "ghp" + "_" + BODY
PASSWORD = "hX9#" + "vQ2!mZ7$kP4&"
NOWHERE = "zq9-matches-nowhere-7xk"


def _same(result: ToolResult, pattern: str) -> tuple[str, int, bool, tuple[object, ...]]:
    """What a user or the model can see of a result, with the pattern itself taken out."""
    return (
        result.content.replace(repr(pattern), "PATTERN"),
        result.redactions,
        result.is_error,
        tuple(result.seen),
    )


@pytest.fixture
def secrets(ws: Path) -> Path:
    write(ws, "config.py", f'GITHUB = "{TOKEN}"  # needle\n')
    write(ws, "settings.env.sample", f"API_SECRET={PASSWORD}\n")
    key = "\n".join(
        [
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA" + BODY,
            "-----END RSA PRIVATE KEY-----",
        ]
    )
    write(ws, "deploy/id_rsa.pem.txt", key + "\n")
    return ws


async def _nowhere(ws: Path, *, case_sensitive: bool = False) -> tuple[object, ...]:
    result = await call(ctx_for(ws), "search", pattern=NOWHERE, case_sensitive=case_sensitive)
    assert result.content.startswith("[no matches for"), result.content
    return _same(result, NOWHERE)


@pytest.mark.parametrize("case_sensitive", [False, True])
async def test_character_by_character_patterns_reveal_nothing(
    secrets: Path, case_sensitive: bool
) -> None:
    ctx = ctx_for(secrets)
    nowhere = await _nowhere(secrets, case_sensitive=case_sensitive)
    patterns = [
        f"ghp_.{{{i}}}{cls}" for i in range(len(BODY)) for cls in ("[A-Z]", "[a-z]", "[0-9]")
    ]
    assert len(patterns) == 108
    for pattern in patterns:
        result = await call(ctx, "search", pattern=pattern, case_sensitive=case_sensitive)
        assert _same(result, pattern) == nowhere, pattern
        assert BODY not in result.content


async def test_a_match_inside_an_assignment_value_or_a_key_block_is_no_hit(
    secrets: Path,
) -> None:
    ctx = ctx_for(secrets)
    nowhere = await _nowhere(secrets)
    for pattern in [PASSWORD[:5].replace("#", "."), "vQ2", r"\$kP4", BODY[:10], "KCAQEA"]:
        result = await call(ctx, "search", pattern=pattern)
        assert _same(result, pattern) == nowhere, pattern


async def test_a_match_partly_inside_a_secret_is_no_hit(secrets: Path) -> None:
    ctx = ctx_for(secrets)
    nowhere = await _nowhere(secrets)
    for pattern in ['= "gh', f'{BODY[-3:]}"  # needle', r'GITHUB = "\w', "API_SECRET=h"]:
        result = await call(ctx, "search", pattern=pattern)
        assert _same(result, pattern) == nowhere, pattern


async def test_a_match_that_swallows_the_text_after_a_secret_tells_nothing(
    secrets: Path,
) -> None:
    """`X"  # needle|needle`: where the token ends in X the first branch would take the
    whole tail; every guess must give the same result."""
    ctx = ctx_for(secrets)
    seen = set()
    for guess in string.ascii_letters + string.digits:
        pattern = f'{guess}"  # needle|needle'
        result = await call(ctx, "search", pattern=pattern)
        seen.add(_same(result, pattern))
    assert len(seen) == 1
    ((content, *_),) = seen
    assert 'config.py:1: GITHUB = "[REDACTED:github_token]"  # needle' in content


async def test_an_ordinary_match_on_a_secret_line_still_shows_redacted(secrets: Path) -> None:
    ctx = ctx_for(secrets)
    result = await call(ctx, "search", pattern="needle")
    assert 'config.py:1: GITHUB = "[REDACTED:github_token]"  # needle' in result.content
    assert result.redactions == 1
    result = await call(ctx, "search", pattern="GITHUB|ghp_")
    assert 'config.py:1: GITHUB = "[REDACTED:github_token]"  # needle' in result.content
    result = await call(ctx, "search", pattern="API_SECRET")
    assert "settings.env.sample:1: API_SECRET=[REDACTED:assignment]" in result.content
    result = await call(ctx, "search", pattern="BEGIN RSA")
    assert "deploy/id_rsa.pem.txt:1: [REDACTED:private_key]" not in result.content
    assert BODY not in result.content


async def test_a_secret_line_does_not_use_up_max_results(ws: Path) -> None:
    """Dropped before counting: `[more matches not shown]` must not hint at it either."""
    write(ws, "a.py", f'T = "{TOKEN}"\nx = 1  # ghp_ mentioned\n')
    result = await call(ctx_for(ws), "search", pattern="ghp_", max_results=1)
    assert result.content.splitlines()[1:] == ["a.py:2: x = 1  # ghp_ mentioned"]


async def test_a_match_next_to_a_lone_cr_line_with_a_secret(ws: Path) -> None:
    """A lone CR ends an editor line but not rg's: a match running from the secret on
    one editor line into the next must not make that next line a hit."""
    path = ws / "old.txt"
    path.write_bytes(f'T = "{TOKEN}"\rnext line\n'.encode())
    ctx = ctx_for(ws)
    nowhere = await _nowhere(ws)
    pattern = f'{BODY[-1]}"\\rnext'
    assert _same(await call(ctx, "search", pattern=pattern), pattern) == nowhere
    result = await call(ctx, "search", pattern="next line")
    assert "old.txt:2: next line" in result.content


async def test_a_line_of_50k_secrets_is_checked_in_linear_time(ws: Path) -> None:
    """2 MB of tokens separated by spaces: every space matches, and every one touches a
    marker, so no hit; checked per match in log time, within the hang guard."""
    tokens = [f"ghp_{i:06d}{BODY[6:]}" for i in range(50_000)]
    write(ws, "dump.txt", " ".join(tokens) + "\nplain line\n")
    result = await asyncio.wait_for(call(ctx_for(ws), "search", pattern=" "), HANG_S)
    assert result.content.splitlines()[1:] == ["dump.txt:2: plain line"]


def test_changed_spans_of_a_line() -> None:
    original = f'a = "{TOKEN}"  # b'
    redacted = 'a = "[REDACTED:github_token]"  # b'
    assert changed_spans(original, redacted) == [(5, 28)]
    assert changed_spans(original, original) == []
    # Text removed without a marker: everything between the first and last difference.
    assert changed_spans('x = "ab" "cd"', 'x = "ab" ""') == [(10, 10)]
    # A replaced byte is not the file's text either.
    assert changed_spans("\ufffd x", "\ufffd x") == []
    assert changed_spans("k=\ufffdsecretvalue9 x", "k=\ufffd[REDACTED:assignment] x") == [
        (2, 3),
        (3, 24),
    ]


async def test_hits_after_dropped_ones_in_the_same_file_still_show(ws: Path) -> None:
    """With max_results=1, two lines matching inside secrets come first: they are no
    hits, and the ordinary line after them in the same file is still found, as it is
    for a pattern that matches no secret."""
    lines = [f'T{i} = "{TOKEN[:-2]}{i:02d}"' for i in range(6)]
    write(ws, "a.py", "\n".join([*lines, "ghp_ in a comment", ""]))
    ctx = ctx_for(ws)
    for max_results in (1, 2, 5):
        result = await call(ctx, "search", pattern="ghp_", max_results=max_results)
        assert result.content.splitlines()[1:] == ["a.py:7: ghp_ in a comment"], max_results


@pytest.fixture
def counted_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ripgrep behind a wrapper that appends a line to the returned file at each start."""
    real = ripgrep.rg_binary()
    starts = tmp_path / "rg-starts"
    wrapper = tmp_path / "bin" / "rg"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho started >> "{starts}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(ripgrep, "rg_binary", lambda: str(wrapper))
    return starts


def _token(i: int) -> str:
    return f"ghp_{i:04d}{BODY[4:]}"


async def test_secret_hit_lines_of_many_files_are_checked_together(
    ws: Path, counted_rg: Path
) -> None:
    """200 files whose hit lines hold a secret: the redacted lines are searched again in
    one batch, not one ripgrep start per file; every hit still shows, redacted."""
    for i in range(200):
        write(ws, f"c{i:03d}.py", f'GITHUB = "{_token(i)}"  # needle\nx = 1\n')
    result = await call(ctx_for(ws), "search", pattern="needle", max_results=500)
    hits = result.content.splitlines()[1:-1]
    assert hits == [
        f'c{i:03d}.py:1: GITHUB = "[REDACTED:github_token]"  # needle' for i in range(200)
    ]
    assert "ghp_0" not in result.content
    assert len(counted_rg.read_text().splitlines()) <= 3  # the search, then the recheck


async def test_batched_rechecks_keep_max_results_and_drop_matches_in_secrets(ws: Path) -> None:
    """Across files: lines that match only inside a secret are no hits and use up
    nothing; the first files' true hits fill max_results and the rest is announced."""
    for i in range(40):
        inside = f'T = "{_token(i)}"\n'  # "ghp_0" matches only inside the token
        outside = f'T = "{_token(i)}"  # ghp_0 mentioned\n'
        write(ws, f"f{i:02d}.py", outside if i % 2 else inside)
    result = await call(ctx_for(ws), "search", pattern="ghp_0", max_results=10)
    lines = result.content.splitlines()
    hits = [line for line in lines[1:] if not line.startswith("[")]
    assert len(hits) == 10
    assert all(int(line[1:3]) % 2 == 1 and line.endswith("# ghp_0 mentioned") for line in hits)
    assert any(line.startswith("[more matches not shown") for line in lines)
    every = await call(ctx_for(ws), "search", pattern="ghp_0", max_results=500)
    assert [line[:3] for line in every.content.splitlines()[1:-1]] == [
        f"f{i:02d}" for i in range(1, 40, 2)
    ]
