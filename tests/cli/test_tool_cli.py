"""`lantern tool NAME 'JSON_ARGS'`, run as a real subprocess.

HOME and the XDG folders point into tmp_path, so no test reads the user's
config or writes to the user's log.
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

LANTERN = Path(sys.executable).with_name("lantern")
CANARY = "cli-canary-" + "a7c2e9"
KEYS = {"content", "is_error", "code", "bytes"}


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        """The one JSON object on stdout (fails if there is anything else)."""
        value = json.loads(self.stdout)
        assert isinstance(value, dict)
        assert self.stdout.count("\n") == 1 and self.stdout.endswith("\n")
        return value


@dataclass
class Env:
    tmp: Path
    ws: Path

    @property
    def vars(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp / "home"),
            "XDG_STATE_HOME": str(self.tmp / "state"),
            "XDG_DATA_HOME": str(self.tmp / "data"),
            "XDG_CONFIG_HOME": str(self.tmp / "config"),
            "XDG_CACHE_HOME": str(self.tmp / "cache"),
        }

    @property
    def config(self) -> Path:
        return self.tmp / "config" / "lantern" / "config.toml"

    @property
    def audit(self) -> Path:
        # platformdirs.user_log_path("lantern") on Linux: $XDG_STATE_HOME/lantern/log
        return self.tmp / "state" / "lantern" / "log" / "audit.jsonl"

    def write_config(self, text: str) -> None:
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(text, "utf-8")

    def run(self, *argv: str, workspace: bool = True, cwd: Path | None = None) -> Run:
        extra = ["--workspace", str(self.ws)] if workspace else []
        proc = subprocess.run(
            [str(LANTERN), "tool", *argv, *extra],
            env=self.vars,
            cwd=cwd or self.tmp,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    assert LANTERN.is_file(), f"{LANTERN} is missing; install the package (pip install -e .)"
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n", "utf-8")
    (ws / "src" / "prod.yaml").write_text(f"password_hint: {CANARY}\n", "utf-8")
    (ws / ".env").write_text(f"TOKEN={CANARY}\n", "utf-8")
    (ws / "README.md").write_text("# hello\n", "utf-8")
    return Env(tmp_path, ws)


# --- output shape ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "expect"),
    [
        ("read_file", {"path": "src/app.py"}, "1│def main():"),
        ("list_files", {}, "src/app.py ("),
        ("search", {"pattern": "return"}, "src/app.py:2:     return 42"),
        ("outline", {"path": "src/app.py"}, "src/app.py:1-2 function main  def main():"),
        ("outline", {"path": "."}, "src/app.py:1-2 function main  def main():"),
        ("find_symbol", {"name": "main"}, "src/app.py:1-2 function main  def main():"),
        ("find_references", {"name": "main"}, "src/app.py:1: def main(): [definition]"),
    ],
)
def test_success_prints_one_json_object(
    env: Env, tool: str, args: dict[str, Any], expect: str
) -> None:
    run = env.run(tool, json.dumps(args))
    assert run.returncode == 0, run.stderr
    out = run.json
    assert set(out) == KEYS
    assert out["is_error"] is False
    assert out["code"] is None
    assert expect in out["content"]
    assert out["bytes"] == len(out["content"].encode("utf-8"))
    assert str(env.ws) not in run.stdout


def test_arguments_default_to_empty_object(env: Env) -> None:
    run = env.run("list_files")
    assert run.returncode == 0
    assert "README.md" in run.json["content"]


def test_workspace_defaults_to_current_folder(env: Env) -> None:
    run = env.run("read_file", '{"path": "README.md"}', workspace=False, cwd=env.ws)
    assert run.returncode == 0
    assert "# hello" in run.json["content"]


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("read_file", '{"path": ".env"}', "sensitive_path"),
        ("read_file", '{"path": "/etc/passwd"}', "absolute_path"),
        ("read_file", '{"path": "nope.py"}', "not_found"),
        ("read_file", "{not json", "invalid_arguments"),
        ("search", '{"pattern": "("}', "invalid_arguments"),
        ("write_file", "{}", "unknown_tool"),
        ("outline", '{"path": ".env"}', "sensitive_path"),
        ("outline", '{"path": "README.md"}', "unsupported_language"),
        ("find_symbol", '{"name": "main(", "path": "src"}', "invalid_arguments"),
        ("find_references", '{"name": "main", "path": ".env"}', "sensitive_path"),
    ],
)
def test_refusal_exits_zero(env: Env, tool: str, args: str, code: str) -> None:
    run = env.run(tool, args)
    assert run.returncode == 0, run.stderr
    out = run.json
    assert set(out) == KEYS
    assert out["is_error"] is True
    assert out["code"] == code
    assert CANARY not in run.stdout
    assert str(env.ws) not in run.stdout


def test_approve_deny(env: Env) -> None:
    for tool, args in [
        ("read_file", '{"path": "src/app.py"}'),
        ("list_files", "{}"),
        ("search", '{"pattern": "main"}'),
        ("outline", '{"path": "src/app.py"}'),
        ("find_symbol", '{"name": "main"}'),
        ("find_references", '{"name": "main"}'),
    ]:
        run = env.run(tool, args, "--approve", "deny")
        assert run.returncode == 0
        assert run.json["code"] == "denied_by_user"
        assert "return 42" not in run.stdout


def test_approve_allow_is_the_default(env: Env) -> None:
    run = env.run("read_file", '{"path": "src/app.py"}', "--approve", "allow")
    assert run.json["is_error"] is False


# --- usage errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["list_files", "{}", "--bogus"],
        [],
        ["list_files", "{}", "--approve", "maybe"],
    ],
    ids=["unknown-flag", "missing-tool-name", "bad-approve"],
)
def test_usage_error_exits_two(env: Env, argv: list[str]) -> None:
    run = env.run(*argv)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.strip()


def test_missing_workspace_exits_two(env: Env) -> None:
    missing = env.tmp / "does-not-exist"
    run = env.run("list_files", "{}", "--workspace", str(missing), workspace=False)
    assert run.returncode == 2
    assert run.stdout == ""
    assert "--workspace" in run.stderr
    assert "does-not-exist" in run.stderr
    assert str(env.tmp) not in run.stderr


# --- config.toml ----------------------------------------------------------------------------


def test_bad_config_exits_two_naming_the_key(env: Env) -> None:
    env.write_config('[approval]\nmode = "sometimes"\n')
    run = env.run("list_files")
    assert run.returncode == 2
    assert run.stdout == ""
    assert "approval.mode" in run.stderr
    assert "config.toml" in run.stderr
    assert str(env.tmp) not in run.stderr


def test_unparsable_config_exits_two(env: Env) -> None:
    env.write_config("[approval\nmode = ")
    run = env.run("list_files")
    assert run.returncode == 2
    assert "config.toml" in run.stderr


def test_config_deny_globs_are_sensitive(env: Env) -> None:
    env.write_config('[approval]\ndeny = ["src/*.yaml"]\n')
    run = env.run("read_file", '{"path": "src/prod.yaml"}')
    assert run.returncode == 0
    assert run.json["code"] == "sensitive_path"
    assert "approval.deny" in run.json["content"]
    listing = env.run("list_files").json["content"]
    assert "prod.yaml" not in listing
    assert "src/app.py" in listing
    found = env.run("search", json.dumps({"pattern": "password_hint"})).json
    assert CANARY not in found["content"]
    assert found["content"].startswith("[no matches")


# --- audit log ------------------------------------------------------------------------------


def test_audit_log_under_xdg_state_home(env: Env) -> None:
    env.run("read_file", '{"path": "src/app.py"}')
    env.run("read_file", '{"path": ".env"}')
    env.run("list_files", "{}", "--approve", "deny")
    assert env.audit.is_file()
    records = [json.loads(line) for line in env.audit.read_text("utf-8").splitlines()]
    assert [(r["tool"], r["path"], r["decision"]) for r in records] == [
        ("read_file", "src/app.py", "auto"),
        ("read_file", ".env", "refused:sensitive_path"),
        ("list_files", ".", "denied"),
    ]
    assert {r["conversation"] for r in records} == {"cli-tool"}
    assert {r["workspace"] for r in records} == {"ws"}
    text = env.audit.read_text("utf-8")
    assert CANARY not in text
    assert "return 42" not in text
    assert str(env.tmp) not in text
    assert not (env.tmp / "home").exists() or not any((env.tmp / "home").rglob("audit.jsonl"))


def test_code_tools_are_audited(env: Env) -> None:
    env.run("outline", '{"path": "src/app.py"}')
    env.run("find_symbol", '{"name": "main", "path": "src"}')
    env.run("find_references", '{"name": "main"}', "--approve", "deny")
    env.run("outline", '{"path": ".env"}')
    records = [json.loads(line) for line in env.audit.read_text("utf-8").splitlines()]
    assert [(r["tool"], r["path"], r["decision"]) for r in records] == [
        ("outline", "src/app.py", "auto"),
        ("find_symbol", "src", "auto"),
        ("find_references", ".", "denied"),
        ("outline", ".env", "refused:sensitive_path"),
    ]
    assert CANARY not in env.audit.read_text("utf-8")
