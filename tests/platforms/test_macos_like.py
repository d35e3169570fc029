"""A macOS-like run: no openat2 and an empty /proc, through the real `lantern` CLI.

Each command runs as

    unshare -m --propagation private -- sh -c 'mount -t tmpfs … /proc && exec "$@"' \\
        sh python tests/platforms/no_openat2.py lantern …

so in its own mount namespace /proc is an empty tmpfs (nothing under
/proc/self/fd to start ripgrep in or to read a handle's path back from), and
openat2 answers ENOSYS (the jail walks one component at a time with
O_NOFOLLOW). That is what macOS lacks that Lantern's Linux read path uses.

What this shows: list_files, search and read_file work without /proc and
openat2; refused files (the built-in sensitive names, `approval.deny`, ignore
files, links out) stay refused and their canaries never appear; check 5 (reading
back where an opened file really is) is not skipped silently: `lantern tool`
says so on stderr and `lantern doctor` reports it unavailable.
What it does not show: macOS itself — `F_GETPATH`, `O_NOFOLLOW_ANY`, APFS and
its Unicode normalization, the darwin packages starting. Those need a Mac.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.platforms.conftest import NO_OPENAT2, TIMEOUT, Cli, Result, canary

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="emulated on Linux")

MACOS_LIKE = [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
    'mount -t tmpfs lantern-no-proc /proc && exec "$@"',
    "sh",  # $0 of the script; "$@" is what follows
    sys.executable,
    str(NO_OPENAT2),
]

# Run inside the emulation: what it looks like from there.
INSIDE = """\
import ctypes, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack("QQQ", os.O_RDONLY, 0, 0)
fd = libc.syscall(ctypes.c_long(437), ctypes.c_int(-100), ctypes.c_char_p(b"/"),
                  ctypes.c_char_p(how), ctypes.c_size_t(len(how)))
print(json.dumps({"proc": os.listdir("/proc"), "openat2_errno": ctypes.get_errno() if fd < 0
                  else 0, "fd_dir": os.path.exists("/proc/self/fd")}))
"""


@pytest.fixture(scope="session")
def macos_like() -> list[str]:
    """The wrapper command; skips (saying why) where unshare or mounting is not permitted."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed: cannot hide /proc")
    done = subprocess.run(
        [*MACOS_LIKE, sys.executable, "-c", INSIDE],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if done.returncode != 0:
        words = done.stderr.strip()
        refused = r"unshare failed|not permitted|permission denied|only root|superuser"
        if re.search(refused, words, re.IGNORECASE):
            pytest.skip(f"a private mount namespace is not permitted here: {words}")
        pytest.fail(f"the macOS-like wrapper failed: {words}")
    seen = json.loads(done.stdout)
    # The emulation itself: an empty /proc and no openat2.
    assert seen == {"proc": [], "openat2_errno": 38, "fd_dir": False}, seen
    return MACOS_LIKE


class Project:
    """A workspace with one canary in every kind of refused file, and an ordinary file."""

    def __init__(self, tmp: Path, cli: Cli) -> None:
        self.ws = tmp / "ws"
        self.canaries = {k: canary(k) for k in ("ENV", "DENIED", "LOG", "HIDDEN", "OUTSIDE")}
        c = self.canaries
        write(self.ws, "src/app.py", "def main():\n    return 42\n")
        write(self.ws, "docs/guide.md", "# Guide\n\nreturn to the start\n")
        write(self.ws, ".env", f"TOKEN={c['ENV']}\n")
        write(self.ws, "secrets/token.txt", f"{c['DENIED']}\n")
        write(self.ws, "app.log", f"{c['LOG']}\n")
        write(self.ws, "sub/hidden.txt", f"{c['HIDDEN']}\n")
        write(self.ws, "sub/shown.txt", "shown, return\n")
        write(self.ws, ".gitignore", "*.log\n")
        write(self.ws, ".lanternignore", "sub/hidden.txt\n")
        write(tmp, "outside.txt", f"{c['OUTSIDE']}\n")
        (self.ws / "docs" / "out.txt").symlink_to(tmp / "outside.txt")
        cli.config('[approval]\ndeny = ["secrets/**"]\n')
        self.cli = cli

    def tool(self, name: str, args: dict[str, object], wrap: list[str]) -> Result:
        run = self.cli.tool(name, args, workspaces=[self.ws], wrap=wrap)
        for text in self.canaries.values():
            assert text not in run.stdout, f"{name} {args} leaked a canary: {run.stdout}"
        assert str(self.ws) not in run.stdout
        return run


@pytest.fixture
def project(tmp_path: Path, cli: Cli) -> Project:
    return Project(tmp_path, cli)


def test_list_search_and_read_work(project: Project, macos_like: list[str]) -> None:
    listing = project.tool("list_files", {}, macos_like)
    assert listing.served, listing.stdout + listing.stderr
    for name in ("src/app.py", "docs/guide.md", "sub/shown.txt"):
        assert name in listing.content
    for name in (".env", "token.txt", "app.log", "hidden.txt", "out.txt"):
        assert name not in listing.content

    found = project.tool("search", {"pattern": "CANARY|return"}, macos_like)
    assert found.served, found.stdout + found.stderr
    assert "src/app.py:2:" in found.content and "sub/shown.txt:1:" in found.content

    sub = project.tool("search", {"pattern": "CANARY|shown", "path": "sub"}, macos_like)
    assert sub.served and "sub/shown.txt:1:" in sub.content

    listed = project.tool("list_files", {"path": "sub"}, macos_like)
    assert listed.served and "sub/shown.txt" in listed.content

    read = project.tool("read_file", {"path": "src/app.py"}, macos_like)
    assert read.served and "return 42" in read.content


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("read_file", {"path": ".env"}, "sensitive_path"),
        ("read_file", {"path": "secrets/token.txt"}, "sensitive_path"),
        ("list_files", {"path": "secrets"}, "sensitive_path"),
        ("search", {"pattern": "CANARY", "path": "secrets"}, "sensitive_path"),
        ("read_file", {"path": "app.log"}, "ignored_path"),
        ("read_file", {"path": "sub/hidden.txt"}, "ignored_path"),
        ("read_file", {"path": "docs/out.txt"}, "symlink"),
        ("read_file", {"path": "docs/../../outside.txt"}, "outside_workspace"),
    ],
    ids=["env", "denied", "denied-list", "denied-search", "log", "hidden", "link-out", "dotdot"],
)
def test_refusals_hold(
    project: Project, macos_like: list[str], tool: str, args: dict[str, object], code: str | None
) -> None:
    run = project.tool(tool, args, macos_like)
    assert run.json["is_error"] is True, run.stdout
    if code is not None:
        assert run.code == code


def test_check_5_is_never_skipped_silently(project: Project, macos_like: list[str]) -> None:
    """Without /proc (and without F_GETPATH, which Linux lacks) check 5 cannot read a
    handle's path back; `lantern tool` must say so on stderr rather than skip quietly."""
    read = project.tool("read_file", {"path": "src/app.py"}, macos_like)
    assert read.served
    assert re.search(r"check 5", read.stderr, re.IGNORECASE), read.stderr
    plain = project.tool("read_file", {"path": "src/app.py"}, [])
    assert plain.served
    assert not re.search(r"check 5", plain.stderr, re.IGNORECASE), plain.stderr


UNAVAILABLE = re.compile(r"unavailable|not available|cannot|can't|no /proc|none", re.IGNORECASE)
READBACK = re.compile(r"check 5|read[- ]?back", re.IGNORECASE)


def readback_lines(run: Result) -> list[str]:
    return [line for line in (run.stdout + run.stderr).splitlines() if READBACK.search(line)]


def test_doctor_reports_check_5_unavailable(cli: Cli, macos_like: list[str]) -> None:
    """`lantern doctor` says how check 5 reads a handle back; with /proc empty, that it can't.

    The endpoint is a closed loopback port, so doctor exits non-zero; only its
    check 5 line matters here.
    """
    inside = readback_lines(cli.lantern("doctor", wrap=macos_like))
    assert inside, "lantern doctor says nothing about check 5 (the read-back)"
    assert any(UNAVAILABLE.search(line) for line in inside), inside
    outside = readback_lines(cli.lantern("doctor"))
    assert outside, "lantern doctor says nothing about check 5 (the read-back)"
    assert not any(UNAVAILABLE.search(line) for line in outside), outside
