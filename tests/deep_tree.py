"""A folder chain deeper than the kernel takes in one path, for the hostile-workspace tests
and benchmarks/tools_bench.py --hardening (which imports it from the repository root)."""

from __future__ import annotations

import os
from pathlib import Path


def make_deep(root: Path, depth: int, files: int) -> tuple[str, ...]:
    """`files` small files (each the line "needle") at the bottom of `depth` nested folders
    named "d", made by handle since the whole path is too long for one call; returns the
    chain's parts. Remove it with `rm -rf`: a recursive rmtree overflows on this depth."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    for i in range(files):
        out = os.open(f"f{i}.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"needle\n")
        os.close(out)
    os.close(fd)
    return ("d",) * depth
