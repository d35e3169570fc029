"""outline, find_symbol and find_references under the read-path rules, through the real
registry, real files and the real rg: what the jail, the policy, the ignore files and
`approval.deny` refuse is never parsed nor listed, secrets in signatures are redacted,
and approvals are asked once per folder and remembered like search's.

Canary definitions sit only in files the tools must never open; their value must never
appear in any output, and their name only where the call itself echoes it (a header).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lantern.approvals.approver import Decision, Remembering, WorkspaceGrants
from lantern.tools.base import ToolResult
from lantern.tools.registry import run_tool

from tests.conftest import call, ctx_for, write
from tests.prompts import Recorder

CANARY_FN = "lantern_canary_" + "7f3a9c"
PAYLOAD = "payload_" + "d41b7e"
# A GitHub token shape the redactor knows, built at run time (no scanner flags the repo).
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0A"
DENY = ["config/prod*"]
CODE_TOOLS = ("outline", "find_symbol", "find_references")


def canary_source() -> str:
    return f"def {CANARY_FN}(x='{PAYLOAD}'):\n    return {CANARY_FN}\n"


@pytest.fixture(autouse=True)
def canaries(ws: Path, tmp_path: Path) -> None:
    """What every test here finds in `ws`: one visible module and the canary defined in
    every kind of file the read path refuses."""
    write(ws, "src/app.py", "def visible_fn():\n    return 1\n")
    write(ws, ".gitignore", "build/\n")
    write(ws, ".lanternignore", "private.py\n")
    for rel in (
        ".env.py",  # a sensitive name (`.env.*`)
        ".ssh/helper.py",  # inside a sensitive folder
        "build/gen.py",  # git-ignored
        "private.py",  # .lanternignore'd
        "config/prod_settings.py",  # approval.deny
    ):
        write(ws, rel, canary_source())
    outside = write(tmp_path / "outside", "out.py", canary_source())
    os.symlink(outside, ws / "linked.py")  # a link to a file outside
    os.symlink(outside.parent, ws / "linkdir")  # a link to a folder outside
    big = write(ws, "big.py", canary_source())  # over the read cap
    with big.open("a", encoding="utf-8") as f:
        f.write("# padding\n" * (900 * 1024))
    hard = write(ws, "hard.py", canary_source())  # a file with two links
    os.link(hard, tmp_path / "hard_twin.py")


def clean(result: ToolResult, seen_in: tuple[str, ...] = ("src/app.py",)) -> None:
    """Nothing of a canary file: no line of results names it (a header may echo the name
    looked up), its value is nowhere, and no line of it counts as seen."""
    assert PAYLOAD not in result.content, result.content
    rows = [line for line in result.content.splitlines() if not line.startswith("[")]
    assert not any(CANARY_FN in row for row in rows), result.content
    assert all(CANARY_FN not in line for line in result.content.splitlines()[1:])
    assert all(span.path in seen_in for span in result.seen), result.seen


async def test_a_folder_outline_lists_only_what_the_read_path_allows(ws: Path) -> None:
    result = await call(ctx_for(ws, deny=DENY), "outline", path=".")
    assert not result.is_error, result.content
    assert "src/app.py:1-2 function visible_fn  def visible_fn():" in result.content
    clean(result)


@pytest.mark.parametrize("tool", ["find_symbol", "find_references"])
async def test_lookups_never_find_a_name_in_a_refused_file(ws: Path, tool: str) -> None:
    for where in (".", "linkdir", "build", ".ssh"):
        result = await call(ctx_for(ws, deny=DENY), tool, name=CANARY_FN, path=where)
        clean(result)
    found = await call(ctx_for(ws, deny=DENY), tool, name=CANARY_FN)
    assert not found.is_error and found.content.startswith("[no ")
    assert not found.seen


@pytest.mark.parametrize(
    ("rel", "code"),
    [
        (".env.py", "sensitive_path"),
        (".ssh/helper.py", "sensitive_path"),
        ("build/gen.py", "ignored_path"),
        ("private.py", "ignored_path"),
        ("config/prod_settings.py", "sensitive_path"),
        ("linked.py", "symlink"),
        ("linkdir/out.py", "symlink"),
        ("big.py", "too_large"),
        ("hard.py", "not_regular_file"),
    ],
)
async def test_each_tool_refuses_a_refused_file_by_name(ws: Path, rel: str, code: str) -> None:
    for tool in CODE_TOOLS:
        args = {"path": rel} if tool == "outline" else {"name": CANARY_FN, "path": rel}
        result = await call(ctx_for(ws, deny=DENY), tool, **args)
        assert result.is_error and result.code == code, (tool, result.content)
        clean(result)


async def test_a_secret_default_value_is_redacted(ws: Path) -> None:
    write(ws, "src/net.py", f'def connect(host, token="{TOKEN}"):\n    return host\n')
    ctx = ctx_for(ws, deny=DENY)
    for result in (
        await call(ctx, "outline", path="src/net.py"),
        await call(ctx, "outline", path="src"),
        await call(ctx, "find_symbol", name="connect"),
    ):
        assert not result.is_error, result.content
        assert TOKEN not in result.content and TOKEN[4:20] not in result.content
        line = next(x for x in result.content.splitlines() if "function connect" in x)
        assert line == (
            'src/net.py:1-2 function connect  def connect(host, token="[REDACTED:github_token]"):'
        )
        assert result.redactions == 1


async def test_a_secret_on_a_later_header_line_is_redacted_too(ws: Path) -> None:
    write(ws, "src/multi.py", f'def connect(\n    host,\n    token="{TOKEN}",\n):\n    pass\n')
    result = await call(ctx_for(ws, deny=DENY), "outline", path="src/multi.py")
    assert TOKEN not in result.content and TOKEN[4:20] not in result.content
    assert "src/multi.py:1-5 function connect  def connect(" in result.content


async def test_a_definition_inside_a_key_block_leaks_nothing(ws: Path) -> None:
    header = "-----BEGIN " + "RSA PRIVATE KEY-----"
    footer = "-----END " + "RSA PRIVATE KEY-----"
    body = f"{header}\ndef {CANARY_FN}(): pass\n{footer}\n"
    write(ws, "src/keyed.py", f'KEY = """\n{body}"""\n\n\ndef after():\n    pass\n')
    write(ws, "src/keyed2.py", f"{header}\ndef {CANARY_FN}(): pass\n{footer}\ndef after2(): pass\n")
    ctx = ctx_for(ws, deny=DENY)
    for result in (
        await call(ctx, "outline", path="src/keyed.py"),
        await call(ctx, "outline", path="src/keyed2.py"),
        await call(ctx, "outline", path="src"),
        await call(ctx, "find_symbol", name=CANARY_FN),
        await call(ctx, "find_references", name=CANARY_FN),
    ):
        clean(result, seen_in=("src/app.py", "src/keyed.py", "src/keyed2.py"))
        for span in result.seen:  # `KEY`, `after` and `after2` only
            assert span.path == "src/app.py" or (span.path, span.start) in {
                ("src/keyed.py", 1),
                ("src/keyed.py", 8),
                ("src/keyed2.py", 4),
            }
    assert "function after  def after():" in (await call(ctx, "outline", path="src")).content


async def test_a_token_used_as_an_identifier_is_no_use(ws: Path) -> None:
    """An identifier that is itself a secret shape: redaction hides it, so it is neither a
    definition nor a use (a lookup must not confirm a guessed secret)."""
    write(ws, "src/tok.py", f"{TOKEN} = 1\nprint({TOKEN})\n")
    ctx = ctx_for(ws, deny=DENY)
    for tool in ("find_symbol", "find_references"):
        result = await call(ctx, tool, name=TOKEN)
        assert result.content.startswith("[no "), result.content
        assert not result.seen
    outline = await call(ctx, "outline", path="src/tok.py")
    assert TOKEN not in outline.content and TOKEN[4:20] not in outline.content


# A password that does not look random (letters and a digit), and one that does.
WEAK = "hunter" + "42x"
STRONG = "Zq8#" + "kLm2Px9!wR"
TYPED_CONSTANTS = {
    "go const": ("src/db.go", f'package db\n\nconst Password string = "{WEAK}"\n'),
    "go const, random": ("src/api.go", f'package api\n\nconst apiKey string = "{STRONG}"\n'),
    "go const block": (
        "src/cfg.go",
        f'package cfg\n\nconst (\n\tDBPassword string = "{WEAK}"\n)\n',
    ),
    "rust const": ("src/db.rs", f'const SECRET: &str = "{STRONG}";\n'),
    "rust pub const": ("src/pw.rs", f'pub const DB_PASSWORD: &str = "{WEAK}";\n'),
    "rust static": ("src/api.rs", f'static API_KEY: &\'static str = "{STRONG}";\n'),
    "c define": ("src/db.c", f'#define DB_PASSWORD "{WEAK}"\n'),
    "c define key": ("src/api.h", f'#  define API_KEY L"{STRONG}"\n'),
}


@pytest.mark.parametrize("kind", sorted(TYPED_CONSTANTS))
async def test_a_typed_secret_constant_is_redacted_in_outline_and_read_file(
    ws: Path, kind: str
) -> None:
    rel, text = TYPED_CONSTANTS[kind]
    write(ws, rel, text + "\nint helper(void);\n" if rel.endswith((".c", ".h")) else text)
    ctx = ctx_for(ws, deny=DENY)
    results = [
        await call(ctx, "read_file", path=rel),
        await call(ctx, "outline", path=rel),
        await call(ctx, "outline", path="src"),
    ]
    for result in results:
        assert not result.is_error, result.content
        assert WEAK not in result.content and STRONG not in result.content, result.content
        assert STRONG[4:] not in result.content and "hunter" not in result.content
    assert "[REDACTED:" in results[0].content and "[REDACTED:" in results[1].content


async def test_a_secret_constant_at_the_top_hides_nothing_else(ws: Path) -> None:
    """A private key constant whose signature is cut before its END line: the other
    definitions of the file are outlined all the same, and no line of the key shows."""
    body = [TOKEN[4:] + f"{n:02d}" + "A" * 24 for n in range(25)]
    key = "-----BEGIN " + "RSA PRIVATE KEY-----"
    end = "-----END " + "RSA PRIVATE KEY-----"
    write(
        ws,
        "src/keyed3.py",
        f'PRIVATE_KEY = """{key}\n' + "\n".join(body) + f'\n{end}"""\n\n\n'
        "def connect():\n    return 1\n\n\nclass Pool:\n    def get(self):\n        pass\n",
    )
    ctx = ctx_for(ws, deny=DENY)
    for result in (
        await call(ctx, "outline", path="src/keyed3.py"),
        await call(ctx, "outline", path="src"),
    ):
        assert "src/keyed3.py:30-31 function connect  def connect():" in result.content
        assert "src/keyed3.py:34-36 class Pool  class Pool:" in result.content
        assert not any(line[:20] in result.content for line in body)
    outline = await call(ctx, "outline", path="src/keyed3.py")
    assert "src/keyed3.py:35-36 method Pool.get  def get(self):" in outline.content


# --- approvals ----------------------------------------------------------------------------


@pytest.fixture
def grants(tmp_path: Path) -> WorkspaceGrants:
    return WorkspaceGrants(tmp_path / "data" / "approvals.json")


async def test_lookups_ask_once_per_folder_and_remember(ws: Path, grants: WorkspaceGrants) -> None:
    inner = Recorder(Decision.ALLOW_ONCE)
    ctx = ctx_for(ws, Remembering(inner, grants=grants), deny=DENY)
    assert not (await call(ctx, "find_symbol", name="visible_fn", path="src")).is_error
    assert not (await call(ctx, "find_symbol", name="other", path="src")).is_error
    assert not (await call(ctx, "find_references", name="visible_fn", path="src")).is_error
    assert not (await call(ctx, "outline", path="src")).is_error
    assert not (await call(ctx, "list_files", path="src")).is_error
    assert [r.message() for r in inner.requests] == [
        "Lantern wants to look up definitions of `visible_fn` in src"
    ]
    # A lookup grant is no search grant; a search of the workspace covers every lookup.
    await call(ctx, "search", pattern="x", path="src")
    await call(ctx, "search", pattern="x")
    await call(ctx, "find_references", name="visible_fn")
    await call(ctx, "outline", path=".")
    assert [r.message() for r in inner.requests][1:] == [
        "Lantern wants to search src for `x`",
        "Lantern wants to search the workspace for `x`",
    ]


async def test_each_lookup_names_itself_in_the_prompt(ws: Path, grants: WorkspaceGrants) -> None:
    prompts = []
    for tool, args in [
        ("find_references", {"name": "visible_fn", "path": "src"}),
        ("outline", {"path": "src"}),
        ("outline", {"path": "src/app.py"}),
        ("find_symbol", {"name": "Session.close"}),
    ]:
        inner = Recorder(Decision.ALLOW_ONCE)
        await run_tool(tool, args, ctx_for(ws, Remembering(inner, grants=grants), deny=DENY))
        prompts += [r.message() for r in inner.requests]
    assert prompts == [
        "Lantern wants to find uses of `visible_fn` in src",
        "Lantern wants to outline the code in src",
        "Lantern wants to outline src/app.py (31 B)",
        "Lantern wants to look up definitions of `Session.close` in the workspace",
    ]


@pytest.mark.parametrize("tool", CODE_TOOLS)
async def test_a_denied_lookup_shows_nothing(ws: Path, grants: WorkspaceGrants, tool: str) -> None:
    inner = Recorder(Decision.DENY)
    args = {"path": "src"} if tool == "outline" else {"name": "visible_fn", "path": "src"}
    result = await run_tool(tool, args, ctx_for(ws, Remembering(inner, grants=grants), deny=DENY))
    assert result.code == "denied_by_user" and result.decision == "denied"
    assert "visible_fn" not in result.content.replace("`visible_fn`", "")
    assert inner.asked == 1


async def test_a_file_outline_is_approved_like_a_read_of_it(
    ws: Path, grants: WorkspaceGrants
) -> None:
    """`Allow in Chat` on a read of a file covers outlining that file (and back)."""
    inner = Recorder(Decision.ALLOW_CONVERSATION)
    ctx = ctx_for(ws, Remembering(inner, grants=grants), deny=DENY)
    assert not (await call(ctx, "read_file", path="src/app.py")).is_error
    outline = await call(ctx, "outline", path="src/app.py")
    assert not outline.is_error and "visible_fn" in outline.content
    assert inner.asked == 1
    assert not (await call(ctx, "outline", path=".")).is_error  # a folder: asked
    assert inner.asked == 2


@pytest.mark.parametrize("tool", CODE_TOOLS)
async def test_an_unsupported_file_is_refused_before_anyone_is_asked(
    ws: Path, grants: WorkspaceGrants, tool: str
) -> None:
    write(ws, "notes.md", f"def {CANARY_FN}(): {PAYLOAD}\n")
    inner = Recorder(Decision.ALLOW_ONCE)
    args = {"path": "notes.md"} if tool == "outline" else {"name": CANARY_FN, "path": "notes.md"}
    result = await run_tool(tool, args, ctx_for(ws, Remembering(inner, grants=grants), deny=DENY))
    assert result.code == "unsupported_language" and inner.asked == 0
    assert PAYLOAD not in result.content
