"""Secret-bearing names, and backup or editor copies of them, are never read or listed.

Each case writes a real file holding a canary and checks the three tools the model has:
read_file refuses it, list_files does not show it, search does not find its canary.
"""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

import pytest
from lantern.tools.base import ToolContext
from lantern.tools.ripgrep import process as ripgrep
from lantern.workspace.policy import (
    SENSITIVE_PAIRS,
    Policy,
    pair_folder,
    sensitive_component,
    sensitive_pair,
)
from lantern.workspace.roots import Root

from tests.conftest import run

CANARY = "lantern" + "-canary-" + "7f3a91"

REFUSED = [
    ".env~",
    ".env-local",
    ".env_prod",
    ".env.bak",
    ".ENV.orig",
    "#.env#",
    "..env.swp",
    ".envrc.bak",
    ".git-credentials~",
    "certs/server.pem.bak",
    "tls.key.orig",
    "deploy/id_rsa.old",
    "signing.p12.1",
    ".pgpass",
    ".vault-token",
    ".htpasswd",
    ".netrc",
    "home/.netrc.save",
    ".docker/config.json",
    "ci/.docker/config.json.bak",
    ".kube/config",
    "ops/.kube/config~",
    "terraform.tfstate",
    "infra/terraform.tfstate.backup",
    "infra/prod.tfstate",
    "site/.htpasswd.tmp",
    ".envs/.production/.django",
]

READABLE = [
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".environment.md",
    "notes.bak",
    "config.json",
    "docker/config.json",
    "kube/config",
    ".gitignore.swp",
    "keyboard.txt",
    "monkey.py",
    "cert.pem.txt",
    "terraform.tf",
]


@pytest.mark.parametrize("path", REFUSED)
def test_policy_refuses(path: str) -> None:
    assert Policy().refusal(path.split("/")) == "sensitive"


@pytest.mark.parametrize("path", READABLE)
def test_policy_allows(path: str) -> None:
    assert Policy().refusal(path.split("/")) is None


def test_a_backup_of_a_plain_name_is_plain() -> None:
    assert not sensitive_component("README.md~")
    assert not sensitive_component("app.py.orig")


def _write_all(root: Path) -> None:
    for rel in [*REFUSED, *READABLE]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel} holds {CANARY}\n")


async def test_read_file_refuses_every_secret_name_and_reads_the_rest(
    ctx: ToolContext, ws: Path
) -> None:
    _write_all(ws)
    for rel in REFUSED:
        result = await run(ctx, "read_file", {"path": rel})
        assert result.is_error and result.code == "sensitive_path", (rel, result.content)
        assert CANARY not in result.content
    for rel in READABLE:
        result = await run(ctx, "read_file", {"path": rel})
        assert not result.is_error, (rel, result.content)
        assert CANARY in result.content


async def test_list_and_search_never_show_a_secret_name(ctx: ToolContext, ws: Path) -> None:
    _write_all(ws)
    listing = await run(ctx, "list_files", {"path": ".", "max_results": 1000})
    assert not listing.is_error, listing.content
    for rel in REFUSED:
        assert rel not in listing.content.splitlines(), rel
    for rel in READABLE:
        assert rel in listing.content, rel
    found = await run(ctx, "search", {"pattern": CANARY, "max_results": 200})
    assert not found.is_error, found.content
    shown = {line.split(":", 1)[0] for line in found.content.splitlines()[1:] if CANARY in line}
    assert shown == set(READABLE)


def test_the_rg_globs_never_hide_a_readable_name() -> None:
    """The globs may leave work to the Python check, but must not exclude more than it."""
    globs = list(Policy().rg_exclude_globs())
    assert all(glob.startswith("!") for glob in globs)
    assert any(".pgpass" in glob for glob in globs) and any(".tfstate" in glob for glob in globs)
    for rel in READABLE:
        name = rel.rsplit("/", 1)[-1]
        for glob in globs:
            for pattern in _expand(glob[1:]):
                if "/" not in pattern:
                    assert not fnmatch.fnmatch(name.lower(), pattern.lower()), (rel, glob)


def test_rg_itself_leaves_out_every_sensitive_pair(tmp_path: Path) -> None:
    """rg never reads a pair (`.kube/config`) or a backup of one, in any folder and any
    case: its globs keep it out before the Python check sees the name."""
    pairs = [f"{folder}/{name}" for folder, name in sorted(SENSITIVE_PAIRS)]
    refused = [
        rel
        for pair in pairs
        for rel in (pair, f"deep/er/{pair.upper()}", f"x/{pair}.bak", f"{pair}~")
    ]
    readable = [f"{pair}.md" for pair in pairs] + [f"plain/{name}" for _, name in SENSITIVE_PAIRS]
    for rel in [*refused, *readable]:
        path = tmp_path / rel
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True)
        if not path.exists():
            path.write_text("x\n")
    flags = ripgrep.policy_flags(Root("ws", str(tmp_path)), None)
    out = subprocess.run(
        [ripgrep.rg_binary(), "--files", *ripgrep.COMMON_FLAGS, *flags],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    listed = set(out.splitlines())
    assert not set(refused) & listed
    assert set(readable) <= listed


def _expand(glob: str) -> list[str]:
    """`{a,b}` alternations of a glob spelled out (fnmatch has none)."""
    start = glob.find("{")
    if start < 0:
        return [glob]
    end = glob.index("}", start)
    return [
        expanded
        for choice in glob[start + 1 : end].split(",")
        for expanded in _expand(glob[:start] + choice + glob[end + 1 :])
    ]


def test_pair_folders_are_the_only_folders_with_sensitive_pairs() -> None:
    """A listing skips the pair check in folders `pair_folder` rules out; that must never
    skip a real pair, whatever the spelling of the folder."""
    for folder, name in SENSITIVE_PAIRS:
        for spelling in (folder, folder.upper(), folder + ".", folder + " "):
            assert pair_folder(spelling)
            assert sensitive_pair(spelling, name)
    for folder in ("src", ".git", "kube", ".docker-old", ""):
        assert not pair_folder(folder)
        assert not any(sensitive_pair(folder, name) for _, name in SENSITIVE_PAIRS)
