"""docs/architecture.md's map names every module where it lives, so the map cannot drift
from the code: a module added, moved or renamed without its row fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "lantern"
DOC = ROOT / "docs" / "architecture.md"


def _map_rows() -> dict[str, str]:
    """The map's rows: folder (`agent/protocol/`, or `top level`) → the row's text."""
    text = DOC.read_text("utf-8")
    section = text.split("## The map", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] not in ("folder", "---"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def _modules(folder: Path) -> list[str]:
    skip = ("__init__.py", "__main__.py")
    return sorted(p.name for p in folder.glob("*.py") if p.name not in skip)


def _folders() -> dict[str, Path]:
    found = {"top level": PACKAGE}
    for init in PACKAGE.rglob("__init__.py"):
        folder = init.parent
        if folder != PACKAGE:
            found[folder.relative_to(PACKAGE).as_posix() + "/"] = folder
    return found


def test_every_folder_has_a_row_and_every_row_a_folder() -> None:
    assert sorted(_map_rows()) == sorted(_folders())


def test_every_module_is_named_in_its_folders_row() -> None:
    rows = _map_rows()
    whole_doc = DOC.read_text("utf-8")
    missing = []
    for name, folder in _folders().items():
        # lsp/'s row points to the section that names each of its modules.
        where = whole_doc if name == "lsp/" else rows.get(name, "")
        for module in _modules(folder):
            if not re.search(rf"(?<![\w/]){re.escape(module)}", where) and (
                f"{name}{module}" not in where
            ):
                missing.append(f"{name}{module}")
    assert not missing, f"docs/architecture.md's map does not name: {missing}"
