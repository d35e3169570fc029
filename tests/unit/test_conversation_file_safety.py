"""`--conversation-file` is written through a fresh temporary file, never through a link
or a file someone planted beside it (issue 18)."""

from __future__ import annotations

import os
from pathlib import Path

from lantern.agent.conversation import Conversation

VICTIM_TEXT = "must stay exactly like this\n"


def conversation() -> Conversation:
    conv = Conversation(workspace_key="0123456789abcdef")
    conv.messages.append({"role": "user", "content": "Where is greet?"})
    return conv


def test_a_link_planted_at_the_old_temporary_name_is_not_written_through(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT, "utf-8")
    path = tmp_path / "conv.json"
    (tmp_path / "conv.json.tmp").symlink_to(victim)
    conversation().save(path)
    assert victim.read_text("utf-8") == VICTIM_TEXT
    assert Conversation.load(path).messages[0]["content"] == "Where is greet?"
    assert (tmp_path / "conv.json.tmp").is_symlink()  # left alone, not followed
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "conv.json",
        "conv.json.tmp",
        "victim.txt",
    ]


def test_a_link_at_the_file_itself_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT, "utf-8")
    path = tmp_path / "conv.json"
    path.symlink_to(victim)
    conversation().save(path)
    assert victim.read_text("utf-8") == VICTIM_TEXT
    assert not path.is_symlink() and Conversation.load(path).id


def test_the_file_is_private_and_saved_again_in_place(tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    conv = conversation()
    conv.save(path)
    conv.messages.append({"role": "assistant", "content": "In util.py."})
    conv.save(path)
    assert len(Conversation.load(path).messages) == 2
    assert os.stat(path).st_mode & 0o077 == 0  # it holds file contents: the owner's only
    assert [p.name for p in tmp_path.iterdir()] == ["conv.json"]
