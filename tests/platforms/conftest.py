"""Linux emulating macOS and Windows for the read path: shared pieces.

Every test here drives the real `lantern` entry point in a subprocess (HOME and
the XDG folders in `tmp_path`, no LANTERN_* / OPENAI_* variables), on real
files, through real kernels features that stand in for another platform:

- `no_openat2.py`: a seccomp filter that answers ENOSYS to openat2, inherited
  by every child (the jail's portable walk, as on macOS or an old kernel);
- `unshare -m` with a tmpfs over /proc (no /proc, as on macOS);
- NTFS through `lowntfs-3g -o ignore_case` (a disk that folds case, as APFS and
  NTFS do by default on macOS and Windows), with a case-sensitive control.

What none of them shows: the real macOS or Windows kernel, APFS's Unicode
rules, or Windows' own name handling. Each test module says what it shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
NO_OPENAT2 = HERE / "no_openat2.py"
LANTERN = Path(sys.executable).with_name("lantern")
TIMEOUT = 60  # seconds for one `lantern` command; each takes about one

#: What a refused read answers with (never `not_found`, never content).
REFUSED = frozenset({"sensitive_path", "ignored_path", "permission_denied"})


def canary(label: str) -> str:
    """A fresh canary text: it appears in one file only, so any output holding it leaked."""
    return f"CANARY-{label}-{uuid.uuid4().hex[:12]}"


@dataclass
class Result:
    """One finished `lantern` command."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        """The one JSON object `lantern tool` prints (fails unless stdout is exactly that)."""
        assert self.returncode == 0, self.stderr
        value = json.loads(self.stdout)
        assert isinstance(value, dict), self.stdout
        return value

    @property
    def content(self) -> str:
        text = self.json["content"]
        assert isinstance(text, str)
        return text

    @property
    def code(self) -> str | None:
        code = self.json["code"]
        assert code is None or isinstance(code, str)
        return code

    @property
    def served(self) -> bool:
        return self.json["is_error"] is False


class Cli:
    """Runs `lantern` with a clean environment, optionally inside a wrapper command."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LANTERN_", "OPENAI_", "OLLAMA_", "XDG_"))
        }
        homes = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
        for name in homes:
            folder = tmp / "home" / name.lower()
            folder.mkdir(parents=True, exist_ok=True)
            self.env[name] = str(folder)
        self.env["OLLAMA_HOST"] = "127.0.0.1:9"  # the discard port: nothing listens there
        self.env["NO_PROXY"] = self.env["no_proxy"] = "127.0.0.1,localhost"
        for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            self.env.pop(proxy, None)

    def config(self, text: str) -> Path:
        """Write `config.toml` where `platformdirs.user_config_path("lantern")` finds it."""
        path = Path(self.env["XDG_CONFIG_HOME"]) / "lantern" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        return path

    def lantern(self, *argv: str, wrap: Sequence[str] = (), timeout: float = TIMEOUT) -> Result:
        """`lantern ARGV…`, run as `WRAP… lantern ARGV…` when a wrapper is given."""
        proc = subprocess.run(
            [*wrap, str(LANTERN), *argv],
            env=self.env,
            cwd=self.tmp,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def tool(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        workspaces: Sequence[Path],
        wrap: Sequence[str] = (),
    ) -> Result:
        """`lantern tool NAME ARGS --workspace W…`; it answers every approval with allow."""
        argv = ["tool", name, json.dumps(args or {})]
        for folder in workspaces:
            argv += ["--workspace", str(folder)]
        return self.lantern(*argv, wrap=wrap)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    assert LANTERN.is_file(), f"{LANTERN} is missing; install the package (pip install -e .)"
    return Cli(tmp_path)


# --- a disk that folds case, and its control --------------------------------------------------


@dataclass(frozen=True)
class Disk:
    """A mounted NTFS image; `folds` says whether it was mounted with ignore_case."""

    mount: Path
    folds: bool

    def folder(self, label: str) -> Path:
        """A fresh, empty folder on this disk for one test."""
        path = self.mount / f"{label}-{uuid.uuid4().hex[:8]}"
        path.mkdir()
        return path


def _run(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)


def _why_no_fuse() -> str | None:
    if not sys.platform.startswith("linux"):
        return "a FUSE mount of NTFS needs Linux"
    if not os.path.exists("/dev/fuse"):
        return "FUSE is unavailable: /dev/fuse is missing"
    for tool in ("mkntfs", "lowntfs-3g"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install ntfs-3g; tests/run.sh does)"
    return None


def _unmount(mount: Path) -> None:
    if not os.path.ismount(mount):
        return
    if _run(["fusermount", "-u", str(mount)]).returncode != 0:
        _run(["umount", str(mount)])


@contextlib.contextmanager
def _ntfs(base: Path, label: str, *, ignore_case: bool) -> Iterator[Disk]:
    image, mount = base / f"{label}.img", base / label
    mount.mkdir()
    with open(image, "wb") as sparse:
        sparse.truncate(64 * 1024 * 1024)
    made = _run(["mkntfs", "-F", "-Q", "-q", "-L", label, str(image)])
    if made.returncode != 0:
        pytest.skip(f"mkntfs failed: {made.stderr.strip() or made.returncode}")
    options = ["-o", "ignore_case"] if ignore_case else []
    mounted = _run(["lowntfs-3g", *options, str(image), str(mount)])
    if mounted.returncode != 0 or not os.path.ismount(mount):
        pytest.skip(f"FUSE is unavailable: lowntfs-3g could not mount ({mounted.stderr.strip()})")
    try:
        yield Disk(mount, ignore_case)
    finally:
        _unmount(mount)
        image.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def disks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Disk]]:
    """Two NTFS images on FUSE: "folding" (`-o ignore_case`) and "control" (without)."""
    why = _why_no_fuse()
    if why is not None:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("ntfs")
    with (
        _ntfs(base, "folding", ignore_case=True) as folding,
        _ntfs(base, "control", ignore_case=False) as control,
    ):
        # The emulation itself: one folds, the other does not.
        probe = folding.folder("probe")
        (probe / "Case").mkdir()
        assert (probe / "CASE").is_dir(), "lowntfs-3g -o ignore_case did not fold case"
        probe = control.folder("probe")
        (probe / "Case").mkdir()
        assert not (probe / "CASE").exists(), "the control mount folds case"
        yield {"folding": folding, "control": control}
