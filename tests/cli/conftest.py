"""Fixtures for `lantern ask` end to end: a fake model server, a real workspace, a clean env.

Every subprocess gets its own HOME and XDG folders under `tmp_path`, no
`LANTERN_*` / `OPENAI_*` variables, and `OLLAMA_HOST` pointed at a closed
loopback port, so nothing from the machine running the tests (a real key, a
real Ollama) can leak into a test or be reached by one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.hang import HANG_S

CLOSED_OLLAMA = "127.0.0.1:9"  # the discard port: nothing listens there

ENV_CANARY = "CANARY-ENV-7f3a91c2"
OUTSIDE_CANARY = "CANARY-OUTSIDE-5b8e04d6"
KEY_CANARY = "CANARY-KEY-2c6d19e4"

APP_PY = """\
import sys

from src.util import greet


def main(argv: list[str]) -> int:
    name = argv[1] if len(argv) > 1 else "world"
    print(greet(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
"""

UTIL_PY = """\
def greet(name: str) -> str:
    return f"Hello, {name}!"
"""


@dataclass
class Project:
    """The temporary workspace and what lies around it."""

    root: Path  # the workspace folder (tmp_path/"proj")
    tmp: Path  # tmp_path: the workspace, the outside folder and the XDG homes
    outside: Path  # a folder next to the workspace with a canary file
    canaries: tuple[str, ...]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP_PY, "utf-8")
    (root / "src" / "util.py").write_text(UTIL_PY, "utf-8")
    (root / "README.md").write_text("# proj\n\nA tiny greeter.\n", "utf-8")
    # 60 lines of ~40 bytes: far more than a 300-byte tool output budget.
    (root / "notes.txt").write_text(
        "".join(f"note {i:03d}: nothing to see in this line\n" for i in range(1, 61)), "utf-8"
    )
    (root / ".env").write_text(f"API_TOKEN={ENV_CANARY}\n", "utf-8")
    (root / "deploy.key").write_text(f"{KEY_CANARY}\n", "utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text(f"{OUTSIDE_CANARY}\n", "utf-8")
    os.symlink(outside / "canary.txt", root / "link.txt")
    os.symlink(root / ".env", root / "env-link.txt")
    return Project(root, tmp_path, outside, (ENV_CANARY, OUTSIDE_CANARY, KEY_CANARY))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LANTERN_", "OPENAI_", "OLLAMA_", "XDG_"))
    }
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / "home" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        clean[name] = str(folder)
    clean["OLLAMA_HOST"] = CLOSED_OLLAMA
    clean["PYTHONUNBUFFERED"] = "1"
    clean["NO_PROXY"] = clean["no_proxy"] = "127.0.0.1,localhost"
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        clean.pop(proxy, None)
    return clean


@dataclass
class Run:
    """One finished `lantern ask`."""

    rc: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        """The one JSON object `--json` prints; fails unless stdout is exactly that."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one JSON line on stdout, got: {self.stdout!r}"
        data = json.loads(lines[0])
        assert isinstance(data, dict)
        return data


class Lantern:
    """Runs `python -m lantern.cli ask` against the fake server on the project."""

    def __init__(self, fake: FakeOpenAI, project: Project, env: dict[str, str]) -> None:
        self.fake, self.project, self.env = fake, project, env

    def config(self, text: str) -> Path:
        """Write `config.toml` where `platformdirs.user_config_path("lantern")` finds it."""
        folder = Path(self.env["XDG_CONFIG_HOME"]) / "lantern"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "config.toml"
        path.write_text(text, "utf-8")
        return path

    def command(
        self,
        question: str,
        *extra: str,
        workspace: Path | None = None,
        base_url: str | None = "fake",
        model: str | None = "fake-model",
        approve: str | None = "allow",
        as_json: bool = True,
    ) -> list[str]:
        folder = workspace or self.project.root
        cmd = [
            sys.executable,
            "-m",
            "lantern.cli",
            "ask",
            question,
            "--workspace",
            str(folder),
        ]
        if base_url is not None:
            cmd += ["--base-url", self.fake.base_url if base_url == "fake" else base_url]
        if model is not None:
            cmd += ["--model", model]
        if approve is not None:
            cmd += ["--approve", approve]
        if as_json:
            cmd.append("--json")
        return cmd + list(extra)

    def ask(self, question: str, *extra: str, timeout: float = HANG_S, **options: Any) -> Run:
        done = subprocess.run(
            self.command(question, *extra, **options),
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.project.tmp,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def popen(self, question: str, *extra: str, **options: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(question, *extra, **options),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.project.tmp,
        )


@pytest.fixture
def lantern(fake: FakeOpenAI, project: Project, env: dict[str, str]) -> Lantern:
    return Lantern(fake, project, env)
