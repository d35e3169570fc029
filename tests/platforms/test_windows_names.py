"""Windows name rules, on every platform: names that would alias a refused entry on Windows.

On Windows, `.env:x` and `.env::$DATA` open (a stream of) `.env`; `secrets.`
and `app.log ` are `secrets` and `app.log` (trailing dots and spaces are
dropped); `ENV~1`, `GIT~1`, `ID_ED2~1`, `SECRET~1` can be 8.3 short names of
`.env`, `.git`, `id_ed25519`, `secrets`; and `CON`, `nul.txt`, `COM1`,
`CONIN$` are devices. Linux has none of that, but these are legal file names
here: a repository made on Linux can hold them, and the same checkout opened
on Windows (or a tool that copies it there) turns them into aliases. So
Lantern refuses them everywhere.

Each name below is a real file (or folder) in a plain temporary folder holding
its own canary, with `approval.deny = ["secrets/**"]` and a `.gitignore` with
`*.log`: read_file refuses it, list_files never lists it, search never finds its
canary (over the workspace or aimed at it), while the ordinary files next to
them are served. Once through the real `lantern tool`, and then name by name
in process (the same `Workspace`, `Policy` and tools, real files and real rg;
a subprocess per name would add a minute of CI for nothing more).

What this shows: the name rules, as Linux can hold the names. What it does not
show: Windows itself — real streams, real short names the file system makes,
real devices, junctions; Lantern does not run its tools on native Windows
(docs/platforms.md).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ctx_for, run, write
from tests.platforms.conftest import REFUSED, Cli, Result, canary

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="these names cannot exist as plain files on Windows"
)


@dataclass(frozen=True)
class Alias:
    path: str  # the file holding the canary, workspace-relative
    folder: str | None = None  # its folder, when the alias is the folder's name


ALIASES = {
    # alternate data stream suffixes
    ".env:x": Alias(".env:x"),
    ".env::$DATA": Alias(".env::$DATA"),
    "server.pem::$DATA": Alias("server.pem::$DATA"),
    ".git::$INDEX_ALLOCATION/config": Alias(
        ".git::$INDEX_ALLOCATION/config", ".git::$INDEX_ALLOCATION"
    ),
    # trailing dots and spaces
    "secrets./x": Alias("secrets./x", "secrets."),
    "secrets /x": Alias("secrets /x", "secrets "),
    "app.log.": Alias("app.log."),
    "app.log ": Alias("app.log "),
    ".env.": Alias(".env."),
    # 8.3 short names
    "ENV~1": Alias("ENV~1"),
    "GIT~1/config": Alias("GIT~1/config", "GIT~1"),
    "ID_ED2~1": Alias("ID_ED2~1"),
    "SECRET~1/token.txt": Alias("SECRET~1/token.txt", "SECRET~1"),
    # reserved device names
    "CON": Alias("CON"),
    "nul.txt": Alias("nul.txt"),
    "COM1": Alias("COM1"),
    "CONIN$": Alias("CONIN$"),
    "aux/x.txt": Alias("aux/x.txt", "aux"),
}
ORDINARY = {"src/app.py": "def main():\n    return 42\n", "notes.txt": "ordinary notes, return\n"}


def build(ws: Path) -> dict[str, str]:
    """Write every alias (with its own canary) and the ordinary files; return the canaries."""
    canaries = {name: canary(f"ALIAS{i}") for i, name in enumerate(ALIASES)}
    for name, alias in ALIASES.items():
        write(ws, alias.path, f"secret={canaries[name]}\n")
    for path, text in ORDINARY.items():
        write(ws, path, text)
    write(ws, ".gitignore", "*.log\n")
    return canaries


def assert_no_canary(canaries: dict[str, str], text: str) -> None:
    for label, value in canaries.items():
        assert value not in text, f"the canary of {label!r} leaked: {text}"


def listed_paths(listing: str) -> set[str]:
    """The paths of a list_files answer (`path (size)` lines after the header)."""
    return {line.rsplit(" (", 1)[0] for line in listing.splitlines()[1:] if line.strip()}


def test_through_the_cli_aliases_are_refused_and_ordinary_files_served(
    tmp_path: Path, cli: Cli
) -> None:
    """The whole workspace through `lantern tool` (config.toml's deny glob, real rg)."""
    ws = tmp_path / "ws"
    canaries = build(ws)
    cli.config('[approval]\ndeny = ["secrets/**"]\n')

    def tool(name: str, args: dict[str, object]) -> Result:
        run = cli.tool(name, args, workspaces=[ws])
        assert_no_canary(canaries, run.stdout)
        return run

    listing = tool("list_files", {})
    assert listing.served, listing.stdout
    paths = listed_paths(listing.content)
    assert set(ORDINARY) <= paths, listing.content
    assert not paths & {a.path for a in ALIASES.values()}, listing.content
    found = tool("search", {"pattern": "CANARY|return"})
    assert found.served, found.stdout
    assert "src/app.py:2:" in found.content and "notes.txt:1:" in found.content
    for path in ORDINARY:
        read = tool("read_file", {"path": path})
        assert read.served and "return" in read.content
    for path in ("ENV~1", "secrets./x", "CON"):
        read = tool("read_file", {"path": path})
        assert read.json["is_error"] is True and read.code in REFUSED, read.stdout


@pytest.mark.parametrize("name", ALIASES)
async def test_alias_is_refused(ws: Path, name: str) -> None:
    canaries = build(ws)
    tools = ctx_for(ws, deny=["secrets/**"])  # the same workspace as `lantern tool` builds it
    alias = ALIASES[name]
    read = await run(tools, "read_file", {"path": alias.path})
    assert_no_canary(canaries, read.content)
    assert read.is_error, f"{alias.path!r} was served: {read.content}"
    assert read.code in REFUSED, (read.code, read.content)
    where = alias.folder or alias.path
    aimed = await run(tools, "search", {"pattern": "CANARY|secret", "path": where})
    assert_no_canary(canaries, aimed.content)
    assert aimed.is_error, f"search in {where!r} ran: {aimed.content}"
    assert aimed.code in REFUSED, (aimed.code, aimed.content)
    if alias.folder is not None:
        listing = await run(tools, "list_files", {"path": alias.folder})
        assert_no_canary(canaries, listing.content)
        assert listing.is_error, f"{alias.folder!r} was listed: {listing.content}"
        assert listing.code in REFUSED, (listing.code, listing.content)
    everything = await run(tools, "list_files", {})
    assert not everything.is_error and alias.path not in listed_paths(everything.content)
    found = await run(tools, "search", {"pattern": canaries[name]})
    assert not found.is_error and found.content.startswith("[no matches"), found.content
