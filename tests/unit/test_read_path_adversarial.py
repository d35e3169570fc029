"""The read path under attack: every way out of the workspace or into a secret is refused.

One table of adversarial tool calls, run against a real workspace on disk (real links,
FIFOs, sockets, hard links; nothing below the tools is mocked). For every case the
result must be an error with the exact code, must not contain any canary (each secret
file and the file outside the workspace hold their own) and must not contain an
absolute path. The same cases are then checked through list_files and search, and the
whole table runs a second time with openat2 disabled so the portable component-by-
component walk is covered too.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from lantern.approvals.approver import (
    Decision,
    Remembering,
    WorkspaceGrants,
)
from lantern.tools.base import ToolContext, ToolResult
from lantern.workspace import jail

from tests.conftest import ctx_for, run
from tests.hang import HANG_S
from tests.prompts import Recorder

NOBODY = 65534


def canary() -> str:
    return "CANARY-" + uuid.uuid4().hex


@dataclass
class Layout:
    """tmp_path/outside (not in the workspace) and tmp_path/ws (the workspace)."""

    tmp: Path
    ws: Path
    outside: Path
    canaries: dict[str, str]  # "outside" or a workspace-relative name -> its canary

    @property
    def all_canaries(self) -> list[str]:
        return list(self.canaries.values())


# Files inside the workspace that hold a secret (each its own canary). The table refers
# to them by these names.
SECRET_FILES = (
    ".env",
    ".ENV",
    ".env.",
    ".env ",
    ".env.local",
    ".Git/config",
    ".git/config",
    ".git/HEAD",
    "sub/.git/HEAD",
    "id_rsa",
    "server.pem",
    "tls.KEY",
    ".ssh/config",
    ".aws/credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "secrets/db.txt",  # refused by the user's deny glob `secrets/**`
    "hidden.log",  # .lanternignore
    "build/out.txt",  # .gitignore
)
# What list_files must show, exactly: nothing else in the workspace may be listed.
VISIBLE_FILES = {
    ".env.example",
    ".gitignore",
    ".lanternignore",
    "notes.txt",
    "src/app.py",
    "sub/readme.md",
}


def build_layout(tmp: Path) -> Layout:
    outside = tmp / "outside"
    ws = tmp / "ws"
    (outside / "sub").mkdir(parents=True)
    ws.mkdir(exist_ok=True)
    canaries = {"outside": canary()}
    (outside / "canary.txt").write_text(f"secret outside: {canaries['outside']}\n")
    (outside / "sub" / "more.txt").write_text(f"{canaries['outside']}\n")

    (ws / "notes.txt").write_text("meeting notes\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hello')\n")
    (ws / "sub" / "deep").mkdir(parents=True)
    (ws / "sub" / "readme.md").write_text("# readme\n")
    (ws / ".env.example").write_text("API_URL=https://example.invalid\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / ".lanternignore").write_text("hidden.log\n")
    for name in SECRET_FILES:
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        canaries[name] = canary()
        path.write_text(f"{canaries[name]}\n")

    links = {
        "out_link.txt": "../outside/canary.txt",
        "out_abs.txt": str(outside / "canary.txt"),
        "lib": "../outside",
        "abs_inside.txt": str(ws / "notes.txt"),
        "back.txt": "notes.txt",
        "src/up": "..",
        "dangling.txt": "no_such_file",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
        "chain1.txt": "chain2.txt",
        "chain2.txt": "chain3.txt",
        "chain3.txt": "../outside/canary.txt",
        "sub/deep/link.txt": "../../../outside/canary.txt",
        "config.txt": ".env",
        "settings": ".git",
        "zero": "/dev/zero",
    }
    for name, target in links.items():
        os.symlink(target, ws / name)
    os.link(outside / "canary.txt", ws / "hard.txt")
    os.mkfifo(ws / "fifo")
    os.mkfifo(ws / "fifo_w")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(ws / "sock"))
    finally:
        sock.close()
    return Layout(tmp, ws, outside, canaries)


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    args: dict[str, Any]
    code: str
    # Names (workspace-relative) that list_files must never show for this case.
    hidden: tuple[str, ...] = ()
    # "fifo_writer": a writer holds fifo_w open; "nobody": run without root's rights.
    special: str = ""
    args_from_layout: bool = False  # args hold `{outside}`, filled in from the layout


def _read(id: str, path: str, code: str, *hidden: str, special: str = "") -> Case:
    return Case(id, "read_file", {"path": path}, code, hidden, special)


LONG_PATH = "/".join(["abcd"] * 1000)  # 4,999 characters
CASES: list[Case] = [
    # check 1: shape
    _read("dotdot", "../outside/canary.txt", "outside_workspace"),
    _read("dotdot_mid", "a/../../outside/canary.txt", "outside_workspace"),
    _read("dot_dotdot", "./..", "outside_workspace"),
    _read("dotdot_last", "src/..", "outside_workspace"),
    _read("dotdot_after_dot", "src/./../../outside/canary.txt", "outside_workspace"),
    _read("abs_etc_passwd", "/etc/passwd", "absolute_path"),
    Case(
        "abs_canary",
        "read_file",
        {"path": "{outside}/canary.txt"},
        "absolute_path",
        args_from_layout=True,
    ),
    _read("abs_double_slash", "//etc/passwd", "absolute_path"),
    _read("tilde", "~/.ssh/id_rsa", "absolute_path"),
    _read("win_drive", "C:\\x", "absolute_path"),
    _read("win_drive_relative", "C:x", "absolute_path"),
    _read("win_drive_slash", "c:/x", "absolute_path"),
    _read("unc", "\\\\server\\share\\x", "absolute_path"),
    _read("win_device", "\\\\?\\C:\\x", "absolute_path"),
    _read("backslash", "src\\app.py", "invalid_arguments"),
    _read("backslash_dotdot", "..\\outside\\canary.txt", "invalid_arguments"),
    _read("nul", "a\x00b", "invalid_arguments"),
    _read("newline", "a\nb", "invalid_arguments"),
    _read("ansi_escape", "\x1b[31m", "invalid_arguments"),
    _read("del_char", "notes\x7f.txt", "invalid_arguments"),
    _read("line_separator", "notes\u2028.txt", "invalid_arguments"),
    _read("percent_dots", "%2e%2e/outside/canary.txt", "outside_workspace"),
    _read("percent_dot_mixed", ".%2E/outside/canary.txt", "outside_workspace"),
    _read("fullwidth_dots", "．．/outside/canary.txt", "outside_workspace"),
    _read("overlong_path", LONG_PATH + "x", "invalid_arguments"),
    _read("overlong_name", "n" * 300, "invalid_arguments"),
    _read("trailing_slash_file", "notes.txt/", "invalid_arguments"),
    _read("trailing_slash_dot_file", "notes.txt/.", "invalid_arguments"),
    _read("lone_surrogate", "notes\ud800.txt", "invalid_arguments"),
    _read("empty_path", "", "invalid_arguments"),
    _read("dot_path", ".", "invalid_arguments"),
    _read("directory_as_file", "src", "is_directory"),
    _read("missing", "src/missing.py", "not_found"),
    # checks 3-5: links, special files
    _read("link_out_file", "out_link.txt", "symlink", "out_link.txt"),
    _read("link_out_abs", "out_abs.txt", "symlink", "out_abs.txt"),
    _read("link_out_folder", "lib/canary.txt", "symlink", "lib"),
    _read("link_out_folder_deep", "lib/sub/more.txt", "symlink", "lib"),
    _read("link_folder_itself", "lib", "symlink", "lib"),
    _read("link_abs_inside", "abs_inside.txt", "symlink", "abs_inside.txt"),
    _read("link_back_into_root", "back.txt", "symlink", "back.txt"),
    _read("link_folder_back_to_root", "src/up/notes.txt", "symlink", "src/up"),
    _read("link_dangling", "dangling.txt", "symlink", "dangling.txt"),
    _read("link_loop", "loop_a", "symlink", "loop_a", "loop_b"),
    _read("link_chain", "chain1.txt", "symlink", "chain1.txt", "chain2.txt", "chain3.txt"),
    _read("link_in_subfolder", "sub/deep/link.txt", "symlink", "sub/deep/link.txt"),
    _read("link_to_env", "config.txt", "symlink", "config.txt"),
    _read("link_to_git_folder", "settings/config", "symlink", "settings"),
    _read("link_dev_zero", "zero", "symlink", "zero"),
    _read("hardlink_outside", "hard.txt", "not_regular_file", "hard.txt"),
    _read("fifo_no_writer", "fifo", "not_regular_file", "fifo"),
    _read("fifo_with_writer", "fifo_w", "not_regular_file", "fifo_w", special="fifo_writer"),
    _read("unix_socket", "sock", "not_regular_file", "sock"),
    # check 2: policy
    _read("env", ".env", "sensitive_path", ".env"),
    _read("env_upper", ".ENV", "sensitive_path", ".ENV"),
    _read("env_trailing_dot", ".env.", "sensitive_path", ".env."),
    _read("env_trailing_space", ".env ", "sensitive_path", ".env "),
    _read("env_local", ".env.local", "sensitive_path", ".env.local"),
    _read("git_mixed_case", ".Git/config", "sensitive_path", ".Git/config"),
    _read("git_config", ".git/config", "sensitive_path", ".git/config"),
    _read("git_folder", ".git", "sensitive_path", ".git/HEAD"),
    _read("git_in_subfolder", "sub/.git/HEAD", "sensitive_path", "sub/.git/HEAD"),
    _read("id_rsa", "id_rsa", "sensitive_path", "id_rsa"),
    _read("pem", "server.pem", "sensitive_path", "server.pem"),
    _read("key_upper", "tls.KEY", "sensitive_path", "tls.KEY"),
    _read("ssh", ".ssh/config", "sensitive_path", ".ssh/config"),
    _read("aws", ".aws/credentials", "sensitive_path", ".aws/credentials"),
    _read("npmrc", ".npmrc", "sensitive_path", ".npmrc"),
    _read("pypirc", ".pypirc", "sensitive_path", ".pypirc"),
    _read("netrc", ".netrc", "sensitive_path", ".netrc"),
    _read("deny_glob", "secrets/db.txt", "sensitive_path", "secrets/db.txt"),
    _read("lanternignore", "hidden.log", "ignored_path", "hidden.log"),
    _read("gitignore", "build/out.txt", "ignored_path", "build/out.txt"),
    _read(
        "no_read_permission",
        "locked/secret.txt",
        "permission_denied",
        "locked/secret.txt",
        special="nobody",
    ),
    # the folder tools take paths too
    Case("list_dotdot", "list_files", {"path": "../outside"}, "outside_workspace"),
    Case("list_absolute", "list_files", {"path": "/tmp"}, "absolute_path"),
    Case("list_link_folder", "list_files", {"path": "lib"}, "symlink", ("lib",)),
    Case("list_git", "list_files", {"path": ".git"}, "sensitive_path", (".git/HEAD",)),
    Case("list_ssh_mixed_case", "list_files", {"path": ".SSH"}, "sensitive_path"),
    Case("list_deny_glob", "list_files", {"path": "secrets"}, "sensitive_path"),
    Case("list_gitignored", "list_files", {"path": "build"}, "ignored_path"),
    Case("search_dotdot", "search", {"pattern": "CANARY", "path": ".."}, "outside_workspace"),
    Case("search_link_folder", "search", {"pattern": "CANARY", "path": "lib"}, "symlink"),
    Case("search_link_file", "search", {"pattern": "CANARY", "path": "out_link.txt"}, "symlink"),
    Case("search_env", "search", {"pattern": "CANARY", "path": ".env"}, "sensitive_path"),
    Case(
        "search_hardlink", "search", {"pattern": "CANARY", "path": "hard.txt"}, "not_regular_file"
    ),
    Case("search_fifo", "search", {"pattern": "CANARY", "path": "fifo"}, "not_regular_file"),
    Case(
        "search_lanternignored",
        "search",
        {"pattern": "CANARY", "path": "hidden.log"},
        "ignored_path",
    ),
]
assert len({c.id for c in CASES}) == len(CASES)


# --- running a case -------------------------------------------------------------------------


@pytest.fixture(params=["openat2", "walk"])
def jail_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run with openat2 (where the kernel has it) and with the portable fallback walk."""
    if request.param == "walk":
        monkeypatch.setattr(jail._openat2, "available", False)
    elif not jail._openat2.available:
        pytest.skip("openat2 is not available on this system; the walk run covers the jail")
    return str(request.param)


# The table's tests only read through the tools, so one tree per module serves all their
# cases (building it costs about 0.05 s, and they are run some 350 times).
_READ_ONLY_TESTS = {"test_refused", "test_folder_tools_never_show_it"}


@pytest.fixture(scope="module")
def shared_layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    return build_layout(tmp_path_factory.mktemp("layout"))


@pytest.fixture
def layout(request: pytest.FixtureRequest) -> Layout:
    if request.function.__name__ in _READ_ONLY_TESTS:
        shared: Layout = request.getfixturevalue("shared_layout")
        return replace(shared, canaries=dict(shared.canaries))  # a case may add its canary
    return build_layout(request.getfixturevalue("tmp_path"))


@pytest.fixture
def actx(layout: Layout) -> ToolContext:
    return ctx_for(layout.ws, deny=["secrets/**"])


@pytest.fixture
def fifo_writer(layout: Layout) -> Iterator[None]:
    """A thread that holds the write end of ws/fifo_w open, with a canary in the pipe."""
    ready = threading.Event()
    done = threading.Event()

    def hold() -> None:
        fd = os.open(layout.ws / "fifo_w", os.O_RDWR)  # a writer that never blocks on open
        try:
            os.write(fd, f"{layout.canaries['outside']}\n".encode())
            ready.set()
            done.wait(30)
        finally:
            os.close(fd)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert ready.wait(HANG_S), "the FIFO writer did not start"
    try:
        yield
    finally:
        done.set()
        thread.join(5)


def assert_clean(result: ToolResult, layout: Layout, case_id: str) -> None:
    """No canary and no absolute path in what the model is sent."""
    for secret in layout.all_canaries:
        assert secret not in result.content, f"{case_id}: a canary leaked: {result.content!r}"
    for absolute in {str(layout.tmp), os.path.realpath(layout.tmp), "/tmp", str(layout.ws)}:
        assert absolute not in result.content, f"{case_id}: absolute path in {result.content!r}"
    assert not re.search(r"(^|[\s'\"(])/(tmp|root|home|etc|dev|proc)\b", result.content), (
        f"{case_id}: absolute path in {result.content!r}"
    )


def case_args(case: Case, layout: Layout) -> dict[str, Any]:
    if not case.args_from_layout:
        return case.args
    return {k: v.format(outside=layout.outside) for k, v in case.args.items()}


@dataclass
class Unprivileged:
    """A workspace with a folder only root may enter, and a way to run tools as nobody."""

    base: Path
    ws: Path
    canary: str
    walk: bool

    def run(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """`lantern tool` with the rights of user nobody (or of this user when not root)."""
        if tool != "read_file" and os.geteuid() == 0 and not _rg_for_others():
            pytest.skip(
                "user nobody cannot run ripgrep here: the bundled rg sits under a folder "
                "closed to other users (e.g. a clone under /root) and no other rg is on PATH"
            )
        argv = ["tool", tool, json.dumps(args), "--workspace", str(self.ws)]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.base / "home"),
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        if self.walk:
            env["LANTERN_NO_OPENAT2"] = "1"
        # The interpreter lives under /root (mode 700 here), which user nobody cannot
        # enter, so the child starts as root, imports everything, and only then drops to
        # nobody (groups, gid, uid) before it runs the CLI. Every open of the tool call
        # happens with nobody's rights.
        script = (
            "import os, sys, json, asyncio, asyncio.subprocess, ctypes, unicodedata\n"
            "import urllib.parse, encodings.idna, concurrent.futures.thread, lantern.cli\n"
            "import lantern.tools.registry, lantern.audit, lantern.approvals.approver, sysconfig\n"
            "import lantern.cli.tool  # `lantern tool` loads its modules when it runs\n"
            "for name in lantern.tools.registry.NAMES:  # and each tool's module on first use\n"
            "    lantern.tools.registry.TOOLS[name]\n"
            "sysconfig.get_paths()  # loads its data module while /root can still be read\n"
            "if os.geteuid() == 0:\n"
            f"    os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})\n"
            "assert os.geteuid() != 0\n"
            "sys.exit(lantern.cli.main(json.loads(sys.argv[1])))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, json.dumps(argv)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        return ToolResult(out["content"], is_error=out["is_error"], code=out["code"])


def _rg_for_others() -> bool:
    """Whether a user with no owner or group rights could run an rg the tools would find."""
    from lantern.tools.ripgrep import process as ripgrep

    def others_may_run(path: str) -> bool:
        target = Path(path).resolve()
        return all(stat.S_IMODE(p.stat().st_mode) & stat.S_IXOTH for p in (target, *target.parents))

    on_path = shutil.which("rg", path=os.environ.get("PATH", "/usr/bin:/bin"))
    return any(others_may_run(p) for p in (ripgrep.rg_binary(), on_path) if p)


@pytest.fixture
def unprivileged(jail_mode: str) -> Iterator[Unprivileged]:
    base = Path(tempfile.mkdtemp(prefix="lantern-perm-"))
    try:
        base.chmod(0o755)
        ws = base / "ws"
        (ws / "locked").mkdir(parents=True)
        ws.chmod(0o755)
        (ws / "readme.txt").write_text("anyone may read this\n")
        (ws / "readme.txt").chmod(0o644)
        secret = canary()
        (ws / "locked" / "secret.txt").write_text(f"{secret}\n")
        (ws / "locked" / "secret.txt").chmod(0o644)
        (ws / "locked").chmod(0o000)
        home = base / "home"
        home.mkdir()
        if os.geteuid() == 0:
            os.chown(home, NOBODY, NOBODY)
        yield Unprivileged(base, ws, secret, jail_mode == "walk")
    finally:
        (base / "ws" / "locked").chmod(0o700)
        subprocess.run(["rm", "-rf", str(base)], check=False)


async def run_case(
    case: Case, layout: Layout, ctx: ToolContext, request: pytest.FixtureRequest
) -> ToolResult:
    if case.special == "nobody":
        unprivileged: Unprivileged = request.getfixturevalue("unprivileged")
        layout.canaries["locked/secret.txt"] = unprivileged.canary
        return unprivileged.run(case.tool, case.args)
    if case.special == "fifo_writer":
        request.getfixturevalue("fifo_writer")
    return await run(ctx, case.tool, case_args(case, layout))


# --- the table --------------------------------------------------------------------------


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 45
    codes = {c.code for c in CASES}
    assert {
        "outside_workspace",
        "absolute_path",
        "invalid_arguments",
        "symlink",
        "not_regular_file",
        "sensitive_path",
        "ignored_path",
        "permission_denied",
        "is_directory",
    } <= codes


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_refused(
    case: Case,
    jail_mode: str,
    layout: Layout,
    actx: ToolContext,
    request: pytest.FixtureRequest,
) -> None:
    # A FIFO or a device must be refused, not opened and waited on: a wait is a hang.
    result = await asyncio.wait_for(run_case(case, layout, actx, request), HANG_S)
    assert result.is_error, f"{case.id}: not refused: {result.content!r}"
    assert result.code == case.code, f"{case.id}: {result.code}: {result.content!r}"
    assert result.content.strip(), "a refusal says why"
    assert_clean(result, layout, case.id)


def listed(result: ToolResult) -> set[str]:
    """The paths in a list_files result (rows are `path (size)`)."""
    rows = result.content.splitlines()[1:]
    return {m.group(1) for row in rows if (m := re.match(r"^(.*) \(\d[\d.]* [KMG]?B\)$", row))}


def pattern_for(text: str) -> str:
    """A regex matching `text` whose own spelling does not contain it."""
    return f"{re.escape(text[:-1])}[{text[-1]}]"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_folder_tools_never_show_it(
    case: Case,
    jail_mode: str,
    layout: Layout,
    actx: ToolContext,
    request: pytest.FixtureRequest,
) -> None:
    """Whatever the case reaches for is not listed, and no canary is found by search."""
    if case.special == "nobody":
        unprivileged: Unprivileged = request.getfixturevalue("unprivileged")
        layout.canaries["locked/secret.txt"] = unprivileged.canary

        async def tool(name: str, args: dict[str, Any]) -> ToolResult:
            return unprivileged.run(name, args)

        visible = {"readme.txt"}
    else:
        if case.special == "fifo_writer":
            request.getfixturevalue("fifo_writer")

        async def tool(name: str, args: dict[str, Any]) -> ToolResult:
            return await run(actx, name, args)

        visible = VISIBLE_FILES

    listing = await tool("list_files", {"path": "."})
    if case.special != "nobody":  # see test_an_unreadable_folder_does_not_break_the_folder_tools
        assert not listing.is_error, listing.content
        assert listed(listing) == visible
    for name in case.hidden:
        assert not any(p == name or p.startswith(name + "/") for p in listed(listing))
    assert_clean(listing, layout, case.id)

    if case.special == "nobody":
        wanted = [unprivileged.canary]
    else:
        wanted = [layout.canaries["outside"]]
        wanted += [layout.canaries[n] for n in case.hidden if n in layout.canaries]
    for secret in wanted:
        found = await asyncio.wait_for(
            tool("search", {"pattern": pattern_for(secret), "path": "."}), HANG_S
        )
        assert_clean(found, layout, case.id)
        if case.special != "nobody":
            assert not found.is_error, found.content
            assert found.content.startswith("[no matches"), f"{case.id}: {found.content!r}"
    everything = await tool("search", {"pattern": "CANAR[Y]", "max_results": 500})
    assert_clean(everything, layout, case.id)
    if case.special != "nobody":
        assert everything.content.startswith("[no matches"), everything.content


async def test_search_and_list_show_the_plain_files(
    jail_mode: str, layout: Layout, actx: ToolContext
) -> None:
    """The jail is not simply refusing everything: ordinary files are read and found."""
    read = await run(actx, "read_file", {"path": "notes.txt"})
    assert not read.is_error and "1│meeting notes" in read.content
    example = await run(actx, "read_file", {"path": ".env.example"})
    assert not example.is_error and "API_URL" in example.content
    found = await run(actx, "search", {"pattern": "hello"})
    assert "src/app.py:1: print('hello')" in found.content


async def test_unprivileged_run_can_read_the_readable_file(unprivileged: Unprivileged) -> None:
    """The permission case fails because of the folder's mode, not because nothing works."""
    result = unprivileged.run("read_file", {"path": "readme.txt"})
    assert not result.is_error, result.content
    assert "1│anyone may read this" in result.content
    if os.geteuid() == 0:
        assert stat.S_IMODE((unprivileged.ws / "locked").stat().st_mode) == 0


async def test_an_unreadable_folder_does_not_break_the_folder_tools(
    unprivileged: Unprivileged,
) -> None:
    listing = unprivileged.run("list_files", {"path": "."})
    assert not listing.is_error, listing.content
    assert "readme.txt" in listing.content and "locked" not in listing.content
    found = unprivileged.run("search", {"pattern": "anyone"})
    assert not found.is_error, found.content
    assert "readme.txt:1: anyone may read this" in found.content


async def test_workspace_root_swapped_for_a_link_after_start(
    jail_mode: str, layout: Layout, actx: ToolContext
) -> None:
    """The root folder itself replaced by a link to the outside: nothing there is served."""
    layout.ws.rename(layout.tmp / "ws_moved")
    os.symlink(layout.outside, layout.ws)
    calls = [
        ("read_file", {"path": "sub/more.txt"}),  # canary.txt has a hard link: refused anyway
        ("list_files", {"path": "."}),
        ("search", {"pattern": "CANAR[Y]"}),
        ("search", {"pattern": "CANAR[Y]", "path": "sub/more.txt"}),
        ("list_files", {"path": "sub"}),
    ]
    for name, args in calls:
        result = await run(actx, name, args)
        assert result.is_error and result.code == "outside_workspace", (name, result.content)
        assert "more.txt" not in result.content
        assert_clean(result, layout, f"root-swap {name}")


# --- a file swapped after approval -----------------------------------------------------------


async def test_file_swapped_after_approval(jail_mode: str, layout: Layout) -> None:
    recorder = Recorder(Decision.ALLOW_CONVERSATION, Decision.DENY)
    gate = Remembering(recorder, grants=WorkspaceGrants(layout.tmp / "grants.json"))
    ctx = ctx_for(layout.ws, gate)
    notes = layout.ws / "notes.txt"
    # Keep the approved file's inode alive so the file system cannot hand the same
    # number to the replacement (that would be a different test: inode reuse).
    keep = os.open(notes, os.O_RDONLY)
    try:
        first = await run(ctx, "read_file", {"path": "notes.txt"})
        assert not first.is_error and "1│meeting notes" in first.content
        assert recorder.paths == ["notes.txt"]

        again = await run(ctx, "read_file", {"path": "notes.txt"})
        assert not again.is_error and len(recorder.requests) == 1, "remembered for the conversation"

        swap = layout.ws / ".swap"
        os.symlink(layout.outside / "canary.txt", swap)
        os.replace(swap, notes)
        linked = await run(ctx, "read_file", {"path": "notes.txt"})
        assert linked.is_error and linked.code == "symlink", linked.content
        assert_clean(linked, layout, "swap-symlink")
        assert len(recorder.requests) == 1

        replacement = canary()
        layout.canaries["replacement"] = replacement
        swap.write_text(f"{replacement}\n")
        os.replace(swap, notes)
        swapped = await run(ctx, "read_file", {"path": "notes.txt"})
        assert len(recorder.requests) == 2, "a different file at the same path is asked about again"
        assert recorder.requests[1].path == "notes.txt"
        assert recorder.requests[1].identity != recorder.requests[0].identity
        assert swapped.is_error and swapped.code == "denied_by_user", swapped.content
        assert_clean(swapped, layout, "swap-file")
    finally:
        os.close(keep)
