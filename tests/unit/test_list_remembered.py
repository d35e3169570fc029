"""list_files remembers, across calls, what only the rules decide: a folder's check (by its
path and the very ignore files its walk found), the answers by name where names alone
decide (shared by every folder under the same ignore files), and the verdicts of folders.
What it lists must stay exactly what the one-path-at-a-time check (`check_policy`) allows,
on the first call, on the calls after it, and after an ignore file changes.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from lantern.errors import ToolError
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace

from tests.conftest import call, ctx_for, write

NAMES = [
    "a.c", "a.o", "Makefile", "x.log", "keep.log", "notes.md", ".env", "config", "id_rsa",
    "data.json", "z.tmp", "b.c", "gen.h", "x.log.", "a.o:s", "CON", "build.txt", "é.txt",
]  # fmt: skip
FOLDERS = [
    "", "src", "src/gen", "src/gen/deep", "lib", "lib/gen", "docs", ".kube", "tools/x",
    "tools/x/gen", "out", "lib/out/sub",
    "/".join(["deep"] * 40), "/".join(["deep"] * 40) + "/gen",  # checked in a worker thread
]  # fmt: skip
IGNORES = {
    ".gitignore": "*.o\n*.log\n!keep.log\n/out/\ngen/*.h\n/lib/gen/a.c\n",
    "src/.gitignore": "*.tmp\nb.c\n",
    "tools/x/.lanternignore": "*.md\ndeep/\n",
    "lib/.gitignore": "data.json\n",
}


def _tree(ws: Path, rng: random.Random) -> None:
    for folder in FOLDERS:
        for name in rng.sample(NAMES, 12):
            write(ws, f"{folder}/{name}" if folder else name, "x\n")
    for rel, text in IGNORES.items():
        write(ws, rel, text)


def _exact(workspace: Workspace) -> list[str]:
    """Every file under the root that the one-path check lets through, by name."""
    root = Path(workspace.roots[0].path)
    found: list[str] = []
    for here, _, files in os.walk(root):
        for name in files:
            rel = (Path(here) / name).relative_to(root).as_posix()
            try:
                workspace.check_policy(workspace.targets(rel, file=True)[0], is_dir=False)
            except ToolError:
                continue
            found.append(rel)
    return sorted(found)


async def _listed(workspace: Workspace) -> list[str]:
    result = await call(ctx_for(workspace), "list_files", max_results=2000)
    assert not result.is_error, result.content
    return sorted(
        line.rsplit(" (", 1)[0] for line in result.content.splitlines() if not line.startswith("[")
    )


@pytest.mark.parametrize("deny", [(), ("**/b.c",)], ids=["denylist", "deny-globs"])
async def test_listing_again_and_after_a_change_lists_what_the_exact_check_allows(
    ws: Path, deny: tuple[str, ...]
) -> None:
    _tree(ws, random.Random(28))
    workspace = Workspace([ws], Policy(deny))
    want = _exact(workspace)
    assert 40 < len(want) < len(FOLDERS) * 12  # the rules hide some files, not all
    assert await _listed(workspace) == want
    assert await _listed(workspace) == want  # from what the first call remembered
    # A second workspace on the same files shares what is remembered, and agrees.
    assert await _listed(Workspace([ws], Policy(deny))) == want

    # An ignore file changes, one appears, one goes: the same folders, new answers.
    write(ws, "src/.gitignore", "*.c\n")
    write(ws, "docs/.gitignore", "Makefile\n")
    os.remove(ws / "lib/.gitignore")
    changed = _exact(workspace)
    assert changed != want
    assert await _listed(workspace) == changed
    assert await _listed(workspace) == changed
