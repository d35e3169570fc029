"""Secret values on the lines below their name (`API_KEY = (`, `token = \"\"\"`), through
redact() and through read_file windows and search hits on real files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from lantern.workspace.redact.redactor import redact

from tests.conftest import call, ctx_for, write
from tests.unit.test_list_search import CANARY

SECRET = "Xk9#mP2q" + CANARY  # random-looking: digits, symbols, both cases

_CASES = {
    "python parens": f'API_KEY = (\n    "{SECRET}"\n)\n',
    "python parens, comma": f'class Config:\n    token = (\n        "{SECRET}",\n    )\n',
    "toml triple quotes": f'api_key = """\n{SECRET}"""\n',
    "python triple single": f"secret = '''\n{SECRET}\n'''\n",
    "js template": f"const authToken = `\n  {SECRET}\n`;\n",
    "shell continuation": f"export DB_PASSWORD=\\\n  {SECRET}\n",
    "list of one": f'password: [\n  "{SECRET}"\n]\n',
    "crlf": f'api_key = (\r\n    "{SECRET}"\r\n)\r\n',
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_a_value_below_its_name_is_redacted_keeping_lines(name: str) -> None:
    text = _CASES[name]
    result = redact(text)
    assert CANARY not in result.text
    assert "[REDACTED:assignment]" in result.text
    assert result.text.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "text",
    [
        'key_names = (\n    "first_name",\n    "last_name",\n)\n',
        "token = (\n    get_token()\n)\n",
        'password = (\n    os.environ["DB_PASSWORD"]\n)\n',
        'secret_message = """\nhello there, world\n"""\n',
    ],
)
def test_ordinary_code_below_a_name_is_left_alone(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("name", sorted(_CASES))
async def test_read_file_window_and_search_hide_the_value(ws: Path, name: str) -> None:
    text = "# settings\n" + "x = 1\n" * 30 + _CASES[name]
    write(ws, "conf/settings.txt", text)
    ctx = ctx_for(ws)
    lines = _CASES[name].splitlines()
    value_line = 31 + next(i for i, line in enumerate(lines, 1) if SECRET in line)
    windows = [
        await call(ctx, "read_file", path="conf/settings.txt"),
        await call(ctx, "read_file", path="conf/settings.txt", offset=value_line, limit=1),
        await call(ctx, "search", pattern="mP2q"),
    ]
    for result in windows:
        assert not result.is_error, result.content
        assert CANARY not in result.content
    assert "[REDACTED:assignment]" in windows[1].content
    # A match inside the secret is no hit at all (search is no redaction oracle).
    assert windows[2].content.startswith("[no matches for"), windows[2].content


def test_many_openers_stay_linear() -> None:
    """A complexity guard, not a benchmark."""
    text = ("api_key = (\n" + f'    "{SECRET}"\n' * 7) * 20_000
    started = time.thread_time()  # CPU time: other processes on a busy machine do not count
    result = redact(text)
    assert time.thread_time() - started < 40.0  # ~3 s linear; quadratic is hours
    assert result.text.count("\n") == text.count("\n")


# --- a quoted name, a comma, a quoted value ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"define('DB_PASSWORD', '{SECRET}');",
        f"define( 'SECURE_AUTH_KEY',  '{SECRET}' );",
        f'os.environ.setdefault("API_KEY", "{SECRET}")',
        f'config.set("auth_token" , "{SECRET}")',
    ],
)
def test_a_secret_passed_after_its_quoted_name_is_redacted(text: str) -> None:
    result = redact(text + "\n")
    assert CANARY not in result.text and "[REDACTED:assignment]" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "define('DB_USER', 'root');",
        'log("token", "invalid")',
        'settings.get("secret_name", "my_default")',
        "define('AUTH_KEY', 'put your unique phrase here');",
    ],
)
def test_ordinary_arguments_after_a_quoted_name_are_left_alone(text: str) -> None:
    assert redact(text + "\n").text == text + "\n"
