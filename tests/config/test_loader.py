"""Layer precedence, the user JSON file, environment variables and the API key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smith_tui.config import (
    LAYER_NAMES,
    ConfigError,
    FrozenConfigError,
    LoadOptions,
    default_config_path,
    load_effective_config,
    server_configured,
)


def write_user(data: Any, path: Path | None = None) -> Path:
    path = path or default_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load_error(options: LoadOptions | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_effective_config(options)
    return str(caught.value)


def test_defaults_only_when_nothing_is_configured() -> None:
    loaded = load_effective_config()
    assert loaded.effective["index_file"] == "INDEX.md"
    assert loaded.effective["llm_config"]["retry_backoff_ms"] == [2000, 8000]
    assert "api_url" not in loaded.effective["llm_config"]
    assert not server_configured(loaded)
    assert loaded.user_config_path == default_config_path()
    assert tuple(loaded.layers) == LAYER_NAMES
    assert loaded.layers["user"] == {}
    assert loaded.source_of("index_file") == "defaults"


def test_each_layer_beats_the_one_below(monkeypatch: pytest.MonkeyPatch) -> None:
    leaf = ("llm_config", "api_url")
    write_user({"llm_config": {"api_url": "http://user/v1"}})
    assert load_effective_config().model.llm_config.api_url == "http://user/v1"

    monkeypatch.setenv("SMITH_API_URL", "http://env/v1")
    loaded = load_effective_config()
    assert loaded.model.llm_config.api_url == "http://env/v1"
    assert loaded.source_of(".".join(leaf)) == "env"

    persisted = {"llm_config": {"api_url": "http://persisted/v1"}}
    loaded = load_effective_config(LoadOptions(persisted=persisted))
    assert loaded.effective["llm_config"]["api_url"] == "http://persisted/v1"
    assert loaded.source_of("llm_config.api_url") == "persisted"

    ephemeral = {"llm_config": {"api_url": "http://ephemeral/v1"}}
    loaded = load_effective_config(LoadOptions(persisted=persisted, ephemeral=ephemeral))
    assert loaded.effective["llm_config"]["api_url"] == "http://ephemeral/v1"
    assert loaded.source_of("llm_config.api_url") == "ephemeral"
    assert loaded.layers["user"]["llm_config"]["api_url"] == "http://user/v1"
    assert loaded.layers["env"]["llm_config"]["api_url"] == "http://env/v1"
    assert loaded.layers["persisted"] == persisted


def test_user_file_beats_defaults_and_deep_merge_keeps_siblings() -> None:
    write_user({"llm_config": {"retry_max_retries": 5}, "context_management": {"enabled": False}})
    loaded = load_effective_config(
        LoadOptions(
            persisted={"context_management": {"trim_threshold_pct": 50}},
            ephemeral={"llm_config": {"timeout": 9}},
        )
    )
    llm = loaded.effective["llm_config"]
    assert llm["retry_max_retries"] == 5
    assert llm["timeout"] == 9
    assert llm["api_key_env"] == "LLM_API_KEY"
    assert llm["retry_backoff_ms"] == [2000, 8000]
    cm = loaded.effective["context_management"]
    assert (cm["enabled"], cm["trim_threshold_pct"], cm["tool_output_keep_rounds"]) == (
        False,
        50,
        7,
    )
    assert loaded.source_of("llm_config.retry_max_retries") == "user"
    assert loaded.source_of("llm_config.timeout") == "ephemeral"
    assert loaded.source_of("llm_config.api_key_env") == "defaults"
    assert loaded.source_of("context_management.trim_threshold_pct") == "persisted"
    assert loaded.source_of("llm_config") == "ephemeral"
    assert loaded.model.context_management.trim_threshold_pct == 50


def test_lists_and_scalars_replace_rather_than_merge() -> None:
    write_user({"llm_config": {"retry_backoff_ms": [1, 2, 3]}})
    loaded = load_effective_config(LoadOptions(persisted={"llm_config": {"retry_backoff_ms": [7]}}))
    assert loaded.effective["llm_config"]["retry_backoff_ms"] == [7]


def test_schema_only_values_report_defaults_and_unknown_paths_raise() -> None:
    loaded = load_effective_config()
    assert loaded.source_of("services.ui.keys.cancel") == "defaults"
    assert loaded.model.services.ui.keys.cancel == "ctrl+c"
    with pytest.raises(KeyError):
        loaded.source_of("no.such.path")


def test_the_effective_snapshot_is_frozen() -> None:
    loaded = load_effective_config(LoadOptions(ephemeral={"models": {"worker": "m"}}))
    with pytest.raises(FrozenConfigError):
        loaded.effective["models"]["worker"] = "other"
    with pytest.raises(FrozenConfigError):
        loaded.effective["llm_config"]["retry_backoff_ms"].append(1)
    with pytest.raises(FrozenConfigError):
        loaded.layers["ephemeral"]["models"].clear()


def test_inputs_are_not_changed_by_loading() -> None:
    persisted = {"llm_config": {"timeout": 3}}
    ephemeral = {"llm_config": {"retry_backoff_ms": [1]}}
    loaded = load_effective_config(LoadOptions(persisted=persisted, ephemeral=ephemeral))
    assert persisted == {"llm_config": {"timeout": 3}}
    assert ephemeral == {"llm_config": {"retry_backoff_ms": [1]}}
    assert loaded.effective["llm_config"]["timeout"] == 3


def test_config_path_replaces_the_user_file(tmp_path: Path) -> None:
    write_user({"default_model": "from-default-path"})
    other = write_user({"default_model": "from-flag"}, tmp_path / "elsewhere.json")
    loaded = load_effective_config(LoadOptions(config_path=other))
    assert loaded.model.default_model == "from-flag"
    assert loaded.user_config_path == other


def test_a_missing_default_file_is_fine_but_a_missing_flag_file_is_not(tmp_path: Path) -> None:
    assert not default_config_path().exists()
    load_effective_config()
    message = load_error(LoadOptions(config_path=tmp_path / "nope.json"))
    assert "nope.json" in message and "does not exist" in message


def test_an_empty_user_file_means_no_settings() -> None:
    write_user("  \n")
    assert load_effective_config().layers["user"] == {}


def test_a_json_syntax_error_names_file_line_and_column() -> None:
    path = write_user('{\n  "index_file": "A.md",\n  "default_model" "m"\n}\n')
    message = load_error()
    assert str(path) in message
    assert "line 3, column 19" in message
    assert "Expecting ':' delimiter" in message
    assert "Traceback" not in message


def test_a_non_object_user_file_is_refused() -> None:
    path = write_user("[1, 2]")
    message = load_error()
    assert str(path) in message
    assert "JSON object" in message and "a list" in message


def test_nan_and_bad_encoding_are_refused(tmp_path: Path) -> None:
    write_user('{"context_management": {"trim_threshold_pct": NaN}}')
    assert "NaN" in load_error()
    binary = tmp_path / "latin1.json"
    binary.write_bytes(b'{"default_model": "caf\xe9"}')
    assert "not UTF-8" in load_error(LoadOptions(config_path=binary))


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    assert "is a directory" in load_error(LoadOptions(config_path=tmp_path))


def test_a_schema_error_names_the_file_the_dotted_path_and_the_rule() -> None:
    path = write_user({"llm_config": {"retry_backoff_ms": [100, -1]}})
    message = load_error()
    assert f"Invalid configuration in {path}:" in message
    assert "llm_config.retry_backoff_ms[1]: must be 0 or more (got -1)" in message


def test_an_unknown_key_in_the_file_gets_a_hint() -> None:
    write_user({"context_management": {"trim_treshold_pct": 70}})
    message = load_error()
    assert "context_management.trim_treshold_pct" in message
    assert "did you mean 'trim_threshold_pct'?" in message


def test_schema_errors_name_the_layer_they_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    message = load_error(LoadOptions(persisted={"tool_step_budget": 0}))
    assert "saved overrides" in message and "/config unset" in message
    assert "tool_step_budget: must be greater than 0" in message

    monkeypatch.setenv("SMITH_API_URL", "localhost:8080")
    message = load_error()
    assert "SMITH_API_URL" in message and "llm_config.api_url" in message

    monkeypatch.delenv("SMITH_API_URL")
    path = write_user({"active_role": "boss"})
    message = load_error(LoadOptions(ephemeral={"tool_step_budget": -1}))
    assert "active_role" in message and str(path) in message
    assert "tool_step_budget" in message and "session overrides" in message


def test_overrides_that_are_not_tables_are_refused() -> None:
    assert "must be a table" in load_error(LoadOptions(persisted=[1]))  # type: ignore[arg-type]


def test_smith_model_is_exposed_but_not_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMITH_MODEL", "env-model")
    loaded = load_effective_config()
    assert loaded.env_model == "env-model"
    assert loaded.model.default_model is None
    assert "default_model" not in loaded.effective


def test_blank_environment_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMITH_API_URL", "  ")
    monkeypatch.setenv("SMITH_MODEL", "")
    loaded = load_effective_config()
    assert loaded.env_model is None
    assert loaded.layers["env"] == {}
    assert not server_configured(loaded)


def test_smith_api_url_configures_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMITH_API_URL", "http://127.0.0.1:8080/v1")
    assert server_configured(load_effective_config())


SECRET = "sk-test-0123456789-secret"


def test_the_api_key_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_effective_config().api_key() is None
    monkeypatch.setenv("LLM_API_KEY", SECRET)
    assert load_effective_config().api_key() == SECRET
    monkeypatch.setenv("OTHER_KEY", "other-secret")
    write_user({"llm_config": {"api_key_env": "OTHER_KEY"}})
    assert load_effective_config().api_key() == "other-secret"


def test_the_api_key_never_shows_in_repr_effective_or_layers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_API_KEY", SECRET)
    monkeypatch.setenv("SMITH_API_URL", "http://127.0.0.1:8080/v1")
    loaded = load_effective_config(LoadOptions(ephemeral={"models": {"default": "m"}}))
    assert loaded.api_key() == SECRET
    for text in (
        repr(loaded),
        str(loaded),
        repr(loaded.effective),
        repr(loaded.layers),
        repr(loaded.model),
        loaded.model.model_dump_json(),
    ):
        assert SECRET not in text
    assert "LLM_API_KEY" in repr(loaded.effective)  # the variable name is fine to show
