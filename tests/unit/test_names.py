"""One place decides when two names are the same entry (`workspace/names.py`).

These run on every platform with plain files: the Windows alias rules apply
everywhere, and a root that folds case is driven through `Names(folds=True)`
(the real case-insensitive mount is in tests/platforms/).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from lantern.approvals.approver import (
    ApprovalRequest,
    Decision,
    Remembering,
    WorkspaceGrants,
)
from lantern.errors import ToolError
from lantern.tools.registry import run_tool
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.jail import Identity
from lantern.workspace.names import (
    EXACT,
    Names,
    _same_in_other_case,
    probe_folds,
    strip_aliases,
    windows_alias,
)
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace

from tests.conftest import ctx_for
from tests.prompts import Recorder

FOLDS = Names(folds=True)


@pytest.mark.parametrize(
    "name",
    ["ENV~1", "GIT~1", "ID_ED2~1", "SECRET~1", "secret~12.txt", "PROGRA~1", "ENV~1.", "ENV~1:x"],
)
def test_short_names_are_windows_aliases(name: str) -> None:
    assert windows_alias(name) == "short_name"


@pytest.mark.parametrize(
    "name", ["CON", "con", "NUL.txt", "nul.tar.gz", "COM1", "lpt9.log", "CONIN$", "aux .c", "Con."]
)
def test_device_names_are_windows_aliases(name: str) -> None:
    assert windows_alias(name) == "device_name"


@pytest.mark.parametrize(
    "name",
    ["README.md", "console.py", "nullable.ts", "com10", "icon", "~backup", "a~b", "file~", "x~1y"],
)
def test_ordinary_names_are_not_aliases(name: str) -> None:
    assert windows_alias(name) is None


@pytest.mark.parametrize(
    ("name", "stripped"),
    [
        (".env::$DATA", ".env"),
        ("server.pem:hidden", "server.pem"),
        ("secrets.", "secrets"),
        ("app.log. . ", "app.log"),
        ("...", "..."),
        (":x", ":x"),
        ("plain.txt", "plain.txt"),
    ],
)
def test_strip_aliases(name: str, stripped: str) -> None:
    assert strip_aliases(name) == stripped


def test_keys_fold_only_where_the_root_folds() -> None:
    assert FOLDS.key("SECRETS") == FOLDS.key("secrets") == "secrets"
    assert EXACT.key("SECRETS") == "SECRETS"
    # Alias forms are stripped for refusals on every file system...
    assert EXACT.key("secrets.") == "secrets"
    assert EXACT.key("app.log:x") == "app.log"
    # ...and never for allowances.
    assert EXACT.exact("docs.") == "docs."
    assert FOLDS.exact("Docs.") == "docs."
    assert FOLDS.same("Café", "CAFE\u0301")  # NFC and case
    assert not EXACT.same("Café", "CAFÉ")


def test_within_compares_in_the_roots_form() -> None:
    assert FOLDS.within("/mnt/WS/Src/a.py", "/mnt/ws") == ("Src", "a.py")
    assert FOLDS.within("/mnt/WS", "/mnt/ws/") == ()
    assert EXACT.within("/mnt/WS/a.py", "/mnt/ws") is None
    assert EXACT.within("/mnt/wsx/a.py", "/mnt/ws") is None


def test_deny_globs_compare_folded_where_the_root_folds() -> None:
    policy = Policy(["secrets/**", "*.PEM.txt"])
    folded = policy.for_names(FOLDS)
    assert folded.refusal(("SECRETS", "token.txt")) == "deny_glob"
    assert folded.refusal(("Secrets", "sub", "x")) == "deny_glob"
    assert folded.refusal(("a.pem.TXT",)) == "deny_glob"
    assert policy.refusal(("SECRETS", "token.txt")) is None  # a different folder there
    # Trailing dots and spaces and streams alias on Windows: refused on every disk.
    assert policy.refusal(("secrets.", "token.txt")) == "deny_glob"
    assert policy.refusal(("secrets ", "token.txt")) == "deny_glob"
    assert policy.refusal(("secrets:x", "token.txt")) == "deny_glob"


@pytest.mark.parametrize(
    "parts",
    [
        (".env::$DATA",),
        ("server.pem:hidden",),
        (".git::$INDEX_ALLOCATION", "config"),
        ("ENV~1",),
        ("GIT~1", "config"),
        ("ID_ED2~1",),
        ("src", "CON"),
        ("nul.txt",),
        ("COM1",),
        ("CONIN$",),
    ],
)
def test_windows_aliases_are_refused_on_every_platform(parts: tuple[str, ...]) -> None:
    assert Policy().refusal(parts) in ("sensitive", "windows_alias")


def test_ignore_rules_fold_like_git_core_ignorecase() -> None:
    text = "*.log\nignored_dir/\n/Sub/Hidden.txt\n!keep.LOG\n"
    folded = CompiledRules.parse(text, FOLDS)
    assert folded.verdict(("APP.LOG",), False) is True
    assert folded.verdict(("IGNORED_DIR",), True) is True
    assert folded.verdict(("sub", "HIDDEN.TXT"), False) is True
    assert folded.verdict(("Keep.log",), False) is False
    exact = CompiledRules.parse(text)
    assert exact.verdict(("APP.LOG",), False) is None
    assert exact.verdict(("sub", "HIDDEN.TXT"), False) is None
    # `app.log.` is `app.log` on Windows: its alias form is ignored on every disk.
    assert exact.verdict(("app.log.",), False) is None
    assert exact.verdict(("app.log.",), False, aliases=True) is True
    assert exact.verdict(("app.log:x",), False, aliases=True) is True


def test_a_plain_folder_here_does_not_fold(tmp_path: Path) -> None:
    (tmp_path / "Readme.md").write_text("x")
    assert probe_folds(str(tmp_path)) is False
    both = tmp_path / "both"
    both.mkdir()
    (both / "A").write_text("upper")
    (both / "a").write_text("lower")
    assert probe_folds(str(both)) is False


def test_probe_without_names_with_case_asks_the_parent(tmp_path: Path) -> None:
    inner = tmp_path / "Inner"
    inner.mkdir()
    (inner / "123").write_text("x")
    assert probe_folds(str(inner)) is False


def test_nested_root_found_by_identity_not_spelling(tmp_path: Path) -> None:
    """The outer root's rules apply inside an inner root however its path is written.
    A bind mount gives the same folder a second spelling (as a disk that folds case
    does): `other/private` lies inside `ws` by identity, not by its text."""
    outer = tmp_path / "ws"
    (outer / "private").mkdir(parents=True)
    (outer / ".gitignore").write_text("private/secret.txt\n")
    (outer / "private" / "secret.txt").write_text("canary-bind-3d1f")
    other = tmp_path / "other"
    other.mkdir()
    done = subprocess.run(["mount", "--bind", str(outer), str(other)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"bind mounts are not permitted here: {done.stderr.decode().strip()}")
    try:
        workspace = Workspace([outer, other / "private"])
        inner = workspace.roots[1]
        assert [(o.name, p) for o, p in workspace.enclosing(inner)] == [("ws", ("private",))]
        assert workspace.enclosing(workspace.roots[0]) == []
        target = workspace.targets("private/secret.txt", file=True)[0]
        with pytest.raises(ToolError) as refused:
            workspace.open_checked(target, "file")
        assert refused.value.code == "ignored_path"
    finally:
        subprocess.run(["umount", str(other)], check=True)


FILE = Identity(1, 7)


def _req(path: str, names: Names, *, folder: bool = False) -> ApprovalRequest:
    return ApprovalRequest(
        tool="list_files" if folder else "read_file",
        path=path,
        identity=FILE,
        conversation_id="c",
        workspace_key="k",
        workspace_name="ws",
        folder=folder,
        names=names,
    )


async def test_grants_and_allow_globs_follow_the_roots_folding(tmp_path: Path) -> None:
    grants = WorkspaceGrants(tmp_path / "approvals.json")
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    gate = Remembering(prompt, allow_globs=["docs/**"], grants=grants)
    # A conversation grant on one spelling covers the other where the disk folds...
    assert (await gate.decide(_req("Notes.txt", FOLDS))).decision.allowed
    assert (await gate.decide(_req("NOTES.TXT", FOLDS))).decision.allowed
    assert prompt.paths == ["Notes.txt"]
    # ...and not where it does not.
    assert (await gate.decide(_req("NOTES.TXT", EXACT))).decision.allowed
    assert prompt.paths == ["Notes.txt", "NOTES.TXT"]
    # approval.allow globs: `DOCS/x` is `docs/x` only on a folding disk.
    assert (await gate.decide(_req("DOCS/a.md", FOLDS))).by == "auto"
    assert (await gate.decide(_req("DOCS/b.md", EXACT))).by == "user"
    # An alias spelling is never allowed by a glob on a disk where it is another folder.
    assert (await gate.decide(_req("docs./c.md", EXACT))).by == "user"


# --- a refusal holds for the name as it is, and as Windows would look it up -----------------


@pytest.mark.parametrize(
    ("name", "rules", "deny"),
    [
        ("prod:server.key", "", ()),  # on Linux and macOS a real file of its own
        ("backup-2024-05-01T12:30:00.pem", "", ()),
        ("creds:terraform.tfvars", "", ()),
        ("report.pdf:Zone.Identifier", "*:Zone.Identifier\n", ()),
        ("secret.md.", "*\n!*.md\n!.gitignore\n", ()),  # re-included only in its alias form
        ("backup:2024.sql", "", ("backup:*",)),
    ],
)
async def test_a_name_is_refused_in_either_form(
    tmp_path: Path, name: str, rules: str, deny: tuple[str, ...]
) -> None:
    canary = "canary-either-form-51c7"
    (tmp_path / name).write_text(canary)
    (tmp_path / "plain.txt").write_text("plain")
    if rules:
        (tmp_path / ".gitignore").write_text(rules)
    ctx = ctx_for(tmp_path, deny=deny)
    read = await run_tool("read_file", {"path": name}, ctx)
    assert read.is_error and read.code in ("sensitive_path", "ignored_path"), read.content
    listed = await run_tool("list_files", {}, ctx)
    found = await run_tool("search", {"pattern": "canary-either-form-51c[0-9]"}, ctx)
    for result in (read, listed, found):
        assert canary not in result.content


def test_unicode_forms_and_folding_compare_component_by_component() -> None:
    mac = Names(folds=True, nfc=True)
    assert mac.within("/Users/me/Cafe\u0301/src/a.py", "/Users/me/Café") == ("src", "a.py")
    assert mac.within("/Users/me/STRASSE/a.py", "/Users/me/straße") == ("a.py",)
    assert mac.within("/Users/me/Cafes/a.py", "/Users/me/Café") is None


def test_the_probe_uses_one_to_one_case_swaps_only(tmp_path: Path) -> None:
    """`Straße.md` swaps to `STRASSE.MD`, which a disk with a one-to-one case table does
    not find even where it folds case: such a name never decides the probe."""
    (tmp_path / "Straße.md").write_text("x")
    assert _same_in_other_case(str(tmp_path), "Straße.md", os.stat(tmp_path).st_dev) is None
    assert _same_in_other_case(str(tmp_path), "Straße.md".upper(), 0) is None


async def test_a_folder_grant_in_one_root_never_covers_a_root_named_in_another_case(
    tmp_path: Path,
) -> None:
    grants = WorkspaceGrants(tmp_path / "approvals.json")
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    gate = Remembering(prompt, grants=grants)
    first = _req("App/src", FOLDS, folder=True)
    other = _req("app/src", FOLDS, folder=True)
    first = dataclasses.replace(first, root_named=True)
    other = dataclasses.replace(other, root_named=True)
    assert (await gate.decide(first)).decision.allowed
    assert (await gate.decide(other)).decision.allowed
    assert prompt.paths == ["App/src", "app/src"]  # two roots: asked twice
    assert (await gate.decide(dataclasses.replace(first, path="App/SRC/x"))).by == "user"
    assert prompt.paths == [
        "App/src",
        "app/src",
    ]  # the same root, folded below its name
