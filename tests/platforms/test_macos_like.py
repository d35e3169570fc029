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
back where an opened file really is) walks `..` from the handle up to the root
instead of reading /proc, says so on stderr and in `lantern doctor`, and refuses a
file whose folder was moved out of the workspace while the jail walked its path.
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
    handle's path back; `lantern tool` says on stderr that it walks back instead."""
    read = project.tool("read_file", {"path": "src/app.py"}, macos_like)
    assert read.served
    assert re.search(r"check 5", read.stderr, re.IGNORECASE), read.stderr
    plain = project.tool("read_file", {"path": "src/app.py"}, [])
    assert plain.served
    assert not re.search(r"check 5", plain.stderr, re.IGNORECASE), plain.stderr


WALK = re.compile(r"walk", re.IGNORECASE)
READBACK = re.compile(r"check 5|read[- ]?back", re.IGNORECASE)


def readback_lines(run: Result) -> list[str]:
    return [line for line in (run.stdout + run.stderr).splitlines() if READBACK.search(line)]


def test_doctor_reports_how_check_5_reads_back(cli: Cli, macos_like: list[str]) -> None:
    """`lantern doctor` says how check 5 reads a handle back; with /proc empty, by the walk
    up `..`, and with /proc there, through it.

    The endpoint is a closed loopback port, so doctor exits non-zero; only its
    check 5 line matters here.
    """
    inside = readback_lines(cli.lantern("doctor", wrap=macos_like))
    assert inside, "lantern doctor says nothing about check 5 (the read-back)"
    assert any(WALK.search(line) for line in inside), inside
    assert not any("UNAVAILABLE" in line for line in inside), inside
    outside = readback_lines(cli.lantern("doctor"))
    assert outside, "lantern doctor says nothing about check 5 (the read-back)"
    assert any("/proc/self/fd" in line for line in outside), outside
    assert not any(WALK.search(line) for line in outside), outside


# Run inside the emulation: the read path with a folder moved out of the workspace while
# the jail walks the path, right after it opened that folder and before the next name.
RACE = """\
import asyncio, json, os, sys
from lantern.approvals.approver import Decision, Fixed
from lantern.tools.base import ToolContext
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace

ws, away, tool, args, last = sys.argv[1:6]
real_open = os.open
moved = []

def racing_open(path, flags, mode=0o777, *, dir_fd=None):
    if path == last and not moved and sys._getframe(1).f_code.co_name == "_walk_open":
        os.rename(os.path.join(ws, "a"), os.path.join(away, "a"))
        moved.append(path)
    return real_open(path, flags, mode, dir_fd=dir_fd)

os.open = racing_open
ctx = ToolContext(Workspace([ws]), Fixed(Decision.ALLOW_ONCE))
result = asyncio.run(run_tool(tool, json.loads(args), ctx))
print(json.dumps({"moved": moved, "code": result.code, "content": result.content}))
"""


@pytest.mark.parametrize(
    ("tool", "args", "last"),
    [
        ("read_file", {"path": "a/secret.txt"}, "secret.txt"),
        ("list_files", {"path": "a/b"}, "b"),
        ("search", {"pattern": "CANARY", "path": "a/b"}, "b"),
    ],
    ids=["file", "folder-list", "folder-search"],
)
def test_a_folder_moved_out_during_the_walk_is_not_served(
    tmp_path: Path, cli: Cli, macos_like: list[str], tool: str, args: dict[str, object], last: str
) -> None:
    """No /proc and no openat2 (so no F_GETPATH either): check 5 walks `..` from the
    handle up to the root instead, and finds the folder gone from the workspace."""
    ws, away = tmp_path / "ws", tmp_path / "away"
    secret = canary("MOVED")
    write(ws, "a/secret.txt", f"{secret}\n")
    write(ws, f"a/b/{secret}.txt", f"{secret}\n")
    away.mkdir()
    done = subprocess.run(
        [*macos_like, sys.executable, "-c", RACE, str(ws), str(away), tool, json.dumps(args), last],
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["moved"] == [last]  # the race happened where it was meant to
    assert seen["code"] is not None, seen["content"]
    assert secret not in seen["content"]
