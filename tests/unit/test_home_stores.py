"""A home folder as the workspace: its credential stores and shell/editor histories are
never read, listed or searched; the file system root is not a workspace at all (issue 18).

Each store is a real file holding a canary, in the place its tool keeps it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lantern.approvals.approver import Decision, Fixed
from lantern.session import Session
from lantern.workspace.roots import FILE_SYSTEM_ROOT, Workspace

from tests.conftest import ctx_for, run

CANARY = "lantern" + "-home-canary-" + "5c02e8"

STORES = [
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".mysql_history",
    ".psql_history",
    ".python_history",
    ".node_repl_history",
    ".sqlite_history",
    ".rediscli_history",
    ".Rhistory",
    ".zhistory",
    ".histfile",
    ".dbshell",
    ".viminfo",
    ".lesshst",
    ".local/share/fish/fish_history",
    ".zsh_sessions/1A2B.history",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/github-copilot/hosts.json",
    ".local/share/keyrings/login.keyring",
    ".local/share/kwalletd/kdewallet.kwl",
    ".config/gcloud/credentials.db",
    ".config/gcloud/application_default_credentials.json",
    ".config/op/config",
    ".azure/msal_token_cache.json",
    ".aws/credentials",
    ".oci/config",
    ".boto",
    ".pgpass",
    ".my.cnf",
    ".gnupg/pubring.kbx",
    ".password-store/mail/work.gpg",
    ".authinfo",
    ".msmtprc",
    ".curlrc",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".config/rclone/rclone.conf",
    ".config/containers/auth.json",
    ".mozilla/firefox/abc.default/logins.json",
    ".config/google-chrome/Default/Login Data",
    ".pki/nssdb/key4.db",
    ".yarnrc.yml",  # Yarn's npmAuthToken
    ".config/pip/pip.conf",  # index URLs with passwords
    ".pip/pip.conf",
    "AppData/Roaming/pip/pip.ini",
]

# Ordinary files of a home folder: still read, listed and found.
ORDINARY = [
    "notes.txt",
    "history.md",
    "projects/app/docs/history.txt",
    ".config/app/settings.json",
    ".config/pip/README.txt",
    "projects/app/.yarnrc",
    ".config/gh/config.yml",
    ".local/share/app/data.txt",
    ".profile",
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "someone"
    for rel in [*STORES, *ORDINARY]:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel}: {CANARY}\n", "utf-8")
    return folder


@pytest.mark.parametrize("rel", STORES)
async def test_read_file_refuses_each_store(home: Path, rel: str) -> None:
    result = await run(ctx_for(home), "read_file", {"path": rel})
    assert result.code == "sensitive_path", (rel, result.content)
    assert CANARY not in result.content


async def test_ordinary_home_files_are_read(home: Path) -> None:
    for rel in ORDINARY:
        result = await run(ctx_for(home), "read_file", {"path": rel})
        assert not result.is_error and CANARY in result.content, rel


async def test_list_and_search_of_a_home_show_no_store(home: Path) -> None:
    ctx = ctx_for(home)
    listing = await run(ctx, "list_files", {"path": ".", "max_results": 1000})
    assert not listing.is_error, listing.content
    listed = {line.rsplit(" (", 1)[0] for line in listing.content.splitlines()}
    assert not listed & set(STORES), listed & set(STORES)
    assert set(ORDINARY) <= listed
    found = await run(ctx, "search", {"pattern": CANARY, "max_results": 200})
    lines = found.content.splitlines()[1:]  # after the `[untrusted search results …]` header
    shown = {line.split(":", 1)[0] for line in lines if CANARY in line}
    assert shown == set(ORDINARY)


# --- the file system root ------------------------------------------------------------------


def test_the_file_system_root_is_not_a_workspace() -> None:
    with pytest.raises(ValueError, match="file system root"):
        Workspace(["/"])


def test_the_editor_opening_the_root_is_told_why(home: Path) -> None:
    session = Session(Fixed(Decision.DENY))  # type: ignore[arg-type]
    assert session.set_folders(["/", str(home)]) == [FILE_SYSTEM_ROOT]
    assert session.workspace is not None and session.folders == [str(home)]
    assert session.set_folders(["/"]) == [FILE_SYSTEM_ROOT]
    assert session.workspace is None


def test_the_cli_refuses_the_root(home: Path) -> None:
    done = subprocess.run(
        [Path(sys.executable).parent / "lantern", "tool", "list_files", "{}", "--workspace", "/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "file system root" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
