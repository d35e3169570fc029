"""The launcher `no_openat2.py`: openat2 answers ENOSYS in the process and all its children.

What this shows: under the launcher the kernel itself refuses openat2 (a real
system call made through ctypes gets ENOSYS), in the exec'ed process and in a
child it starts, while plain openat still works — so the read-path suites that
tests/run.sh runs under it really take Lantern's portable walk, in every
process (`lantern tool`, ripgrep's parent), not through an in-process switch.
What it does not show: any other kernel; macOS has no openat2 at all, and this
is the closest Linux gets to that for the jail's open.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import write
from tests.platforms.conftest import NO_OPENAT2, TIMEOUT, Cli, canary

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp is Linux")

# Calls openat2 and openat on a real file, prints what each answered, and (with
# "child" as argument) does the same again in a child process.
PROBE = textwrap.dedent(
    """\
    import ctypes, errno, json, os, struct, subprocess, sys
    libc = ctypes.CDLL(None, use_errno=True)
    how = struct.pack("QQQ", os.O_RDONLY | os.O_CLOEXEC, 0, 0)
    fd = libc.syscall(ctypes.c_long(437), ctypes.c_int(-100),
                      ctypes.c_char_p(os.fsencode(sys.argv[1])),
                      ctypes.c_char_p(how), ctypes.c_size_t(len(how)))
    openat2 = "ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    try:
        os.close(os.open(sys.argv[1], os.O_RDONLY))
        openat = "ok"
    except OSError as exc:
        openat = errno.errorcode.get(exc.errno, "?")
    seen = [{"pid": os.getpid(), "openat2": openat2, "openat": openat}]
    if sys.argv[2:] == ["child"]:
        out = subprocess.run([sys.executable, __file__, sys.argv[1]],
                             capture_output=True, text=True, check=True).stdout
        seen += json.loads(out)
    print(json.dumps(seen))
    """
)


def probe(tmp_path: Path, *, launcher: bool) -> list[dict[str, object]]:
    script = write(tmp_path, "probe.py", PROBE)
    target = write(tmp_path, "target.txt", "x\n")
    head = [sys.executable, str(NO_OPENAT2)] if launcher else []
    done = subprocess.run(
        [*head, sys.executable, str(script), str(target), "child"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert isinstance(seen, list) and len(seen) == 2
    return seen


def test_openat2_answers_enosys_in_the_process_and_its_child(tmp_path: Path) -> None:
    seen = probe(tmp_path, launcher=True)
    assert seen[0]["pid"] != seen[1]["pid"]
    assert [(s["openat2"], s["openat"]) for s in seen] == [("ENOSYS", "ok"), ("ENOSYS", "ok")]


def test_without_the_launcher_openat2_opens_the_file(tmp_path: Path) -> None:
    """The control: the same probe outside the launcher (on a kernel that has openat2)."""
    seen = probe(tmp_path, launcher=False)
    if seen[0]["openat2"] == "ENOSYS":
        pytest.skip("this kernel has no openat2: the launcher changes nothing here")
    assert [(s["openat2"], s["openat"]) for s in seen] == [("ok", "ok"), ("ok", "ok")]


def test_the_launcher_execs_in_place_and_passes_the_exit_status(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(NO_OPENAT2), sys.executable, "-c", "import sys; sys.exit(7)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 7, done.stderr


def test_lantern_reads_lists_and_searches_through_the_walk(cli: Cli, tmp_path: Path) -> None:
    """One pass through `lantern tool` under the launcher; the full suites run in tests/run.sh."""
    secret, outside = canary("ENV"), canary("OUTSIDE")
    ws = tmp_path / "ws"
    write(ws, "src/app.py", "def main():\n    return 42\n")
    write(ws, ".env", f"TOKEN={secret}\n")
    write(tmp_path, "outside.txt", f"{outside}\n")
    (ws / "src" / "link.txt").symlink_to(tmp_path / "outside.txt")
    wrap = [sys.executable, str(NO_OPENAT2)]
    read = cli.tool("read_file", {"path": "src/app.py"}, workspaces=[ws], wrap=wrap)
    assert read.served and "return 42" in read.content
    listing = cli.tool("list_files", {}, workspaces=[ws], wrap=wrap)
    assert listing.served and "src/app.py" in listing.content
    found = cli.tool("search", {"pattern": "CANARY|return"}, workspaces=[ws], wrap=wrap)
    assert found.served and "src/app.py:2:" in found.content
    env = cli.tool("read_file", {"path": ".env"}, workspaces=[ws], wrap=wrap)
    assert env.code == "sensitive_path"
    link = cli.tool("read_file", {"path": "src/link.txt"}, workspaces=[ws], wrap=wrap)
    assert link.code == "symlink"
    for run in (read, listing, found, env, link):
        assert secret not in run.stdout and outside not in run.stdout
