"""What a client other than the VS Code extension relies on (found with Neovim 0.11).

Position encodings negotiated at `initialize` and honoured in every offset the
server sends; references a location list can take as they are; a stable
`errorCode` for a question without a workspace; messages any strict JSON
decoder accepts, whatever the model writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol.converters import get_converter

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.lsp.conftest import Lantern, StartServer, all_text, read_call

pytestmark = pytest.mark.asyncio(loop_scope="module")


LINE_2 = "    return 'naïve café → 😀'  # ünïcödé"  # 2-, 3- and 4-byte UTF-8 characters
ANSWER = "Ça dépend 😀: see src/text.py:1-2 and src/gone.py:3."


def _units(text: str) -> dict[str, int]:
    return {
        "utf-8": len(text.encode("utf-8")),
        "utf-16": len(text.encode("utf-16-le")) // 2,
        "utf-32": len(text),
    }


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (["utf-8", "utf-16"], "utf-8"),  # what Neovim 0.11 offers
        (None, "utf-16"),  # a client that says nothing gets the LSP default
        (["utf-32", "utf-16"], "utf-32"),
    ],
)
async def test_offsets_follow_the_negotiated_position_encoding(
    start_server: StartServer,
    fake: FakeOpenAI,
    workspace: Path,
    offered: list[str] | None,
    chosen: str,
) -> None:
    (workspace / "src" / "text.py").write_text(f"def greet():\n{LINE_2}\n", "utf-8")
    fake.add_turns([{"content": ANSWER}])
    ls = await start_server([workspace], position_encodings=offered)
    assert ls.initialized is not None
    assert ls.initialized.capabilities.position_encoding == chosen

    result = await ls.ask("What does greet return?")
    assert result["answer"] == ANSWER
    verified, unverified = result["references"]
    assert verified["verified"] is True
    assert verified["uri"] == (workspace / "src" / "text.py").as_uri()
    assert verified["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 1, "character": _units(LINE_2)[chosen]},  # the whole last line
    }
    # `span` counts in the same unit, so a Lua client can `string.sub` the answer's bytes.
    for ref, text in ((verified, "src/text.py:1-2"), (unverified, "src/gone.py:3")):
        start, end = ref["span"]
        before = ANSWER[: ANSWER.index(text)]
        assert start == _units(before)[chosen]
        assert end - start == _units(text)[chosen]


async def test_unverified_references_have_no_uri_or_range(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    answer = "See src/app.py:3, src/missing.py:1, src/app.py:99, .env:1 and /etc/passwd:1."
    fake.add_turns([{"content": answer}])
    refs = (await ls.ask("Where?"))["references"]
    assert [r["verified"] for r in refs] == [True, False, False, False, False]
    assert refs[0]["uri"] == (workspace / "src" / "app.py").as_uri()
    for ref in refs[1:]:
        # No `"uri": null`: a client may hand every reference that has a uri to its
        # location list (vim.lsp.util.locations_to_items fails on a null one).
        assert "uri" not in ref and "range" not in ref
        assert set(ref) == {"path", "startLine", "endLine", "verified", "seen", "span"}


async def test_no_workspace_answers_with_a_stable_error_code(
    start_server: StartServer, fake: FakeOpenAI
) -> None:
    fake.add_turns([{"content": "should never be asked"}])
    ls = await start_server([])
    result = await ls.ask("What is this project?", conversationId="c-1")
    assert result["stopReason"] == "error"
    assert result["errorCode"] == "no_workspace"
    assert result["conversationId"] == "c-1"
    assert result["answer"] == "" and result["references"] == []
    assert "folder" in result["error"]
    assert fake.chat_requests() == []


async def test_a_model_error_has_a_code_too(ls: Lantern, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add_turns([{"status": 401, "content": ""}])
    result = await ls.ask("Anything?")
    assert result["stopReason"] == "error"
    assert result["errorCode"] == "model_auth"
    assert result["detail"]["fixes"][0]["setting"] == "apiKey"


async def test_a_wrong_url_comes_with_the_setting_to_change(
    start_server: StartServer, fake: FakeOpenAI, workspace: Path
) -> None:
    # A base URL without /v1 reaching Ollama: its router's "404 page not found".
    fake.off_route = Turn(raw="404 page not found", raw_status=404, raw_content_type="text/plain")
    root = f"http://127.0.0.1:{fake.port}"
    ls = await start_server([workspace], {"baseUrl": root})
    result = await ls.ask("Anything?")
    assert result["errorCode"] == "model_wrong_url"
    detail = result["detail"]
    assert detail["fixes"][0] == {
        "setting": "baseUrl",
        "value": f"{root}/v1",
        "note": "the API answers there",
    }
    assert detail["providerMessage"] == "404 page not found" and detail["status"] == 404
    # What an editor shows names the setting, never a command-line flag.
    assert f"set `baseUrl` to {root}/v1" in result["error"]
    for flag in ("--base-url", "--model", "LANTERN_", "lantern doctor"):
        assert flag not in result["error"]
    assert len(fake.chat_requests()) == 1


SURROGATE = "\ud800"


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def test_a_lone_surrogate_in_the_answer_reaches_the_client_as_a_replacement(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns([{"content": f"Done {SURROGATE} src/app.py:1 😀"}])
    result = await ls.ask("Go")
    assert result["stopReason"] == "done"
    assert result["answer"] == "Done \ufffd src/app.py:1 😀"  # a valid pair stays as it is
    [ref] = result["references"]
    assert ref["verified"] is True
    deltas = "".join(e["text"] for e in ls.events if e["kind"] == "answerDelta")
    assert deltas == result["answer"]
    # Python's decoder accepts `\ud800` escapes; Neovim's refuses the whole message.
    # Nothing the client received may hold one.
    assert not _lone_surrogates([result, ls.events])


async def test_lone_surrogates_in_tool_calls_reach_the_client_as_replacements(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns(
        [
            {
                "content": f"Checking {SURROGATE}.",
                "tool_calls": [
                    {"id": "call_1", "name": f"read{SURROGATE}", "arguments": {SURROGATE: 1}},
                    read_call("call_2", "src/app.py", **{f"x{SURROGATE}": "y"}),
                ],
            },
            {"content": "Done."},
        ]
    )
    result = await ls.ask("Go")
    assert result["stopReason"] == "done"
    assert [c["name"] for c in result["toolCalls"]] == ["read\ufffd", "read_file"]
    progress = get_converter().unstructure(ls.client.progress_reports)
    assert _strings(progress)  # tool names and paths were reported as progress
    assert any("\ufffd" in s for s in _strings(ls.events))
    assert not _lone_surrogates([result, ls.events, progress])


def _lone_surrogates(value: Any) -> list[str]:
    return [s for s in _strings(value) if any("\ud800" <= c <= "\udfff" for c in s)]


async def test_a_lone_surrogate_from_the_client_is_replaced_not_fatal(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.add_turns([{"content": "Fine."}])
    result = await ls.ask(f"why{SURROGATE}?", conversationId=f"c{SURROGATE}")
    assert result["stopReason"] == "done" and result["answer"] == "Fine."
    assert result["conversationId"] == "c\ufffd"
    assert "why\ufffd?" in all_text(fake.chat_requests()[0])


async def test_info_serves_the_read_limit_that_read_file_applies(
    ls: Lantern, fake: FakeOpenAI, workspace: Path
) -> None:
    """A client that shows a read's line window learns the cap from `lantern/info`."""
    (workspace / "src" / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 1001)))
    fake.add_turns(
        [{"tool_calls": [read_call("call_1", "src/long.txt", limit=5000)]}, {"content": "Done."}]
    )
    info = await ls.request("lantern/info", {})
    limit = info["readMaxLines"]
    assert isinstance(limit, int) and 1 <= limit < 1000
    assert (await ls.ask("Read it all"))["stopReason"] == "done"
    assert f"lines 1–{limit} of 1000]" in all_text(fake.chat_requests()[1])
