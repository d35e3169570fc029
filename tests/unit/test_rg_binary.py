"""Which `rg` Lantern runs: the bundled one, else one from an absolute PATH folder; never
one from the current folder, which may be the repository being asked about.

Every fake `rg` here is a real executable that leaves a canary file when it runs,
and each test runs the rg that was chosen, so "never picked" is checked by
behaviour as well as by path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from lantern.errors import ToolError
from lantern.tools.ripgrep.process import rg_binary

REAL_RG = rg_binary()  # the bundled rg, found before any test changes the lookup


@pytest.fixture
def lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No bundled rg (the scripts folder and the interpreter's folder hold none), the
    working folder set to `tmp_path/"repo"`, and rg_binary's cache cleared around the test."""
    empty = tmp_path / "no-rg-here"
    empty.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(empty))
    monkeypatch.setattr(sys, "executable", str(empty / "python3"))
    monkeypatch.chdir(repo)
    rg_binary.cache_clear()
    yield repo
    rg_binary.cache_clear()


def hostile(folder: Path, name: str) -> Path:
    """An executable `folder/name` that leaves `ran-<name>` next to it when it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\ntouch '{folder}/ran-{name}'\necho ripgrep 0.0.0-hostile\n")
    script.chmod(0o755)
    return script


def real_rg_in(folder: Path, name: str = "rg") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).symlink_to(REAL_RG)
    return folder / name


def runs_real_rg(path: str) -> bool:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    return out.startswith("ripgrep ") and "hostile" not in out


def test_an_rg_in_the_current_folder_or_a_relative_path_entry_never_runs(
    lookup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = lookup
    hostile(repo, "rg")
    hostile(repo / "bin", "rg")
    hostile(repo / "tools", "rg")
    good = real_rg_in(tmp_path / "system-bin")
    # '' and '.' are the current folder to a shell; 'bin' and './tools' lie beneath it.
    path = os.pathsep.join(["", ".", "bin", "./tools", str(tmp_path / "system-bin")])
    monkeypatch.setenv("PATH", path)
    found = rg_binary()
    assert found == str(good)
    assert runs_real_rg(found)
    assert list(repo.rglob("ran-*")) == []


def test_only_relative_entries_means_not_found(
    lookup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile(lookup, "rg")
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", "bin"]))
    with pytest.raises(ToolError) as refused:
        rg_binary()
    assert refused.value.code == "io_error"
    assert list(lookup.rglob("ran-*")) == []


def test_the_bundled_rg_comes_before_path(
    lookup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = real_rg_in(tmp_path / "venv-bin")
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path / "venv-bin"))
    hostile(tmp_path / "earlier-on-path", "rg")
    monkeypatch.setenv("PATH", str(tmp_path / "earlier-on-path"))
    assert rg_binary() == str(bundled)
    assert runs_real_rg(rg_binary())


def test_windows_takes_rg_exe_from_an_absolute_folder_and_never_a_script(
    lookup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Windows `shutil.which("rg")` would look in the current folder first and accept
    `rg.bat` through PATHEXT; Lantern takes only `rg.exe`, only from absolute folders."""
    repo = lookup
    for name in ("rg.exe", "rg.bat", "rg.cmd", "rg"):
        hostile(repo, name)
    scripts_only = tmp_path / "scripts-only"
    for name in ("rg.bat", "rg.cmd", "rg"):
        hostile(scripts_only, name)
    good = real_rg_in(tmp_path / "Program Files" / "ripgrep", "rg.exe")
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", str(scripts_only), str(good.parent)]))
    monkeypatch.setattr(sys, "platform", "win32")  # rg_binary reads it at each call
    found = rg_binary()
    monkeypatch.undo()  # sys.platform back before anything else runs
    assert found == str(good)
    assert runs_real_rg(found)
    assert list(tmp_path.rglob("ran-*")) == []
