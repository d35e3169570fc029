"""`lantern ask --conversation-file`: a link planted at the old temporary name is not
written through (issue 18)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.fakes.openai_server import FakeOpenAI, Turn

if TYPE_CHECKING:
    from tests.cli.conftest import Lantern, Project

EXIT_OK = 0


def test_planted_link_beside_the_conversation_file_stays_untouched(
    fake: FakeOpenAI, lantern: Lantern, project: Project
) -> None:
    victim = project.tmp / "victim.txt"
    victim.write_text("untouched\n", "utf-8")
    conv = project.tmp / "conv.json"
    (project.tmp / "conv.json.tmp").symlink_to(victim)
    fake.add_turns([Turn(content="It greets."), Turn(content="Still greets.")])
    for question in ("What does greet do?", "And again?"):
        run = lantern.ask(question, "--conversation-file", str(conv))
        assert run.rc == EXIT_OK, run.stderr
    assert victim.read_text("utf-8") == "untouched\n"
    assert "What does greet do?" in conv.read_text("utf-8") and not conv.is_symlink()
