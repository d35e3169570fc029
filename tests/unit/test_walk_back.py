"""Check 5's portable read-back (`jail.walk_back`): where neither /proc/self/fd nor
F_GETPATH answers, `..` is walked from the handle's folder up to the root. Real files,
real renames; the same function the read path calls on such a machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lantern.errors import ToolError
from lantern.workspace.jail import open_beneath, walk_back

from tests.conftest import write


def opened(ws: Path, rel: str, *, directory: bool = False) -> int:
    root = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return open_beneath(root, tuple(rel.split("/")), rel, directory=directory)
    finally:
        os.close(root)


def refusal(fd: int, ws: Path, rel: str) -> str:
    try:
        with pytest.raises(ToolError) as caught:
            walk_back(fd, str(ws), tuple(rel.split("/")))
    finally:
        os.close(fd)
    return caught.value.code


@pytest.mark.parametrize("rel", ["top.txt", "a/b/c/deep.txt", "a/b"])
def test_a_handle_where_it_was_opened_is_inside(ws: Path, rel: str) -> None:
    write(ws, "top.txt")
    write(ws, "a/b/c/deep.txt")
    fd = opened(ws, rel, directory=rel == "a/b")
    try:
        assert walk_back(fd, str(ws), tuple(rel.split("/"))) == tuple(rel.split("/"))
    finally:
        os.close(fd)


def test_the_root_itself(ws: Path) -> None:
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert walk_back(fd, str(ws), ()) == ()
    finally:
        os.close(fd)


def test_a_folder_moved_out_after_its_open_is_outside(tmp_path: Path, ws: Path) -> None:
    write(ws, "a/b/x.txt")
    fd = opened(ws, "a/b", directory=True)
    (tmp_path / "away").mkdir()
    os.rename(ws / "a", tmp_path / "away" / "a")
    assert refusal(fd, ws, "a/b") == "outside_workspace"


def test_a_file_whose_folder_moved_out_is_not_served(tmp_path: Path, ws: Path) -> None:
    write(ws, "a/secret.txt")
    fd = opened(ws, "a/secret.txt")
    os.rename(ws / "a", tmp_path / "a")
    assert refusal(fd, ws, "a/secret.txt") == "io_error"


def test_a_folder_moved_elsewhere_inside_is_refused(ws: Path) -> None:
    write(ws, "a/b/x.txt")
    (ws / "c").mkdir()
    fd = opened(ws, "a/b", directory=True)
    os.rename(ws / "a", ws / "c" / "a")
    assert refusal(fd, ws, "a/b") == "io_error"


def test_a_file_swapped_or_linked_after_its_open_is_refused(ws: Path, tmp_path: Path) -> None:
    write(ws, "a/f.txt", "first\n")
    fd = opened(ws, "a/f.txt")
    os.rename(ws / "a" / "f.txt", ws / "a" / "old.txt")
    write(ws, "a/f.txt", "second\n")  # another file under the name it was opened by
    assert refusal(fd, ws, "a/f.txt") == "io_error"
    fd = opened(ws, "a/f.txt")
    os.link(ws / "a" / "f.txt", tmp_path / "elsewhere.txt")  # a second name, outside
    assert refusal(fd, ws, "a/f.txt") == "io_error"
