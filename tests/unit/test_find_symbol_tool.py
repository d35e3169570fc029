"""find_symbol and find_references through the real registry, real files and the real rg:
the right file for `Class.method`, exact matches first, uses in code only, definitions
marked, names checked, results capped."""

from __future__ import annotations

from pathlib import Path

import pytest
from lantern.approvals.approver import Decision, Fixed
from lantern.code.cache import ParseCache
from lantern.tools.find_symbol import MAX_DEFINITIONS
from lantern.tools.registry import run_tool
from lantern.workspace.roots import Workspace

from tests.conftest import call, ctx_for, rows, write

MODELS_PY = """\
class Session:
    def close(self) -> None:
        pass


class Pool:
    def close(self) -> None:
        pass


def close(thing) -> None:
    thing.close()
"""
USES_PY = """\
from models import Session


def shutdown(session: Session) -> None:
    # close the session before exit
    session.close()
    print("close")
    log = f"{session.close}"
"""


@pytest.fixture
def app(ws: Path) -> Path:
    """`ws` with a small Python and JavaScript app and a README that names its methods."""
    write(ws, "app/models.py", MODELS_PY)
    write(ws, "app/uses.py", USES_PY)
    write(ws, "app/web/views.js", "class Session {\n  close() {}\n}\n")
    write(ws, "README.md", "Session.close closes the session.\n")
    return ws


async def test_class_member_finds_that_method_only(app: Path) -> None:
    result = await call(ctx_for(app), "find_symbol", name="Session.close")
    assert rows(result) == [
        "app/models.py:2-3 method Session.close  def close(self) -> None:",
        "app/web/views.js:2-2 method Session.close  close()",
    ]
    assert result.content.startswith("[untrusted definitions of 'Session.close' under .]")
    assert [(s.path, s.start) for s in result.seen] == [
        ("app/models.py", 2),
        ("app/web/views.js", 2),
    ]


async def test_a_bare_name_ranks_the_exact_match_first(app: Path) -> None:
    assert rows(await call(ctx_for(app), "find_symbol", name="close")) == [
        "app/models.py:11-12 function close  def close(thing) -> None:",
        "app/models.py:2-3 method Session.close  def close(self) -> None:",
        "app/models.py:7-8 method Pool.close  def close(self) -> None:",
        "app/web/views.js:2-2 method Session.close  close()",
    ]


async def test_shallower_paths_first_and_path_narrows(app: Path) -> None:
    write(app, "a/b/c/deep.py", "def target(): pass\n")
    write(app, "z.py", "def target(): pass\n")
    found = rows(await call(ctx_for(app), "find_symbol", name="target"))
    assert [line.split(":", 1)[0] for line in found] == ["z.py", "a/b/c/deep.py"]
    assert rows(await call(ctx_for(app), "find_symbol", name="target", path="a")) == [found[1]]
    assert rows(await call(ctx_for(app), "find_symbol", name="target", path="z.py")) == [found[0]]


async def test_no_definition_is_said_plainly(app: Path) -> None:
    result = await call(ctx_for(app), "find_symbol", name="Nowhere.close")
    assert result.content == "[no definition of 'Nowhere.close' under .]"
    assert not result.is_error and result.seen == []


@pytest.mark.parametrize(
    "name", ["close()", "a..b", ".close", "close.", "a b", "1abc", "x-y", "", "a" * 201]
)
@pytest.mark.parametrize("tool", ["find_symbol", "find_references"])
async def test_a_name_must_be_an_identifier_or_dotted(app: Path, tool: str, name: str) -> None:
    result = await call(ctx_for(app), tool, name=name)
    assert result.is_error and result.code == "invalid_arguments", result.content
    assert result.content.startswith("name:")


async def test_definitions_are_capped(ws: Path) -> None:
    for i in range(MAX_DEFINITIONS + 5):
        write(ws, f"m{i:03d}.py", "def run(): pass\n")
    result = await call(ctx_for(ws), "find_symbol", name="run")
    assert len(rows(result)) == MAX_DEFINITIONS
    assert "[5 more definition(s) not shown; narrow with path= or Class.member]" in result.content


# --- find_references -----------------------------------------------------------------------


async def test_references_skip_comments_and_strings_and_mark_definitions(app: Path) -> None:
    result = await call(ctx_for(app), "find_references", name="close", path="app")
    assert rows(result) == [
        "app/models.py:2:     def close(self) -> None: [definition]",
        "app/models.py:7:     def close(self) -> None: [definition]",
        "app/models.py:11: def close(thing) -> None: [definition]",
        "app/models.py:12:     thing.close()",
        "app/uses.py:6:     session.close()",
        'app/uses.py:8:     log = f"{session.close}"',
        "app/web/views.js:2:   close() {} [definition]",
    ]
    assert [(s.path, s.start, s.end) for s in result.seen][:2] == [
        ("app/models.py", 2, 2),
        ("app/models.py", 7, 7),
    ]
    assert "README.md" not in result.content  # prose is not code


async def test_references_of_a_class(app: Path) -> None:
    assert rows(await call(ctx_for(app), "find_references", name="Session", path="app")) == [
        "app/models.py:1: class Session: [definition]",
        "app/uses.py:1: from models import Session",
        "app/uses.py:4: def shutdown(session: Session) -> None:",
        "app/web/views.js:1: class Session { [definition]",
    ]


async def test_the_conversation_cache_is_used_and_a_changed_file_parsed_again(app: Path) -> None:
    cache = ParseCache()
    ctx = ctx_for(app, cache=cache)
    await run_tool("find_symbol", {"name": "Session"}, ctx)
    parsed = cache.misses
    assert parsed >= 2
    await run_tool("find_references", {"name": "Session"}, ctx)
    await run_tool("find_symbol", {"name": "Session"}, ctx)
    assert cache.hits >= 2
    write(app, "app/models.py", MODELS_PY.replace("class Session:", "class Session(Base):"))
    result = await run_tool("find_symbol", {"name": "Session"}, ctx)
    assert "class Session  class Session(Base):" in result.content


def test_only_the_most_recent_conversations_keep_a_parse_cache() -> None:
    """Memory stays within a few caches' caps however many conversations a server holds."""
    from lantern.tools.navigation.caches import ConversationCaches

    caches = ConversationCaches(2)
    first = caches.for_conversation("a")
    assert caches.for_conversation("a") is first
    second = caches.for_conversation("b")
    caches.for_conversation("a")  # "a" used again: "b" is now the oldest
    caches.for_conversation("c")
    assert caches.for_conversation("a") is first
    assert caches.for_conversation("b") is not second


def test_the_conversations_caches_together_keep_within_one_cap() -> None:
    """However many conversations parse, what their caches keep stays within one cap."""
    from lantern.tools.navigation.caches import ConversationCaches

    source = (Path(__file__).parent.parent.parent / "server/lantern/session.py").read_bytes()
    one = ParseCache()
    one.definitions(("file", 0), source, "python")
    cap = 10 * one.charged_bytes  # ten files' worth
    caches = ConversationCaches(2, cap_bytes=cap)
    kept = []
    for conversation in "abc":
        cache = caches.for_conversation(conversation)
        for i in range(20):  # twice the cap's worth in each
            cache.definitions(("file", i), source, "python")
        kept.append(cache)
    assert sum(c.charged_bytes for c in kept[1:]) <= cap  # "a" was let go
    assert all(c.charged_bytes > 0 for c in kept)


async def test_a_conversation_keeps_its_parses_between_questions(app: Path) -> None:
    """Through the agent loop: the second question of a conversation finds the files it
    parsed in the first in the conversation's cache; another conversation has its own."""
    from lantern.agent.conversation import Conversation
    from lantern.agent.loop import Agent
    from lantern.tools.navigation.caches import CACHES

    from tests.fakes.scripted_model import Say, ScriptedModel

    call = {"id": "f1", "name": "find_symbol", "arguments": {"name": "Session"}}
    # A call repeated in a conversation is not run again ("already returned above").
    again = {"id": "f2", "name": "find_symbol", "arguments": {"name": "Session", "path": "app"}}
    answer = Say(content="app/models.py:1")
    model = ScriptedModel(Say(tool_calls=[call]), answer, Say(tool_calls=[again]), answer)
    model.add(Say(tool_calls=[call]), answer)
    agent = Agent(model=model, workspace=Workspace([app]), approvals=Fixed(Decision.ALLOW_ONCE))
    conv, other = Conversation(), Conversation()
    first = await agent.ask("Where is Session?", conv)
    assert first.references[0].seen
    cache = CACHES.for_conversation(conv.id)
    parsed = cache.misses
    assert parsed >= 2 and cache.hits == 0
    await agent.ask("And again?", conv)
    assert cache.misses == parsed and cache.hits >= 2
    await agent.ask("Where is Session?", other)
    assert CACHES.for_conversation(other.id) is not cache
    assert CACHES.for_conversation(other.id).misses == parsed


async def test_candidates_over_the_cap_are_said_and_the_shallowest_looked_at(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "MAX_CANDIDATES", 3)
    for rel in ("a.py", "b/c.py", "b/d/e.py", "b/d/f/g.py", "b/d/f/h.js"):
        write(ws, rel, "def run(): pass\n")
    write(ws, "b/d/f/notes.md", "run run run\n")  # a candidate, but not code
    result = await call(ctx_for(ws), "find_symbol", name="run")
    assert [line.split(":", 1)[0] for line in rows(result)] == ["a.py", "b/c.py", "b/d/e.py"]
    assert result.content.endswith(
        "[searched 3 of 5 candidate files: first the 3 where a line looks like a definition "
        "of the name, then the shallowest; narrow with path=]"
    )


def _many_uses(ws: Path, count: int) -> None:
    for i in range(count):
        write(ws, f"u{i:02}.py", "from lib import run\n\nrun()\n")


async def test_over_the_budget_the_likely_definition_is_searched_first(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "SEARCH_BUDGET", 4)
    _many_uses(ws, 10)
    write(ws, "pkg/deep/er/lib.py", "# run is here\n\n\ndef run(fast=True):\n    return 1\n")
    result = await call(ctx_for(ws), "find_symbol", name="run")
    assert rows(result)[0] == "pkg/deep/er/lib.py:4-5 function run  def run(fast=True):"
    assert result.content.endswith(
        "[searched 4 of 11 candidate files: first the 1 where a line looks like a definition "
        "of the name, then the shallowest; narrow with path=]"
    )


async def test_over_the_budget_with_no_likely_definition_the_shallowest_are_searched(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "SEARCH_BUDGET", 4)
    _many_uses(ws, 6)
    write(ws, "z/deep/x.py", "print(run)\n")
    result = await call(ctx_for(ws), "find_symbol", name="run")
    assert result.content.splitlines()[0] == "[no definition of 'run' under .]"
    assert result.content.endswith(
        "[searched 4 of 7 candidate files: the shallowest (no line looks like a definition "
        "of the name); narrow with path=]"
    )


async def test_within_the_budget_every_candidate_is_searched_without_a_note(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "SEARCH_BUDGET", 7)
    _many_uses(ws, 6)
    # Defined where no line looks like a definition: found because all 7 are searched.
    write(ws, "z/deep/x.c", "typedef int\n    run;\n")
    result = await call(ctx_for(ws), "find_symbol", name="run")
    assert [line.split(":", 1)[0] for line in rows(result)] == ["z/deep/x.c"]
    assert "searched" not in result.content


async def test_find_references_is_not_budgeted(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "SEARCH_BUDGET", 2)
    _many_uses(ws, 5)
    result = await call(ctx_for(ws), "find_references", name="run")
    assert len(rows(result)) == 10
    assert "searched" not in result.content


async def test_uses_are_capped_and_say_so(ws: Path) -> None:
    from lantern.tools.find_references import MAX_USES

    write(ws, "many.py", "def tick(): pass\n" + "tick()\n" * (MAX_USES + 50))
    result = await call(ctx_for(ws), "find_references", name="tick")
    shown = rows(result)
    assert len(shown) == MAX_USES
    assert shown[0] == "many.py:1: def tick(): pass [definition]"
    assert shown[-1] == f"many.py:{MAX_USES}: tick()"
    assert result.content.endswith(f"[more uses not shown (at most {MAX_USES}); narrow with path=]")
    assert len(result.seen) == MAX_USES
