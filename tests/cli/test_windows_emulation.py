"""Native Windows, EMULATED on Linux: `lantern` starts, and refuses every tool.

Each command runs the real `lantern` entry point (`lantern.cli.main`) in a
subprocess through tests/as_windows.py, which first takes away what CPython on
Windows lacks (POSIX open flags, `resource`, `fcntl`, `dir_fd`) and then sets
`sys.platform = "win32"`. It shows that every module imports without those
pieces and that the platform gate answers before anything reaches the disk.
It shows nothing about the Windows kernel or NTFS: that is why Lantern refuses
there (docs/platforms.md). Each refusal is paired with the same command on
plain Linux, where the canary is readable, so the refusal is the gate's doing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lantern.platform_gate import MESSAGE, unsupported

from tests.cli.conftest import Lantern
from tests.conftest import write
from tests.fakes.openai_server import FakeOpenAI

AS_WINDOWS = str(Path(__file__).resolve().parents[1] / "as_windows.py")
CANARY = "CANARY-WINDOWS-0c4f7e19"
TIMEOUT = 60  # seconds; each command takes about one


def as_windows(
    *args: str, cwd: Path, env: dict[str, str], windows: bool = True
) -> subprocess.CompletedProcess[str]:
    """`lantern ARGS…` as emulated native Windows (or, with windows=False, plain Linux)."""
    head = [AS_WINDOWS] if windows else ["-m", "lantern.cli"]
    return subprocess.run(
        [sys.executable, *head, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(autouse=True)
def canaries(ws: Path) -> None:
    """What the `lantern tool` tests here find in `ws`: the canary in two files."""
    write(ws, "x", f"{CANARY}\n")
    write(ws, "src/app.py", f"print('{CANARY}')\n")


def test_the_message_names_what_to_use_and_no_command_line_flag() -> None:
    assert unsupported("win32") == MESSAGE
    assert unsupported("cygwin") == MESSAGE  # a POSIX layer over the same NTFS names
    assert unsupported("linux") is None and unsupported("darwin") is None
    assert MESSAGE.startswith("native Windows is not supported yet")
    assert "WSL" in MESSAGE and "SSH" in MESSAGE
    assert "--" not in MESSAGE  # shown in editors, which take no flags


def test_every_lantern_module_imports_without_the_posix_pieces(tmp_path: Path) -> None:
    script = (
        "import importlib, pkgutil, sys\n"
        f"sys.path.insert(0, {str(Path(AS_WINDOWS).parent)!r})\n"
        "import as_windows\n"
        "as_windows.become_windows()\n"
        "import lantern\n"
        "names = [m.name for m in pkgutil.walk_packages(lantern.__path__, 'lantern.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print(len(names), sys.platform)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    count, platform = done.stdout.split()
    assert platform == "win32" and int(count) > 50  # every module of the package, not a few


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "x"}),
        ("list_files", {"path": "."}),
        ("search", {"pattern": "CANARY"}),
        ("outline", {"path": "."}),
        ("find_symbol", {"name": "CANARY"}),
        ("read_file", {"path": "../outside"}),  # refused before its shape is even checked
        ("no_such_tool", {}),
    ],
)
def test_lantern_tool_refuses_every_call_and_exits_non_zero(
    ws: Path, env: dict[str, str], tool: str, arguments: dict[str, str]
) -> None:
    done = as_windows("tool", tool, json.dumps(arguments), "--workspace", str(ws), cwd=ws, env=env)
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is True
    assert result["code"] == "unsupported_platform"
    assert result["content"] == MESSAGE
    assert done.stderr.strip() == f"lantern: {MESSAGE}"
    assert CANARY not in done.stdout + done.stderr
    assert "src" not in result["content"]  # not even a name from the workspace
    audit = (Path(env["XDG_STATE_HOME"]) / "lantern" / "log" / "audit.jsonl").read_text("utf-8")
    assert json.loads(audit)["decision"] == "refused:unsupported_platform"
    assert CANARY not in audit


def test_on_linux_the_same_read_shows_the_canary(ws: Path, env: dict[str, str]) -> None:
    done = as_windows(
        "tool", "read_file", '{"path": "x"}', "--workspace", str(ws), cwd=ws, env=env, windows=False
    )
    assert done.returncode == 0, done.stderr
    assert CANARY in json.loads(done.stdout)["content"]


def test_lantern_ask_refuses_before_calling_the_model(
    lantern: Lantern, fake: FakeOpenAI, env: dict[str, str]
) -> None:
    fake.add_turns([{"content": "it says hello"}])
    command = lantern.command("What is in src/app.py?")
    assert command[1:3] == ["-m", "lantern.cli"]
    done = subprocess.run(
        [command[0], AS_WINDOWS, *command[3:]],
        cwd=lantern.project.tmp,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip() == f"lantern: {MESSAGE}"
    assert fake.requests == []  # nothing was sent anywhere


def test_lantern_doctor_says_so_and_fails(tmp_path: Path, env: dict[str, str]) -> None:
    done = as_windows("doctor", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stdout + done.stderr  # a failed check
    assert f"Platform:     NOT SUPPORTED — {MESSAGE}" in done.stdout.splitlines()
    on_linux = as_windows("doctor", cwd=tmp_path, env=env, windows=False)
    assert "Platform:" not in on_linux.stdout
