"""What a remembered grant is bound to, with real files: a new file, a changed file, a
swapped folder or a same-named root is a new question; another conversation's prompt
never waits for this one's (issue 18)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from lantern.approvals.approver import ApprovalRequest, Decision, Remembering, WorkspaceGrants
from lantern.tools.base import ToolResult
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace

from tests.conftest import ctx_for, write
from tests.hang import HANG_S
from tests.prompts import Recorder

CANARY = "canary-7f3b1c-never-shown"


def gate(prompt: object, tmp: Path) -> Remembering:
    return Remembering(prompt, grants=WorkspaceGrants(tmp / "data" / "approvals.json"))  # type: ignore[arg-type]


async def tool(name: str, args: dict[str, object], ws: Workspace, gate: Remembering) -> ToolResult:
    return await run_tool(name, args, ctx_for(ws, gate))


@pytest.fixture
def root(ws: Path) -> Path:
    """`ws` with a note and a module two folders down."""
    write(ws, "notes.txt", "old notes\n")
    write(ws, "src/sub/a.py", "a = 1\n")
    return ws


# File systems that give a new file the inode number just freed, at once.
HANDS_INODES_BACK = {"ext2", "ext3", "ext4"}


def file_system_of(path: Path) -> str:
    """The type of the file system that holds `path`, as /proc/self/mountinfo names it
    (matched by device number); "unknown" where there is no such file or no match."""
    dev = path.stat().st_dev
    wanted = f"{os.major(dev)}:{os.minor(dev)}"
    try:
        mounts = Path("/proc/self/mountinfo").read_text("utf-8").splitlines()
    except OSError:
        return "unknown"
    for line in mounts:
        fields = line.split()
        if fields[2] == wanted:
            return fields[fields.index("-") + 1]
    return "unknown"


def recreate_reusing_inode(path: Path, text: str) -> bool:
    """Delete `path` and create it again with `text`; True when the new file got the old
    inode number back (the file systems in HANDS_INODES_BACK do)."""
    old = path.stat().st_ino
    for _ in range(50):
        path.unlink()
        path.write_text(text, "utf-8")
        if path.stat().st_ino == old:
            return True
    return False


# --- files ----------------------------------------------------------------------------------


async def test_deleted_and_recreated_file_is_asked_again(root: Path, tmp_path: Path) -> None:
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    assert "old notes" in (await tool("read_file", {"path": "notes.txt"}, ws, remembering)).content
    await tool("read_file", {"path": "notes.txt"}, ws, remembering)
    assert prompt.asked == 1  # the same file: remembered

    # Same name, same size, and (where the file system hands it back) the same inode.
    reused = recreate_reusing_inode(root / "notes.txt", f"{CANARY[:9]}\n")
    prompt.answer = Decision.DENY
    result = await tool("read_file", {"path": "notes.txt"}, ws, remembering)
    assert prompt.asked == 2, f"not asked about a new file (inode reused: {reused})"
    assert result.code == "denied_by_user" and CANARY[:9] not in result.content


def test_on_ext_file_systems_a_new_file_gets_the_old_inode_number(tmp_path: Path) -> None:
    """Why the test above matters: where CI runs (ext4) the recreated file has the old
    file's device, inode number and size, so (device, inode) alone would call it the same
    file. Should that stop being so, the test above no longer tests that case: this fails.
    On other file systems (tmpfs hands out fresh numbers) it is skipped, naming which."""
    kind = file_system_of(tmp_path)
    if kind not in HANDS_INODES_BACK:
        pytest.skip(f"the temporary folder is on {kind}, which need not reuse inode numbers")
    path = tmp_path / "f.txt"
    path.write_text("x", "utf-8")
    assert recreate_reusing_inode(path, "y"), f"{kind} did not hand the inode number back"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/mountinfo is Linux's")
def test_the_file_system_is_read_from_the_mount_table() -> None:
    """The skip above is decided by `file_system_of`: it must name what the kernel says,
    never fall back to "unknown" (which would skip the premise everywhere)."""
    assert file_system_of(Path("/proc")) == "proc"


async def test_file_changed_in_place_is_asked_again(root: Path, tmp_path: Path) -> None:
    """Decided: `Allow in Chat` covers the contents it was given for. An edit (same inode,
    same size) changes the change time, so the next read asks again."""
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    await tool("read_file", {"path": "notes.txt"}, ws, remembering)
    before = (root / "notes.txt").stat()
    with open(root / "notes.txt", "r+", encoding="utf-8") as f:  # same inode, same size
        f.write("new notes\n")
    after = (root / "notes.txt").stat()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    assert after.st_ctime_ns != before.st_ctime_ns
    prompt.answer = Decision.DENY
    result = await tool("read_file", {"path": "notes.txt"}, ws, remembering)
    assert prompt.asked == 2 and result.code == "denied_by_user"
    assert "new notes" not in result.content


async def test_unchanged_file_stays_granted_across_reads(root: Path, tmp_path: Path) -> None:
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    await tool("read_file", {"path": "notes.txt"}, ws, remembering)
    for _ in range(3):
        assert not (await tool("read_file", {"path": "notes.txt"}, ws, remembering)).is_error
    assert prompt.asked == 1


# --- folders --------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["recreated", "replaced"])
async def test_swapped_folder_is_asked_again(root: Path, tmp_path: Path, how: str) -> None:
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    await tool("list_files", {"path": "src"}, ws, remembering)
    await tool("list_files", {"path": "src/sub"}, ws, remembering)
    assert prompt.asked == 1  # below the granted folder: covered

    if how == "recreated":
        shutil.rmtree(root / "src")
        (root / "src" / "sub").mkdir(parents=True)
    else:
        other = tmp_path / "other"
        (other / "sub").mkdir(parents=True)
        shutil.rmtree(root / "src")
        os.rename(other, root / "src")
    (root / "src" / "sub" / f"{CANARY}.py").write_text("b = 2\n", "utf-8")
    prompt.answer = Decision.DENY
    for path in ("src", "src/sub"):
        result = await tool("list_files", {"path": path}, ws, remembering)
        assert result.code == "denied_by_user", path
        assert CANARY not in result.content
    assert prompt.asked == 3


async def test_swapped_workspace_root_is_asked_again(root: Path, tmp_path: Path) -> None:
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    await tool("search", {"pattern": "a"}, ws, remembering)
    assert prompt.asked == 1
    shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    (root / "src" / "s.py").write_text(f"a = '{CANARY}'\n", "utf-8")
    prompt.answer = Decision.DENY
    for args in ({"pattern": "a"}, {"pattern": "a", "path": "src"}):
        result = await tool("search", args, ws, remembering)
        assert result.code == "denied_by_user" and CANARY not in result.content
    assert prompt.asked == 3


async def test_same_named_root_after_a_folder_change_is_asked_again(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a" / "app", tmp_path / "b" / "app", tmp_path / "c" / "lib"
    for folder in (first, second, other):
        folder.mkdir(parents=True)
        (folder / "x.py").write_text("x = 1\n", "utf-8")
    (second / f"{CANARY}.py").write_text("y = 2\n", "utf-8")
    prompt = Recorder(Decision.ALLOW_CONVERSATION)
    remembering = gate(prompt, tmp_path)
    before = Workspace([first, other])
    await tool("list_files", {"path": "app"}, before, remembering)
    await tool("list_files", {"path": "app"}, before, remembering)
    assert prompt.asked == 1

    after = Workspace([second, other])  # the editor swapped one folder for another `app`
    assert after.name == before.name
    prompt.answer = Decision.DENY
    result = await tool("list_files", {"path": "app"}, after, remembering)
    assert prompt.asked == 2 and result.code == "denied_by_user"
    assert CANARY not in result.content


# --- Always Allow ---------------------------------------------------------------------------


async def test_always_allow_survives_a_restart_not_a_recreated_root(
    root: Path, tmp_path: Path
) -> None:
    prompt = Recorder(Decision.ALLOW_WORKSPACE)
    await tool("read_file", {"path": "notes.txt"}, Workspace([root]), gate(prompt, tmp_path))
    restarted = Recorder(Decision.DENY)  # a new process: fresh memory, the same grants file
    later = await tool("list_files", {}, Workspace([root]), gate(restarted, tmp_path))
    assert not later.is_error and restarted.asked == 0

    shutil.rmtree(root)  # a different project cloned into the same path
    root.mkdir()
    (root / "notes.txt").write_text(CANARY, "utf-8")
    result = await tool(
        "read_file", {"path": "notes.txt"}, Workspace([root]), gate(restarted, tmp_path)
    )
    assert restarted.asked == 1 and result.code == "denied_by_user"
    assert CANARY not in result.content


async def test_always_allow_stored_without_roots_is_asked_again(root: Path, tmp_path: Path) -> None:
    """An entry written before roots were stored grants nothing: asked once more."""
    grants = WorkspaceGrants(tmp_path / "data" / "approvals.json")
    ws = Workspace([root])
    grants.path.parent.mkdir(parents=True)
    legacy = {"workspaces": {ws.key: {"name": "ws", "always": True, "since": 1}}}
    grants.path.write_text(json.dumps(legacy), "utf-8")
    prompt = Recorder(Decision.DENY)
    result = await tool("read_file", {"path": "notes.txt"}, ws, gate(prompt, tmp_path))
    assert prompt.asked == 1 and result.code == "denied_by_user"


# --- one prompt at a time, per conversation -------------------------------------------------


class Held:
    """A prompt that keeps conversation `held`'s question open until released."""

    def __init__(self, held: str) -> None:
        self.held = held
        self.release = asyncio.Event()
        self.opened = asyncio.Event()
        self.asked: list[str] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request.conversation_id)
        if request.conversation_id == self.held:
            self.opened.set()
            await self.release.wait()
        return Decision.ALLOW_ONCE


async def test_a_pending_prompt_does_not_block_another_conversation(
    root: Path, tmp_path: Path
) -> None:
    prompt = Held("slow")
    remembering = gate(prompt, tmp_path)
    ws = Workspace([root])
    slow = asyncio.ensure_future(
        run_tool("read_file", {"path": "notes.txt"}, ctx_for(ws, remembering, conversation="slow"))
    )
    await asyncio.wait_for(prompt.opened.wait(), HANG_S)
    other = run_tool(
        "read_file", {"path": "notes.txt"}, ctx_for(ws, remembering, conversation="fast")
    )
    result = await asyncio.wait_for(other, HANG_S)  # answered while `slow` still waits
    assert not result.is_error and not slow.done()
    prompt.release.set()
    assert not (await asyncio.wait_for(slow, HANG_S)).is_error
    assert prompt.asked == ["slow", "fast"]
