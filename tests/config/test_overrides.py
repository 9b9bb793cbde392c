"""Runtime overrides: allowlist, coercion, validate-before-persist, unset and get."""

from __future__ import annotations

import re
from typing import Any

import pytest

from smith_tui.config import (
    LoadOptions,
    OverrideError,
    coerce_value,
    get_value,
    is_overridable_path,
    list_overridable_paths,
    load_effective_config,
    set_override,
    unset_override,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("80", 80),
        ("false", False),
        ("[2000,8000]", [2000, 8000]),
        ("openrouter/qwen/qwen3.6-27b", "openrouter/qwen/qwen3.6-27b"),
        ("2.5", 2.5),
        ("null", None),
        ('"quoted"', "quoted"),
        ("NaN", "NaN"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        (7, 7),
    ],
)
def test_coercion_is_json_first_with_string_fallback(raw: Any, expected: Any) -> None:
    value = coerce_value(raw)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("path", "raw", "expected"),
    [
        (
            "context_management.trim_threshold_pct",
            "80",
            {"context_management": {"trim_threshold_pct": 80}},
        ),
        ("context_management.enabled", "false", {"context_management": {"enabled": False}}),
        (
            "llm_config.retry_backoff_ms",
            "[2000,8000]",
            {"llm_config": {"retry_backoff_ms": [2000, 8000]}},
        ),
        (
            "models.worker",
            "openrouter/qwen/qwen3.6-27b",
            {"models": {"worker": "openrouter/qwen/qwen3.6-27b"}},
        ),
        ("default_model", "qwen3", {"default_model": "qwen3"}),
        ("default_model", "123", {"default_model": "123"}),
        ("index_file", "docs/INDEX.md", {"index_file": "docs/INDEX.md"}),
        ("active_role", "orchestrator", {"active_role": "orchestrator"}),
        ("tool_step_budget", "25", {"tool_step_budget": 25}),
        ("tool_step_budget", "null", {"tool_step_budget": None}),
        (
            "llm_config.api_url",
            "http://127.0.0.1:8080/v1",
            {"llm_config": {"api_url": "http://127.0.0.1:8080/v1"}},
        ),
        ("llm_config.stream_stall_timeout", "45", {"llm_config": {"stream_stall_timeout": 45}}),
        (
            "llm_config.stream_retry_after_output",
            "true",
            {"llm_config": {"stream_retry_after_output": True}},
        ),
        ("empty_response_retry_max_retries", "0", {"empty_response_retry_max_retries": 0}),
        ("empty_response_retry_backoff_ms", "[10]", {"empty_response_retry_backoff_ms": [10]}),
        (" tool_step_budget ", "3", {"tool_step_budget": 3}),
    ],
)
def test_set_override_coerces_and_returns_a_new_patch(
    path: str, raw: str, expected: dict[str, Any]
) -> None:
    patch: dict[str, Any] = {}
    assert set_override(patch, path, raw) == expected
    assert patch == {}


def test_set_keeps_other_leaves_and_replaces_the_same_leaf() -> None:
    patch = set_override({}, "context_management.enabled", "false")
    patch = set_override(patch, "context_management.tool_output_keep_rounds", "3")
    patch = set_override(patch, "context_management.enabled", "true")
    assert patch == {"context_management": {"enabled": True, "tool_output_keep_rounds": 3}}


@pytest.mark.parametrize(
    ("path", "raw", "message"),
    [
        ("context_management.trim_threshold_pct", "0", "must be greater than 0"),
        ("context_management.trim_threshold_pct", "101", "must be 100 or less"),
        ("context_management.enabled", "maybe", "true or false"),
        ("llm_config.retry_backoff_ms", "[]", "non-empty list"),
        ("llm_config.retry_backoff_ms", "[1,-5]", "retry_backoff_ms[1]: must be 0 or more"),
        ("llm_config.retry_max_retries", "-1", "0 or more"),
        ("llm_config.timeout", "0", "greater than 0"),
        ("llm_config.api_url", "localhost", "http://"),
        ("tool_step_budget", "0", "greater than 0"),
        ("tool_step_budget", "many", "whole number"),
        ("active_role", "worker", "'direct' or 'orchestrator'"),
        ("index_file", "../outside.md", "no '..' segment"),
        ("index_file", "/abs.md", "no leading '/'"),
        ("models.worker", '""', "non-empty"),
        ("tool_step_budget", "true", "whole number"),
        ("llm_config.retry_backoff_ms", "2000", "must be a list"),
    ],
)
def test_an_invalid_value_is_refused_and_nothing_is_written(
    path: str, raw: str, message: str
) -> None:
    patch = {"models": {"default": "m"}}
    with pytest.raises(OverrideError) as caught:
        set_override(patch, path, raw)
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"Cannot set {path}")
    assert patch == {"models": {"default": "m"}}


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        (
            "context_management.trim_treshold_pct",
            "did you mean 'context_management.trim_threshold_pct'?",
        ),
        ("tool_step_budjet", "did you mean 'tool_step_budget'?"),
        ("llm_config.retry_max_retrie", "did you mean 'llm_config.retry_max_retries'?"),
        ("services.ui.keys.cancel", "cannot be set at runtime"),
        ("services", "cannot be set at runtime"),
        ("llm_config", "cannot be set at runtime"),
        ("models", "models.<key>"),
        ("models.a.b", "models.<key>"),
        ("models.", "models.<key>"),
    ],
)
def test_paths_off_the_allowlist_are_refused_with_a_hint(path: str, hint: str) -> None:
    assert not is_overridable_path(path)
    with pytest.raises(OverrideError) as caught:
        set_override({}, path, "1")
    assert hint in str(caught.value)


@pytest.mark.parametrize(
    "path",
    ["llm_config.api_key_env", "llm_config.api_key", "api_key", "models_api_key"],
)
def test_api_keys_can_never_be_set(path: str) -> None:
    with pytest.raises(OverrideError) as caught:
        set_override({}, path, "sk-secret")
    assert "secrets are never stored" in str(caught.value)
    assert "sk-secret" not in str(caught.value)


def test_the_allowlist_is_exactly_the_seed_set() -> None:
    paths = list_overridable_paths(model_keys=())
    assert paths == sorted(
        [
            "default_model",
            "index_file",
            "active_role",
            "tool_step_budget",
            "auto_resume",
            "llm_config.api_url",
            "llm_config.retry_max_retries",
            "llm_config.retry_backoff_ms",
            "llm_config.stream_retry_after_output",
            "llm_config.timeout",
            "llm_config.connect_timeout",
            "llm_config.send_timeout",
            "llm_config.recv_timeout",
            "llm_config.stream_stall_timeout",
            "empty_response_retry_max_retries",
            "empty_response_retry_backoff_ms",
            "context_management.enabled",
            "context_management.tool_output_keep_rounds",
            "context_management.tool_output_elide_over_chars",
            "context_management.trim_threshold_pct",
            "context_management.compact_threshold_pct",
            "context_management.output_reserve_pct",
            "budget.turn_tokens",
            "budget.conversation_tokens",
            "budget.turn_cost_usd",
            "budget.conversation_cost_usd",
            "sandbox.mode",
            "sandbox.network",
            "sandbox.writable",
            "sandbox.git_writable",
            "permissions.mode",
            "permissions.allow",
            "permissions.deny",
            "routing.auto",
            "notifications.mode",
            "notifications.after_s",
            "services.ui.vim",
        ]
    )
    assert all(is_overridable_path(path) for path in paths)
    assert is_overridable_path("models.anything-goes")


def test_completion_lists_model_keys() -> None:
    paths = list_overridable_paths()
    for key in ("default", "direct", "orchestrator", "worker", "explorer"):
        assert f"models.{key}" in paths
    assert "models.mine" in list_overridable_paths(["mine", "", "a.b"])
    assert "models.a.b" not in list_overridable_paths(["a.b"])


def test_unset_removes_the_leaf_and_prunes_empty_tables() -> None:
    patch = set_override({}, "context_management.enabled", "false")
    patch = set_override(patch, "models.worker", "w")
    patch = set_override(patch, "models.explorer", "e")
    before = {key: dict(value) for key, value in patch.items()}
    patch2 = unset_override(patch, "context_management.enabled")
    assert patch2 == {"models": {"worker": "w", "explorer": "e"}}
    patch3 = unset_override(patch2, "models.worker")
    assert patch3 == {"models": {"explorer": "e"}}
    assert unset_override(patch3, "models.explorer") == {}
    assert patch == before


def test_unset_of_an_allowed_path_that_is_not_set_is_a_no_op() -> None:
    assert unset_override({"default_model": "m"}, "tool_step_budget") == {"default_model": "m"}


def test_unset_refuses_unknown_paths_but_removes_stale_ones() -> None:
    with pytest.raises(OverrideError, match="did you mean 'tool_step_budget'"):
        unset_override({}, "tool_step_budgt")
    stale = {"services": {"ui": {"keys": {"quit": "q"}}}, "default_model": "m"}
    assert unset_override(stale, "services.ui.keys.quit") == {"default_model": "m"}


def test_an_override_patch_loads_as_the_persisted_layer() -> None:
    patch = set_override({}, "llm_config.retry_backoff_ms", "[1,2]")
    patch = set_override(patch, "models.worker", "openrouter/qwen/qwen3.6-27b")
    loaded = load_effective_config(LoadOptions(persisted=patch))
    assert loaded.model.llm_config.retry_backoff_ms == [1, 2]
    assert loaded.model.models["worker"] == "openrouter/qwen/qwen3.6-27b"
    assert loaded.source_of("models.worker") == "persisted"


def test_get_value_reads_effective_and_schema_values() -> None:
    loaded = load_effective_config(LoadOptions(persisted={"models": {"worker": "w"}}))
    assert get_value(loaded, "models.worker") == "w"
    assert get_value(loaded.effective, "llm_config.retry_backoff_ms") == [2000, 8000]
    assert get_value(loaded, "services.ui.keys.palette") == "ctrl+p"
    assert get_value(loaded, "tool_step_budget") is None
    assert get_value(loaded, "models.explorer") is None
    assert get_value(loaded.effective, "services.dispatch.max_parallel") is None
    with pytest.raises(
        OverrideError, match=re.escape("did you mean 'llm_config.retry_max_retries'")
    ):
        get_value(loaded, "llm_config.retry_max_retrie")
    with pytest.raises(OverrideError, match="Unknown setting 'nonsense'"):
        get_value(loaded.effective, "nonsense")
