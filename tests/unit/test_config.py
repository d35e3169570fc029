"""Settings: defaults, precedence, validation and secrecy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lantern import compose
from lantern.agent.provider.client import ModelClient
from lantern.approvals.approver import Decision, Fixed
from lantern.settings.sources import (
    Settings,
    SettingsError,
    config_path,
    load_settings,
    load_settings_lenient,
)
from lantern.workspace.roots import Workspace

KEY = "sk-test-0123456789abcdef"
ABSOLUTE_PATH = re.compile(r"(^|[\s'\"(])(/[\w.-]+)+|[A-Za-z]:\\")
NOWHERE = Path(__file__).parent / "no-such-folder" / "config.toml"


def client(layer: object, source: str = "initializationOptions") -> Settings:
    """The settings from one client layer alone (no file, no environment)."""
    return load_settings(client=layer, environ={}, file=NOWHERE, client_source=source)  # type: ignore[arg-type]


def environment(environ: dict[str, str]) -> Settings:
    return load_settings(environ=environ, file=NOWHERE)


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def missing(tmp_path: Path) -> Path:
    return tmp_path / "nowhere" / "config.toml"


def assert_no_absolute_path(message: str, tmp_path: Path) -> None:
    assert str(tmp_path) not in message
    assert ABSOLUTE_PATH.search(message) is None, message


# --------------------------------------------------------------------------- defaults


def test_defaults() -> None:
    s = client({})
    assert s == Settings()
    assert s.model is None and s.base_url is None and s.api_key is None
    assert s.approval.mode == "ask"
    assert s.approval.allow == () and s.approval.deny == ()
    assert s.approval.timeout_seconds == 120.0
    assert s.max_steps == 20
    assert s.max_tool_output_bytes == 262144
    assert s.max_context_tokens is None  # the endpoint's own window
    assert s.request_timeout_seconds == 120.0
    assert s.question_timeout_seconds == 300.0
    assert s.tool_protocol == "auto"


def test_load_settings_with_nothing_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(environ={}, file=missing(tmp_path)) == Settings()


def test_config_path_is_lantern_config_toml() -> None:
    path = config_path()
    assert path.name == "config.toml"
    assert path.parent.name == "lantern"


def test_public_dict_shape() -> None:
    assert Settings().public_dict() == {
        "model": None,
        "baseUrl": None,
        "apiKey": None,
        "approval": {"mode": "ask", "allow": [], "deny": [], "timeoutSeconds": 120.0},
        "maxSteps": 20,
        "maxToolOutputBytes": 262144,
        "maxContextTokens": None,
        "requestTimeoutSeconds": 120.0,
        "questionTimeoutSeconds": 300.0,
        "toolProtocol": "auto",
        "maxOutputTokens": None,
        "headers": {},
        "projectInstructions": True,
    }


def test_headers_are_checked_and_never_shown() -> None:
    secret = "azure-secret-key-123456"
    settings = load_settings(cli={"headers": {"api-key": secret}}, environ={})
    assert settings.headers == {"api-key": secret}
    assert settings.public_dict()["headers"] == {"api-key": "…"}
    assert secret not in repr(settings)
    for bad, words in (
        ({"api-key": f"{secret}\nX-Evil: 1"}, "one-line string"),
        ({"Content-Length": "1"}, "set by Lantern itself"),
        ({"bad name": "x"}, "not a header name"),
        (secret, "must be an object"),
    ):
        with pytest.raises(SettingsError) as caught:
            load_settings(cli={"headers": bad}, environ={})
        assert words in str(caught.value) and secret not in str(caught.value)


def test_max_output_tokens_is_a_count() -> None:
    assert load_settings(cli={"maxOutputTokens": 4096}, environ={}).max_output_tokens == 4096
    with pytest.raises(SettingsError, match="integer ≥ 1"):
        load_settings(cli={"maxOutputTokens": 0}, environ={})


# --------------------------------------------------------------------------- precedence


def test_file_beats_defaults(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "file-model"\nmaxSteps = 7\n')
    s = load_settings(environ={}, file=path)
    assert s.model == "file-model"
    assert s.max_steps == 7


def test_env_beats_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "file-model"\nbaseUrl = "http://file/v1"\n')
    s = load_settings(environ={"LANTERN_MODEL": "env-model"}, file=path)
    assert s.model == "env-model"
    assert s.base_url == "http://file/v1"


def test_client_beats_env(tmp_path: Path) -> None:
    s = load_settings(
        client={"model": "client-model"},
        environ={"LANTERN_MODEL": "env-model", "LANTERN_BASE_URL": "http://env/v1"},
        file=missing(tmp_path),
    )
    assert s.model == "client-model"
    assert s.base_url == "http://env/v1"


def test_cli_beats_client(tmp_path: Path) -> None:
    path = write_config(tmp_path, "maxSteps = 3\nmaxContextTokens = 1000\n")
    s = load_settings(
        cli={"maxSteps": 9},
        client={"maxSteps": 5, "model": "client-model"},
        environ={"LANTERN_MODEL": "env-model"},
        file=path,
    )
    assert s.max_steps == 9
    assert s.model == "client-model"
    assert s.max_context_tokens == 1000


def test_null_and_empty_string_mean_unset_at_that_layer(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "file-model"\nmaxSteps = 4\n')
    s = load_settings(
        cli={"model": None, "maxSteps": None},
        client={"model": "", "approval": None},
        environ={"LANTERN_MODEL": ""},
        file=path,
    )
    assert s.model == "file-model"
    assert s.max_steps == 4


def test_higher_layers_win_key_by_key(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'maxSteps = 1\nmodel = "a"\n')
    s = load_settings(file=path, environ={}, client={"maxSteps": 2}, cli={"maxSteps": 3})
    assert s.max_steps == 3
    assert s.model == "a"


def test_nested_approval_merges_key_by_key(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        '[approval]\nmode = "workspace"\nallow = ["docs/**"]\ntimeoutSeconds = 30\n',
    )
    s = load_settings(
        cli={"approval.deny": ["secrets/**"]},
        client={"approval": {"allow": ["src/**", "tests/**"]}},
        environ={},
        file=path,
    )
    assert s.approval.mode == "workspace"
    assert s.approval.allow == ("src/**", "tests/**")
    assert s.approval.deny == ("secrets/**",)
    assert s.approval.timeout_seconds == 30.0


def test_empty_list_overrides_lower_layer(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[approval]\nallow = ["a/**"]\n')
    s = load_settings(file=path, environ={}, client={"approval": {"allow": []}})
    assert s.approval.allow == ()


# --------------------------------------------------------------------------- environment


def test_environment_variables() -> None:
    s = environment(
        {
            "LANTERN_MODEL": "m",
            "LANTERN_BASE_URL": "http://localhost:11434/v1",
            "LANTERN_API_KEY": KEY,
            "UNRELATED": "x",
        }
    )
    assert (s.model, s.base_url, s.api_key) == ("m", "http://localhost:11434/v1", KEY)


def test_lantern_api_key_beats_openai_api_key() -> None:
    s = environment({"OPENAI_API_KEY": "sk-openai-000000000000", "LANTERN_API_KEY": KEY})
    assert s.api_key == KEY


def test_openai_variables_are_fallbacks() -> None:
    s = environment({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "https://example.test/v1"})
    assert (s.api_key, s.base_url) == (KEY, "https://example.test/v1")
    s = environment({"OPENAI_BASE_URL": "https://o/v1", "LANTERN_BASE_URL": "https://l/v1"})
    assert s.base_url == "https://l/v1"


def test_empty_lantern_variable_falls_back_to_openai() -> None:
    assert environment({"LANTERN_API_KEY": "", "OPENAI_API_KEY": KEY}).api_key == KEY


def test_bad_env_base_url_names_key_and_variable() -> None:
    with pytest.raises(SettingsError) as info:
        environment({"LANTERN_BASE_URL": "localhost:11434"})
    assert "baseUrl" in str(info.value)
    assert "LANTERN_BASE_URL" in str(info.value)


# --------------------------------------------------------------------------- parsing


def test_flat_dotted_keys_nested_keys_and_unset_values() -> None:
    s = client(
        {
            "approval.mode": "workspace",
            "approval": {"allow": ["a/**"], "timeoutSeconds": 5},
            "model": "  m  ",
            "baseUrl": "",
            "maxSteps": None,
        }
    )
    assert s.approval.mode == "workspace"
    assert s.approval.allow == ("a/**",)
    assert s.approval.timeout_seconds == 5.0
    assert s.model == "m"
    assert s.base_url is None
    assert s.max_steps == 20


def test_what_doctor_and_info_show_can_be_given_back(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, 'model = "m"\ntoolProtocol = "text"\n[approval]\ndeny = ["*.pem"]\n'
    )
    s = load_settings(file=path, environ={"LANTERN_API_KEY": KEY})
    shown = s.public_dict()
    del shown["apiKey"]
    assert client(shown) == s.model_copy(update={"api_key": None})


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(environ={}, file=tmp_path / "config.toml") == Settings()


def test_file_is_read(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "m"\n[approval]\ndeny = ["*.pem"]\n')
    s = load_settings(environ={}, file=path)
    assert s.model == "m"
    assert s.approval.deny == ("*.pem",)


def test_vscode_trace_and_extension_settings_are_ignored() -> None:
    s = client({"trace": {"server": "verbose"}, "server": {"command": ["x"]}, "maxSteps": 2})
    assert s.max_steps == 2


# --------------------------------------------------------------------------- validation


BAD_VALUES: list[tuple[dict[str, object], str, str]] = [
    ({"approval": {"mode": "sometimes"}}, "approval.mode", "must be 'ask' or 'workspace'"),
    ({"approval.mode": 1}, "approval.mode", "must be 'ask' or 'workspace'"),
    ({"approval": {"allow": "src/**"}}, "approval.allow", "list of strings"),
    ({"approval": {"deny": ["ok", 3]}}, "approval.deny", "list of non-empty strings"),
    ({"approval": {"timeoutSeconds": 0}}, "approval.timeoutSeconds", "number > 0"),
    ({"approval": "ask"}, "approval", "must be an object"),
    ({"maxSteps": -3}, "maxSteps", "must be an integer ≥ 1, got -3"),
    ({"maxSteps": 0}, "maxSteps", "integer ≥ 1"),
    ({"maxSteps": True}, "maxSteps", "integer ≥ 1"),
    ({"maxSteps": 2.5}, "maxSteps", "integer ≥ 1"),
    ({"maxSteps": "3"}, "maxSteps", "integer ≥ 1"),
    ({"maxToolOutputBytes": 0}, "maxToolOutputBytes", "integer ≥ 1"),
    ({"maxContextTokens": False}, "maxContextTokens", "integer ≥ 1"),
    ({"requestTimeoutSeconds": -1}, "requestTimeoutSeconds", "number > 0"),
    ({"questionTimeoutSeconds": True}, "questionTimeoutSeconds", "number > 0"),
    ({"questionTimeoutSeconds": float("inf")}, "questionTimeoutSeconds", "number > 0"),
    ({"toolProtocol": "json"}, "toolProtocol", "must be 'auto', 'native' or 'text', got 'json'"),
    ({"toolProtocol": True}, "toolProtocol", "must be 'auto', 'native' or 'text'"),
    ({"model": 42}, "model", "must be a string"),
    ({"baseUrl": "localhost:11434/v1"}, "baseUrl", "http:// or https://"),
    ({"baseUrl": "ftp://example.test"}, "baseUrl", "http:// or https://"),
    ({"baseUrl": "http://"}, "baseUrl", "host"),
    ({"apiKey": ["sk-secret-value-1234"]}, "apiKey", "must be a string"),
]


@pytest.mark.parametrize(("layer", "key", "fragment"), BAD_VALUES)
def test_validation_error_names_key(
    layer: dict[str, object], key: str, fragment: str, tmp_path: Path
) -> None:
    with pytest.raises(SettingsError) as info:
        client(layer)
    message = str(info.value)
    assert message.startswith(f"{key}: ")
    assert fragment in message
    assert "initializationOptions" in message
    assert info.value.key == key
    assert_no_absolute_path(message, tmp_path)
    assert "sk-secret" not in message


def test_exact_messages(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[approval]\nmode = "sometimes"\n')
    with pytest.raises(
        SettingsError,
        match=r"^approval\.mode: must be 'ask' or 'workspace', got 'sometimes' "
        r"\(from config\.toml\)$",
    ):
        load_settings(environ={}, file=path)
    with pytest.raises(
        SettingsError, match=r"^maxSteps: must be an integer ≥ 1, got -3 \(from --max-steps\)$"
    ):
        load_settings(cli={"maxSteps": -3}, cli_source="--max-steps", environ={}, file=NOWHERE)


@pytest.mark.parametrize("value", ["auto", "native", "text"])
def test_tool_protocol_values(value: str, tmp_path: Path) -> None:
    path = write_config(tmp_path, f'toolProtocol = "{value}"\n')
    assert load_settings(environ={}, file=path).tool_protocol == value
    cli = {"toolProtocol": value}
    assert (
        load_settings(environ={}, file=path, client={"toolProtocol": "text"}, cli=cli).tool_protocol
        == value
    )


def test_tool_protocol_from_the_environment(tmp_path: Path) -> None:
    environ = {"LANTERN_TOOL_PROTOCOL": "text"}
    assert load_settings(environ=environ, file=missing(tmp_path)).tool_protocol == "text"
    with pytest.raises(SettingsError, match=r"^toolProtocol: .*\(from LANTERN_TOOL_PROTOCOL\)"):
        environment({"LANTERN_TOOL_PROTOCOL": "xml"})


def test_settings_reach_the_agent(tmp_path: Path) -> None:
    s = client({"toolProtocol": "native", "maxSteps": 3, "questionTimeoutSeconds": 9})
    model = ModelClient(model="m", base_url="http://127.0.0.1:9/v1", api_key="x")
    bot = compose.agent(model, Workspace([tmp_path]), Fixed(Decision.ALLOW_ONCE), s)
    limits = bot.settings
    assert (limits.tool_protocol, limits.max_steps, limits.question_timeout_seconds) == (
        "native",
        3,
        9.0,
    )


def test_settings_error_is_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


@pytest.mark.parametrize(("layer", "key", "fragment"), BAD_VALUES)
def test_file_validation_errors_name_config_toml_not_path(
    layer: dict[str, object], key: str, fragment: str, tmp_path: Path
) -> None:
    lines = []
    for name, value in layer.items():
        if isinstance(value, dict):
            lines.append(f"[{name}]")
            lines.extend(f"{k} = {toml_value(v)}" for k, v in value.items())
        else:
            lines.append(f'"{name}" = {toml_value(value)}')
    path = write_config(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(SettingsError) as info:
        load_settings(environ={}, file=path)
    message = str(info.value)
    assert key in message and fragment in message
    assert "config.toml" in message
    assert_no_absolute_path(message, tmp_path)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


def test_toml_syntax_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "m"\nmaxSteps = 3\nbaseUrl = ?\n')
    with pytest.raises(SettingsError) as info:
        load_settings(environ={}, file=path)
    message = str(info.value)
    assert message.startswith("config.toml line 3: Invalid value")
    assert_no_absolute_path(message, tmp_path)


def test_unreadable_file_is_an_error_without_path(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.mkdir()
    with pytest.raises(SettingsError) as info:
        load_settings(environ={}, file=path)
    assert str(info.value).startswith("config.toml")
    assert_no_absolute_path(str(info.value), tmp_path)


def test_invalid_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(SettingsError, match=r"config\.toml"):
        load_settings(environ={}, file=path)


def test_toml_error_at_end_of_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'model = "m')
    with pytest.raises(SettingsError, match=r"^config\.toml at end of file: Unterminated string$"):
        load_settings(environ={}, file=path)


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("maxStep", "maxSteps"),
        ("max_steps", "maxSteps"),
        ("baseURL", "baseUrl"),
        ("mode", "approval.mode"),
        ("approval.mod", "approval.mode"),
    ],
)
def test_unknown_key_with_suggestion(key: str, suggestion: str) -> None:
    with pytest.raises(SettingsError) as info:
        client({key: 1})
    message = str(info.value)
    assert f"unknown setting {key!r}" in message
    assert f"(did you mean {suggestion!r}?)" in message
    assert "initializationOptions" in message
    assert info.value.key == key


def test_unknown_nested_key_is_named_with_its_dotted_name() -> None:
    with pytest.raises(
        SettingsError, match=r"unknown setting 'approval\.allowed'.*'approval\.allow'"
    ):
        client({"approval": {"allowed": []}})


def test_unknown_key_without_close_match() -> None:
    with pytest.raises(SettingsError) as info:
        client({"zzzqqq": 1})
    assert "unknown setting 'zzzqqq'" in str(info.value)
    assert "did you mean" not in str(info.value)


def test_unknown_key_in_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, "maxStep = 3\n")
    with pytest.raises(SettingsError, match=r"unknown setting 'maxStep'.*'maxSteps'"):
        load_settings(environ={}, file=path)


def test_same_key_twice_in_one_layer() -> None:
    with pytest.raises(SettingsError, match=r"approval\.mode: given twice"):
        client({"approval.mode": "ask", "approval": {"mode": "workspace"}})


def test_unknown_key_is_reported_even_when_null() -> None:
    with pytest.raises(SettingsError, match=r"unknown setting 'maxStepz'"):
        client({"maxStepz": None})


# --------------------------------------------------------------------------- lenient mode


def lenient(layer: object, file: Path = NOWHERE) -> tuple[Settings, list[str]]:
    return load_settings_lenient(client=layer, environ={}, file=file)  # type: ignore[arg-type]


def test_lenient_keeps_defaults_and_reports() -> None:
    settings, errors = lenient(
        {"maxSteps": 0, "approval": {"mode": "sometimes", "allow": ["src/**"]}, "maxStep": 3}
    )
    assert settings.max_steps == 20
    assert settings.approval.mode == "ask"
    assert settings.approval.allow == ("src/**",)
    assert len(errors) == 3
    assert any(e.startswith("maxSteps: must be an integer ≥ 1") for e in errors)
    assert any(e.startswith("approval.mode: must be 'ask' or 'workspace'") for e in errors)
    assert any("unknown setting 'maxStep'" in e and "'maxSteps'" in e for e in errors)
    assert all("initializationOptions" in e for e in errors)


def test_lenient_keeps_lower_layer_value(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'maxSteps = 5\n[approval]\nmode = "workspace"\n')
    settings, errors = lenient({"maxSteps": -1, "approval": {"mode": "never"}}, path)
    assert settings.max_steps == 5
    assert settings.approval.mode == "workspace"
    assert len(errors) == 2


def test_lenient_good_layers_report_nothing() -> None:
    settings, errors = lenient({"maxSteps": 5})
    assert settings.max_steps == 5
    assert errors == []


def test_lenient_non_mapping_layer() -> None:
    settings, errors = lenient(["not", "a", "mapping"])
    assert settings == Settings()
    assert errors == ["settings must be an object, got a list (from initializationOptions)"]


def test_load_settings_lenient_skips_broken_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, "maxSteps = = 3\n")
    settings, errors = load_settings_lenient(
        client={"maxSteps": 0, "model": "m"},
        environ={"LANTERN_BASE_URL": "nope", "OPENAI_BASE_URL": "http://fallback/v1"},
        file=path,
    )
    assert settings.model == "m"
    assert settings.max_steps == 20
    assert settings.base_url == "http://fallback/v1"
    assert len(errors) == 3
    assert errors[0].startswith("config.toml line 1:")
    for message in errors:
        assert_no_absolute_path(message, tmp_path)


def test_strict_raises_where_lenient_reports() -> None:
    with pytest.raises(SettingsError):
        client({"maxSteps": 0})


# --------------------------------------------------------------------------- secrecy


def test_api_key_never_in_repr(tmp_path: Path) -> None:
    s = load_settings(environ={"LANTERN_API_KEY": KEY}, file=missing(tmp_path))
    assert s.api_key == KEY
    assert KEY not in repr(s)
    assert KEY not in str(s)
    assert "api_key" not in repr(s)


def test_public_dict_masks_api_key() -> None:
    s = client({"apiKey": KEY})
    public = s.public_dict()
    assert public["apiKey"] == "sk-…cdef"
    assert KEY not in repr(public)


def test_public_dict_masks_short_key_completely() -> None:
    public = client({"apiKey": "ollama"}).public_dict()
    assert public["apiKey"] == "…"
    assert "ollama" not in repr(public)


def test_bad_api_key_value_is_not_echoed() -> None:
    with pytest.raises(SettingsError) as info:
        client({"apiKey": 123456789})
    assert "123456789" not in str(info.value)
    assert "apiKey" in str(info.value)


def test_project_instructions_is_a_boolean() -> None:
    assert (
        load_settings(cli={"projectInstructions": False}, environ={}).project_instructions is False
    )
    with pytest.raises(SettingsError, match="projectInstructions: must be true or false, got 'no'"):
        load_settings(cli={"projectInstructions": "no"}, environ={})
