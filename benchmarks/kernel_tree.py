#!/usr/bin/env python3
"""The Linux kernel source as a benchmark tree: Debian's `linux-source-*` package,
fetched and unpacked once into a cache folder.

    python benchmarks/kernel_tree.py [--cache DIR] [--package NAME]

prints the tree's path (fetching it first when the cache has none). `scale_bench.py
--kernel` calls `ensure_kernel` the same way.

Steps, each done once: `apt-get download PACKAGE` (the newest version `apt-cache policy`
offers; default `linux-source-6.1`, else the newest `linux-source-N.M` apt knows), the
`.deb` unpacked with `dpkg-deb -x`, the `linux-source-*.tar.xz` inside unpacked with
`tar`, and Debian's block at the end of the root `.gitignore` (`/*` then `!/debian/`,
which ignores the whole top level) removed. A `kernel.json` manifest is written last,
so an interrupted fetch is redone; the `.deb` and the unpacked package are then
removed, leaving only the tree (about 1.3 GB).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "lantern-bench"
DEFAULT_PACKAGE = "linux-source-6.1"
DEBIAN_BLOCK = ("/*", "!/debian/")  # the lines Debian appends to the root .gitignore


@dataclass(frozen=True)
class Kernel:
    root: Path
    package: str
    version: str


def _candidate(package: str) -> str | None:
    """The version `apt-cache policy` would install, or None when apt offers none."""
    out = subprocess.run(
        ["apt-cache", "policy", package], capture_output=True, text=True, check=False
    ).stdout
    found = re.search(r"Candidate:\s*(\S+)", out)
    return found.group(1) if found and found.group(1) != "(none)" else None


def _newest_source_package() -> str | None:
    out = subprocess.run(
        ["apt-cache", "search", "--names-only", r"^linux-source-[0-9]"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    names = re.findall(r"^(linux-source-(\d+)\.(\d+))\s", out, re.MULTILINE)
    if not names:
        return None
    return max(names, key=lambda n: (int(n[1]), int(n[2])))[0]


def _choose(package: str | None) -> tuple[str, str]:
    for name in [package or DEFAULT_PACKAGE, *([] if package else [_newest_source_package()])]:
        if name and (version := _candidate(name)):
            return name, version
    raise SystemExit(
        f"apt offers no {package or DEFAULT_PACKAGE} (nor any linux-source-N.M); "
        "run `apt-get update`, or pass --package"
    )


def _strip_debian_block(gitignore: Path) -> bool:
    """Remove Debian's `/*` + `!/debian/` lines (and the comment just above them)."""
    if not gitignore.is_file():
        return False
    lines = gitignore.read_text(encoding="utf-8").splitlines()
    for i in range(len(lines) - 1):
        if (lines[i].strip(), lines[i + 1].strip()) == DEBIAN_BLOCK:
            start = i
            while start > 0 and lines[start - 1].startswith("#"):
                start -= 1
            kept = lines[:start] + lines[i + 2 :]
            while kept and not kept[-1].strip():
                kept.pop()
            gitignore.write_text("\n".join(kept) + "\n", encoding="utf-8")
            return True
    return False


def _fetch(cache: Path, package: str, version: str, root: Path) -> None:
    work = cache / f"{package}.download"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.perf_counter()
    print(f"fetching {package}={version} into {work} ...", file=sys.stderr, flush=True)
    subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=work, check=True)
    deb = next(work.glob("*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "deb")], check=True)
    deb.unlink()
    tarball = next((work / "deb").rglob("linux-source-*.tar.*"))
    unpacked = work / "tree"
    unpacked.mkdir()
    print(f"unpacking {tarball.name} ...", file=sys.stderr, flush=True)
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(unpacked)], check=True)
    shutil.rmtree(work / "deb")
    (top,) = list(unpacked.iterdir())  # linux-source-6.1/
    if not _strip_debian_block(top / ".gitignore"):
        print("note: no Debian block in the root .gitignore", file=sys.stderr)
    shutil.rmtree(root, ignore_errors=True)
    top.rename(root)
    shutil.rmtree(work)
    print(f"fetched in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def ensure_kernel(cache: Path = DEFAULT_CACHE, package: str | None = None) -> Kernel:
    """The unpacked kernel tree under `cache`, fetched on first use."""
    cache.mkdir(parents=True, exist_ok=True)
    manifests = sorted(cache.glob("linux-source-*.json"))
    wanted = [m for m in manifests if package is None or m.stem == package]
    if wanted:
        info = json.loads(wanted[-1].read_text())
        if Path(info["root"]).is_dir():
            return Kernel(Path(info["root"]), info["package"], info["version"])
    name, version = _choose(package)
    root = cache / name
    manifest = cache / f"{name}.json"
    manifest.unlink(missing_ok=True)
    _fetch(cache, name, version, root)
    manifest.write_text(json.dumps({"root": str(root), "package": name, "version": version}))
    return Kernel(root, name, version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="cache folder")
    parser.add_argument("--package", help=f"Debian package (default {DEFAULT_PACKAGE})")
    args = parser.parse_args(argv)
    kernel = ensure_kernel(args.cache, args.package)
    print(f"{kernel.root}  ({kernel.package} {kernel.version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
