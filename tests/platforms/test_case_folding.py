"""A real disk that folds case: NTFS through `lowntfs-3g -o ignore_case`, and a control.

Both disks are NTFS images on FUSE (conftest.py `disks`); only the folding one
was mounted with `ignore_case`, so there `SECRETS/token.txt` opens
`secrets/token.txt`, as on macOS (APFS) and Windows (NTFS) by default. Every
command is the real `lantern tool` (or `lantern ask` with the fake model) with
`approval.deny = ["secrets/**"]` in config.toml, a `.gitignore` with `*.log`
and `ignored_dir/`, and a `.lanternignore` hiding `sub/hidden.txt`.

What this shows: on the folding disk a name spelled in another case gets the
same refusal as its exact spelling (deny globs, ignore rules with git's
core.ignorecase meaning, the built-in sensitive names, `approval.mode =
"workspace"`, nested roots named in another spelling), files stored in odd case
(`APP.LOG`) are hidden exactly where git with core.ignorecase=true ignores them,
allow globs match in any case there, and no canary ever appears; on the control
those spellings are simply other, missing names (`not_found`) while the exact
names are refused.
What it does not show: APFS's Unicode normalization (NFD names), Windows'
per-folder case sensitivity, or Linux casefold (ext4 `+F`) folders.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.platforms.conftest import (
    REFUSED,
    TIMEOUT,
    Cli,
    Disk,
    Result,
    canary,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FUSE on Linux")

CONFIG = '[approval]\ndeny = ["secrets/**"]\n'


@pytest.fixture(params=["folding", "control"])
def disk(request: pytest.FixtureRequest, disks: dict[str, Disk]) -> Disk:
    return disks[request.param]


@dataclass
class Project:
    """A workspace on `disk` with a canary in every refused file."""

    disk: Disk
    ws: Path
    cli: Cli
    canaries: dict[str, str]

    def tool(self, name: str, args: dict[str, Any], *workspaces: Path) -> Result:
        run = self.cli.tool(name, args, workspaces=workspaces or [self.ws])
        self.assert_no_canary(run.stdout)
        return run

    def assert_no_canary(self, text: str) -> None:
        for label, value in self.canaries.items():
            assert value not in text, f"the {label} canary leaked: {text}"


def make_project(disk: Disk, cli: Cli) -> Project:
    ws = disk.folder("case") / "ws"
    c = {k: canary(k) for k in ("DENIED", "LOG", "IGNDIR", "HIDDEN", "ENV", "KEY", "GIT")}
    write(ws, "src/app.py", "def main():\n    return 42\n")
    write(ws, "secrets/token.txt", f"token={c['DENIED']}\n")
    write(ws, "app.log", f"{c['LOG']}\n")
    write(ws, "ignored_dir/notes.txt", f"{c['IGNDIR']}\n")
    write(ws, "sub/hidden.txt", f"{c['HIDDEN']}\n")
    write(ws, "sub/shown.txt", "shown\n")
    write(ws, ".env", f"TOKEN={c['ENV']}\n")
    write(ws, "id_rsa", f"{c['KEY']}\n")
    write(ws, ".git/config", f"[remote]\n  url = {c['GIT']}\n")
    write(ws, ".gitignore", "*.log\nignored_dir/\n")
    write(ws, ".lanternignore", "sub/hidden.txt\n")
    cli.config(CONFIG)
    return Project(disk, ws, cli, c)


@pytest.fixture
def project(disk: Disk, cli: Cli) -> Project:
    return make_project(disk, cli)


@dataclass(frozen=True)
class Case:
    """One refused entry, named in another case (`other`) and exactly (`exact`)."""

    tool: str
    other: dict[str, Any]
    exact: dict[str, Any]
    code: str | None  # the refusal's code, where the issue fixes it
    built_in: bool = False  # a built-in sensitive name: refused in any case on any disk


CASES = {
    "read-SECRETS": Case(
        "read_file", {"path": "SECRETS/token.txt"}, {"path": "secrets/token.txt"}, "sensitive_path"
    ),
    "search-SECRETS": Case(
        "search",
        {"pattern": "CANARY|token", "path": "SECRETS"},
        {"pattern": "CANARY|token", "path": "secrets"},
        "sensitive_path",
    ),
    "list-Secrets": Case("list_files", {"path": "Secrets"}, {"path": "secrets"}, "sensitive_path"),
    "read-APP.LOG": Case("read_file", {"path": "APP.LOG"}, {"path": "app.log"}, "ignored_path"),
    "read-IGNORED_DIR": Case(
        "read_file", {"path": "IGNORED_DIR/notes.txt"}, {"path": "ignored_dir/notes.txt"}, None
    ),
    "list-Ignored_Dir": Case("list_files", {"path": "Ignored_Dir"}, {"path": "ignored_dir"}, None),
    "read-SUB-HIDDEN": Case(
        "read_file", {"path": "SUB/HIDDEN.TXT"}, {"path": "sub/hidden.txt"}, "ignored_path"
    ),
    "read-.ENV": Case("read_file", {"path": ".ENV"}, {"path": ".env"}, "sensitive_path", True),
    "read-ID_RSA": Case(
        "read_file", {"path": "ID_RSA"}, {"path": "id_rsa"}, "sensitive_path", True
    ),
    "read-.GIT-config": Case(
        "read_file", {"path": ".GIT/config"}, {"path": ".git/config"}, "sensitive_path", True
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_another_spelling_is_refused_where_the_disk_folds(project: Project, case: Case) -> None:
    """Folding disk: refused like the exact name. Control: not there (`not_found`), while
    the exact name is refused. The built-in sensitive names are refused in every case on
    both disks (they always were: `.ENV` is `.env`'s spelling on a Mac)."""
    spelled = project.tool(case.tool, case.other)
    assert spelled.json["is_error"] is True, f"{case.other} was served: {spelled.content}"
    if project.disk.folds or case.built_in:
        assert spelled.code in REFUSED, spelled.stdout
        if case.code is not None:
            assert spelled.code == case.code
    else:
        assert spelled.code == "not_found", spelled.stdout
        named = project.tool(case.tool, case.exact)
        assert named.json["is_error"] is True and named.code in REFUSED, named.stdout
        if case.code is not None:
            assert named.code == case.code


def test_whole_workspace_listing_and_search_show_no_canary(project: Project) -> None:
    listing = project.tool("list_files", {})
    assert listing.served and "src/app.py" in listing.content and "sub/shown.txt" in listing.content
    found = project.tool("search", {"pattern": "CANARY|return|shown"})
    assert found.served and "src/app.py:2:" in found.content
    folder = project.tool("search", {"pattern": "CANARY|shown", "path": "sub"})
    assert folder.served and "shown" in folder.content


def test_names_stored_in_another_case_are_refused_on_the_folding_disk(
    disks: dict[str, Disk], cli: Cli
) -> None:
    """The files themselves carry odd case (`Secrets/Token.txt`, `APP.LOG`), as files made on
    a Mac or by a Windows tool do; git with core.ignorecase ignores them, so must Lantern."""
    disk = disks["folding"]
    ws = disk.folder("stored") / "ws"
    c = {k: canary(k) for k in ("DENIED", "LOG", "IGNDIR", "HIDDEN")}
    write(ws, "src/app.py", "def main():\n    return 42\n")
    write(ws, "Secrets/Token.txt", f"{c['DENIED']}\n")
    write(ws, "APP.LOG", f"{c['LOG']}\n")
    write(ws, "Ignored_Dir/Notes.txt", f"{c['IGNDIR']}\n")
    write(ws, "Sub/Hidden.TXT", f"{c['HIDDEN']}\n")
    write(ws, ".gitignore", "*.log\nignored_dir/\n")
    write(ws, ".lanternignore", "sub/hidden.txt\n")
    cli.config(CONFIG)
    if shutil.which("git") is not None:
        # What git itself says here with core.ignorecase=true (its default on macOS and
        # Windows): these are the files Lantern must treat as ignored.
        subprocess.run(["git", "init", "-q", str(ws)], check=True, timeout=TIMEOUT)
        asked = ["APP.LOG", "Ignored_Dir/Notes.txt", "src/app.py"]
        ignored = subprocess.run(
            ["git", "-c", "core.ignorecase=true", "check-ignore", "--no-index", *asked],
            cwd=ws,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert ignored.stdout.split() == ["APP.LOG", "Ignored_Dir/Notes.txt"], ignored
    project = Project(disk, ws, cli, c)
    listing = project.tool("list_files", {})
    assert listing.served and "src/app.py" in listing.content
    for name in ("Token.txt", "APP.LOG", "Notes.txt", "Hidden.TXT"):
        assert name not in listing.content, listing.content
    found = project.tool("search", {"pattern": "CANARY|return"})
    assert found.served and "src/app.py:2:" in found.content
    for path in ("Secrets/Token.txt", "APP.LOG", "Ignored_Dir/Notes.txt", "Sub/Hidden.TXT"):
        run = project.tool("read_file", {"path": path})
        assert run.json["is_error"] is True and run.code in REFUSED, run.stdout
    for path in ("Secrets", "Ignored_Dir"):
        run = project.tool("list_files", {"path": path})
        assert run.json["is_error"] is True and run.code in REFUSED, run.stdout


# --- lantern ask: approval.mode = "workspace", approval.allow ---------------------------------


def ask(cli: Cli, fake: FakeOpenAI, ws: Path, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """`lantern ask --approve ask --json` with no terminal: only config.toml decides."""
    fake.add_turns([Turn(tool_calls=calls), Turn(content="Done.")])
    done = cli.lantern(
        *("ask", "What is in there?", "--workspace", str(ws), "--base-url", fake.base_url),
        *("--model", "fake-model", "--approve", "ask", "--json"),
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert isinstance(out, dict)
    out["_sent"] = json.dumps(fake.chat_requests())
    out["_stdout"] = done.stdout
    return out


def test_workspace_mode_never_reads_a_denied_file_in_another_case(
    project: Project, fake: FakeOpenAI
) -> None:
    """`approval.mode = "workspace"` reads without asking; deny globs and ignore rules
    must still hold for every spelling, and nothing of those files reaches the model."""
    project.cli.config(CONFIG + 'mode = "workspace"\n')
    calls = [
        {"id": "r1", "name": "read_file", "arguments": {"path": "SECRETS/token.txt"}},
        {"id": "r2", "name": "read_file", "arguments": {"path": "App.Log"}},
        {"id": "l1", "name": "list_files", "arguments": {"path": "Secrets"}},
        {"id": "s1", "name": "search", "arguments": {"pattern": "CANARY", "path": "SECRETS"}},
        {"id": "ok", "name": "read_file", "arguments": {"path": "src/app.py"}},
    ]
    out = ask(project.cli, fake, project.ws, calls)
    project.assert_no_canary(out["_sent"])
    project.assert_no_canary(out["_stdout"])
    records = {c["id"]: c for c in out["toolCalls"]}
    assert records["ok"]["status"] == "done"  # mode workspace: read without a prompt
    expected = REFUSED if project.disk.folds else {"not_found"}
    for call_id in ("r1", "r2", "l1", "s1"):
        assert records[call_id].get("code") in expected, records[call_id]


def test_allow_globs_compare_folded_names_where_the_disk_folds(
    project: Project, fake: FakeOpenAI
) -> None:
    """`approval.allow = ["docs/**"]` with no terminal to ask on: `DOCS/guide.md` is read
    without a prompt on the folding disk (it is docs/guide.md) and missing on the control;
    a deny glob still wins over an allow glob in any case."""
    write(project.ws, "docs/guide.md", "# Guide\n")
    project.cli.config(CONFIG + 'allow = ["docs/**", "secrets/**"]\n')
    calls = [
        {"id": "d1", "name": "read_file", "arguments": {"path": "DOCS/guide.md"}},
        {"id": "s1", "name": "read_file", "arguments": {"path": "Secrets/token.txt"}},
        {"id": "p1", "name": "read_file", "arguments": {"path": "src/app.py"}},
    ]
    out = ask(project.cli, fake, project.ws, calls)
    project.assert_no_canary(out["_sent"])
    records = {c["id"]: c for c in out["toolCalls"]}
    # Not allowed by a glob, and no terminal to ask on: denied.
    assert records["p1"]["status"] == "denied", records["p1"]
    if project.disk.folds:
        assert records["d1"]["status"] == "done", records["d1"]
        assert "# Guide" in out["_sent"]
        assert records["s1"].get("code") in REFUSED, records["s1"]
    else:
        assert records["d1"].get("code") == "not_found", records["d1"]
        assert records["s1"].get("code") == "not_found", records["s1"]


# --- nested roots ------------------------------------------------------------------------------


def test_an_inner_root_named_in_another_spelling_keeps_the_outer_rules(
    disk: Disk, cli: Cli
) -> None:
    """Two workspace folders, the second inside the first: `…/ws` and `…/WS/private`.

    The outer root's .gitignore (`private/secret.txt`) and deny glob
    (`private/denied.txt`) apply inside the inner root too. On the control
    `WS/private` does not exist (a usage error); there the exact spelling is run.
    """
    base = disk.folder("nested")
    ws = base / "ws"
    c = {k: canary(k) for k in ("IGNORED", "DENIED")}
    write(ws, ".gitignore", "private/secret.txt\n")
    write(ws, "private/secret.txt", f"{c['IGNORED']}\n")
    write(ws, "private/denied.txt", f"{c['DENIED']}\n")
    write(ws, "private/ok.txt", "fine\n")
    cli.config('[approval]\ndeny = ["private/denied.txt"]\n')
    project = Project(disk, ws, cli, c)
    inner = base / "WS" / "private"
    if not disk.folds:
        missing = cli.tool("list_files", {}, workspaces=[ws, inner])
        assert missing.returncode == 2 and missing.stdout == ""
        inner = ws / "private"
    roots = (ws, inner)
    secret = project.tool("read_file", {"path": "private/secret.txt"}, *roots)
    assert secret.json["is_error"] is True and secret.code == "ignored_path", secret.stdout
    denied = project.tool("read_file", {"path": "private/denied.txt"}, *roots)
    assert denied.json["is_error"] is True and denied.code == "sensitive_path", denied.stdout
    ok = project.tool("read_file", {"path": "private/ok.txt"}, *roots)
    assert ok.served and "fine" in ok.content
    listing = project.tool("list_files", {"path": "private"}, *roots)
    assert listing.served and "private/ok.txt" in listing.content
    assert "secret.txt" not in listing.content and "denied.txt" not in listing.content
    found = project.tool("search", {"pattern": "CANARY|fine", "path": "private"}, *roots)
    assert found.served and "private/ok.txt:1:" in found.content
