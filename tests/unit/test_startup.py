"""What loading a command changes of the garbage collector, it gives back
(`lantern.startup`); and `lantern serve` resolves its settings without the model libraries."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lantern import startup
from lantern.cli.commands import main


@pytest.fixture(autouse=True)
def _collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    startup.loaded()
    gc.set_threshold(*before)


def test_loading_collects_less_until_loaded() -> None:
    before = gc.get_threshold()
    startup.loading()
    assert gc.get_threshold() == startup.LOADING
    startup.loading()  # a second call keeps what is to be given back
    startup.loaded()
    assert gc.get_threshold() == before
    startup.loaded()  # nothing more to give back
    assert gc.get_threshold() == before


def test_a_command_gives_the_collector_back(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):  # no config.toml; the audit log here
        monkeypatch.setenv(variable, str(tmp_path / variable))
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    before = gc.get_threshold()
    assert main(["tool", "read_file", '{"path": "a.txt"}', "--workspace", str(ws)]) == 0
    assert json.loads(capsys.readouterr().out)["is_error"] is False
    assert gc.get_threshold() == before
    assert main(["tool", "read_file", "{}", "--workspace", str(ws / "missing")]) == 2
    assert gc.get_threshold() == before


def test_the_server_resolves_settings_without_the_model_libraries(ws: Path) -> None:
    """`initialize` resolves the settings; pydantic, openai and the HTTP client load with
    the agent side, after it is answered (`session.load_agent_side`)."""
    script = (
        "import sys\n"
        "from lantern.lsp.server import build_server\n"
        "session = build_server().session\n"
        f"session.set_folders([{str(ws)!r}])\n"
        "problems = session.configure(init_options={'model': 'm', 'maxSteps': 'x'})\n"
        "print(problems, session.settings.model)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'openai', 'httpx2'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    checked, loaded = done.stdout.splitlines()
    assert "maxSteps: must be an integer ≥ 1, got 'x'" in checked and checked.endswith(" m")
    assert loaded == "[]"


def _modules_after(ws: Path, *argv: str) -> set[str]:
    """The modules loaded once `lantern ARGV` has run in a fresh interpreter."""
    script = (
        "import sys, contextlib, io\n"
        "from lantern.cli.commands import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({list(argv)!r})\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ws,
    )
    return set(done.stdout.split())


def test_a_tool_call_loads_that_tool_and_version_loads_no_command(ws: Path) -> None:
    """`lantern tool read_file` loads no other tool (no code engine); `lantern --version`
    loads no settings, workspace or tool."""
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    loaded = _modules_after(ws, "tool", "read_file", '{"path": "a.txt"}', "--workspace", str(ws))
    others = {"search", "list_files", "outline", "find_symbol", "find_references"}
    assert "lantern.tools.read_file" in loaded
    assert not {f"lantern.tools.{name}" for name in others} & loaded
    assert not {m for m in loaded if m.startswith(("lantern.code", "lantern.agent"))}
    loaded = _modules_after(ws, "--version")
    assert not {m for m in loaded if m.startswith(("lantern.settings", "lantern.workspace"))}
    assert not {m for m in loaded if m.startswith("lantern.tools")}
