"""`workspace/suggestions.py`: how `@` completion ranks what matches, and that its walk is
bounded by count (entries looked at, depth), with ignored folders costing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from lantern.workspace import suggestions
from lantern.workspace.policy import Policy
from lantern.workspace.roots import Workspace


def _labels(workspace: Workspace, query: str) -> list[str]:
    return [s.label for s in suggestions.suggest(workspace, query, [])]


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n", "utf-8")


def test_the_name_counts_before_the_path_and_the_shallow_before_the_deep(
    tmp_path: Path,
) -> None:
    for name in ("lib/myapp.py", "src/app_util.py", "app.py", "a/p/p.txt", "deep/er/app.py"):
        _touch(tmp_path / name)
    labels = _labels(Workspace([tmp_path]), "APP")
    assert labels == ["app.py", "deep/er/app.py", "src/app_util.py", "lib/myapp.py", "a/p/p.txt"]


def test_a_query_with_a_slash_matches_the_path(tmp_path: Path) -> None:
    _touch(tmp_path / "src" / "server" / "main.py")
    _touch(tmp_path / "docs" / "server.md")
    labels = _labels(Workspace([tmp_path]), "src/ser")
    assert labels[:2] == ["src/server/", "src/server/main.py"]
    assert "docs/server.md" not in labels


def test_denied_names_are_refused_with_the_setting_named(tmp_path: Path) -> None:
    _touch(tmp_path / "private" / "plan.md")
    workspace = Workspace([tmp_path], Policy(["private/"]))
    [found] = suggestions.suggest(workspace, "private", [])
    assert found.refused == "private matches your approval.deny setting"
    assert _labels(workspace, "plan") == []  # a refused folder is not walked into


def test_several_workspace_folders_offer_themselves_and_their_top(tmp_path: Path) -> None:
    _touch(tmp_path / "one" / "a.txt")
    _touch(tmp_path / "two" / "sub" / "b.txt")
    workspace = Workspace([tmp_path / "one", tmp_path / "two"])
    assert _labels(workspace, "") == ["one/", "two/", "two/sub/", "one/a.txt"]


def test_the_walk_stops_after_a_count_of_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        _touch(tmp_path / "a_first" / f"f{n:02}.txt")
    _touch(tmp_path / "z_later" / "needle.txt")
    workspace = Workspace([tmp_path])
    assert _labels(workspace, "needle") == ["z_later/needle.txt"]
    monkeypatch.setattr(suggestions, "MAX_ENTRIES", 20)
    assert _labels(workspace, "needle") == []  # a_first's 30 entries used the count up


def test_an_ignored_folder_costs_nothing_of_the_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n", "utf-8")
    for n in range(30):
        _touch(tmp_path / "node_modules" / "pkg" / f"needle{n}.js")
    _touch(tmp_path / "src" / "needle.ts")
    monkeypatch.setattr(suggestions, "MAX_ENTRIES", 10)
    assert _labels(Workspace([tmp_path]), "needle") == ["src/needle.ts"]


def test_the_walk_stops_at_a_depth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _touch(tmp_path / "a" / "b" / "c" / "needle.txt")
    workspace = Workspace([tmp_path])
    assert _labels(workspace, "needle") == ["a/b/c/needle.txt"]
    monkeypatch.setattr(suggestions, "MAX_DEPTH", 2)
    assert _labels(workspace, "needle") == []
