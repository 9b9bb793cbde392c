"""Every rule of the schema, accepted and rejected, on top of the built-in defaults."""

from __future__ import annotations

from typing import Any

import pytest

from smith_tui.config import (
    DEFAULT_TRANSPORT_TIMEOUTS,
    DEFAULTS,
    ConfigError,
    SmithConfig,
    check_config,
    deep_merge,
    list_overridable_paths,
    server_configured,
    settings_reference,
)


def validate(patch: dict[str, Any]) -> SmithConfig:
    return check_config(deep_merge(DEFAULTS, patch))


def rejection(patch: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        validate(patch)
    return caught.value


ACCEPTED = [
    {"default_model": "qwen3"},
    {"default_model": None},
    {"index_file": "docs/INDEX.md"},
    {"index_file": "a..b/notes.md"},
    {"active_role": "direct"},
    {"active_role": "orchestrator"},
    {"active_role": None},
    {"tool_step_budget": 1},
    {"tool_step_budget": None},
    {"models": {"default": "m1", "worker": "openrouter/qwen/qwen3.6-27b"}},
    {"services": None},
    {"services": {"role": {"anything": [1, 2]}, "prompt": {}}},
    {"services": {"tool": {"web_fetch": {"max_bytes": 10}}}},
    {"llm_config": {"api_url": "http://127.0.0.1:8080/v1"}},
    {"llm_config": {"api_url": "https://api.example.com/v1"}},
    {"llm_config": {"api_key_env": "MY_KEY_2"}},
    {"llm_config": {"api_key_env": None}},
    {"llm_config": {"retry_max_retries": 0}},
    {"llm_config": {"retry_backoff_ms": [0, 1.5]}},
    {"llm_config": {"stream_retry_after_output": True}},
    {"llm_config": {"timeout": 0.5, "connect_timeout": 1, "send_timeout": 2}},
    {"llm_config": {"recv_timeout": 3, "stream_stall_timeout": None}},
    {"empty_response_retry_max_retries": 0},
    {"empty_response_retry_backoff_ms": [0]},
    {"context_management": None},
    {"context_management": {"enabled": False, "tool_output_keep_rounds": 0}},
    {"context_management": {"tool_output_elide_over_chars": 0, "trim_threshold_pct": 100}},
    {"context_management": {"trim_threshold_pct": 0.5}},
]


@pytest.mark.parametrize("patch", ACCEPTED, ids=lambda p: str(p)[:60])
def test_accepted(patch: dict[str, Any]) -> None:
    validate(patch)


REJECTED = [
    ({"default_model": ""}, "default_model", "non-empty"),
    ({"default_model": "   "}, "default_model", "non-empty"),
    ({"default_model": 5}, "default_model", "must be a string"),
    ({"index_file": "/etc/passwd"}, "index_file", "no leading '/'"),
    ({"index_file": "\\share\\x.md"}, "index_file", "no leading '/'"),
    ({"index_file": "../INDEX.md"}, "index_file", "no '..' segment"),
    ({"index_file": "docs/../../x.md"}, "index_file", "no '..' segment"),
    ({"index_file": "docs\\..\\x.md"}, "index_file", "no '..' segment"),
    ({"index_file": "C:INDEX.md"}, "index_file", "drive prefix"),
    ({"index_file": "c:\\x.md"}, "index_file", "drive prefix"),
    ({"index_file": ""}, "index_file", "non-empty"),
    ({"active_role": "worker"}, "active_role", "'direct' or 'orchestrator'"),
    ({"tool_step_budget": 0}, "tool_step_budget", "greater than 0"),
    ({"tool_step_budget": -3}, "tool_step_budget", "greater than 0"),
    ({"tool_step_budget": 2.5}, "tool_step_budget", "whole number"),
    ({"tool_step_budget": "5"}, "tool_step_budget", "whole number"),
    ({"tool_step_budget": True}, "tool_step_budget", "whole number"),
    ({"models": {"": "m"}}, "models", "keys must be non-empty"),
    ({"models": {"worker": ""}}, "models.worker", "non-empty"),
    ({"models": {"worker": 7}}, "models.worker", "must be a string"),
    ({"models": ["m"]}, "models", "table"),
    ({"services": 3}, "services", "table"),
    ({"services": {"role": "x"}}, "services.role", "table"),
    ({"llm_config": "x"}, "llm_config", "table"),
    ({"llm_config": {"api_url": "127.0.0.1:8080"}}, "llm_config.api_url", "http://"),
    ({"llm_config": {"api_url": "ftp://host/v1"}}, "llm_config.api_url", "http://"),
    ({"llm_config": {"api_url": ""}}, "llm_config.api_url", "non-empty"),
    ({"llm_config": {"api_key_env": ""}}, "llm_config.api_key_env", "non-empty"),
    ({"llm_config": {"api_key_env": "1BAD"}}, "llm_config.api_key_env", "environment variable"),
    ({"llm_config": {"retry_max_retries": -1}}, "llm_config.retry_max_retries", "0 or more"),
    ({"llm_config": {"retry_max_retries": 1.5}}, "llm_config.retry_max_retries", "whole"),
    ({"llm_config": {"retry_backoff_ms": []}}, "llm_config.retry_backoff_ms", "non-empty list"),
    ({"llm_config": {"retry_backoff_ms": [1, -1]}}, "llm_config.retry_backoff_ms[1]", "0 or more"),
    ({"llm_config": {"retry_backoff_ms": 100}}, "llm_config.retry_backoff_ms", "list"),
    ({"llm_config": {"retry_backoff_ms": ["1"]}}, "llm_config.retry_backoff_ms[0]", "number"),
    (
        {"llm_config": {"stream_retry_after_output": "yes"}},
        "llm_config.stream_retry_after_output",
        "true or false",
    ),
    (
        {"llm_config": {"stream_retry_after_output": 1}},
        "llm_config.stream_retry_after_output",
        "true or false",
    ),
    ({"llm_config": {"timeout": 0}}, "llm_config.timeout", "greater than 0"),
    ({"llm_config": {"connect_timeout": -1}}, "llm_config.connect_timeout", "greater than 0"),
    ({"llm_config": {"send_timeout": "5"}}, "llm_config.send_timeout", "number"),
    ({"llm_config": {"recv_timeout": 0}}, "llm_config.recv_timeout", "greater than 0"),
    (
        {"llm_config": {"stream_stall_timeout": float("inf")}},
        "llm_config.stream_stall_timeout",
        "finite",
    ),
    ({"empty_response_retry_max_retries": -1}, "empty_response_retry_max_retries", "0 or more"),
    ({"empty_response_retry_backoff_ms": []}, "empty_response_retry_backoff_ms", "non-empty list"),
    ({"empty_response_retry_backoff_ms": [-5]}, "empty_response_retry_backoff_ms[0]", "0 or more"),
    ({"context_management": []}, "context_management", "table"),
    ({"context_management": {"enabled": "no"}}, "context_management.enabled", "true or false"),
    (
        {"context_management": {"tool_output_keep_rounds": -1}},
        "context_management.tool_output_keep_rounds",
        "0 or more",
    ),
    (
        {"context_management": {"tool_output_elide_over_chars": -1}},
        "context_management.tool_output_elide_over_chars",
        "0 or more",
    ),
    (
        {"context_management": {"trim_threshold_pct": 0}},
        "context_management.trim_threshold_pct",
        "greater than 0",
    ),
    (
        {"context_management": {"trim_threshold_pct": 100.5}},
        "context_management.trim_threshold_pct",
        "100 or less",
    ),
    ({"services": {"ui": {"keys": {"quit": ""}}}}, "services.ui.keys.quit", "non-empty"),
    (
        {"services": {"ui": {"keys": {"permission_mode": " "}}}},
        "services.ui.keys.permission_mode",
        "non-empty",
    ),
    (
        {"services": {"dispatch": {"max_parallel": 0}}},
        "services.dispatch.max_parallel",
        "greater than 0",
    ),
    (
        {"services": {"tool": {"bash": {"default_timeout_s": 900}}}},
        "services.tool.bash",
        "must not exceed",
    ),
    (
        {"services": {"tool": {"web_search": {"depth": "wide"}}}},
        "services.tool.web_search.depth",
        "'standard' or 'deep'",
    ),
    (
        {"services": {"tool": {"web_search": {"endpoint": "linkup"}}}},
        "services.tool.web_search.endpoint",
        "http://",
    ),
    ({"services": {"tool": {"note": 5}}}, "services.tool.note", "must be a table"),
    (
        {"services": {"tool": {"web_fetch": {"allow_private": "yes"}}}},
        "services.tool.web_fetch.allow_private",
        "must be true or false",
    ),
    (
        {"services": {"observe": {"retention_days": 0}}},
        "services.observe.retention_days",
        "greater than 0",
    ),
]


@pytest.mark.parametrize(("patch", "path", "rule"), REJECTED, ids=lambda v: str(v)[:50])
def test_rejected(patch: dict[str, Any], path: str, rule: str) -> None:
    error = rejection(patch)
    assert [p.path for p in error.problems] == [path]
    assert rule in error.problems[0].rule


@pytest.mark.parametrize(
    ("patch", "path", "hint"),
    [
        ({"defualt_model": "m"}, "defualt_model", "did you mean 'default_model'?"),
        (
            {"llm_config": {"retry_max_retrie": 1}},
            "llm_config.retry_max_retrie",
            "'retry_max_retries'",
        ),
        ({"context_management": {"enable": True}}, "context_management.enable", "'enabled'"),
        ({"services": {"uii": {}}}, "services.uii", "did you mean 'ui'?"),
        ({"services": {"ui": {"keys": {"cancle": "x"}}}}, "services.ui.keys.cancle", "'cancel'"),
        (
            {"services": {"tool": {"bash": {"max_timeout": 5}}}},
            "services.tool.bash.max_timeout",
            "'max_timeout_s'",
        ),
        ({"zzzz": 1}, "zzzz", "known settings here"),
    ],
)
def test_unknown_keys_are_rejected_with_a_hint(patch: dict[str, Any], path: str, hint: str) -> None:
    error = rejection(patch)
    assert error.problems[0].path == path
    assert "unknown setting" in error.problems[0].rule
    assert hint in error.problems[0].rule


def test_an_api_key_in_the_config_is_refused_without_echoing_it() -> None:
    error = rejection({"llm_config": {"api_key": "sk-very-secret"}})
    assert error.problems[0].path == "llm_config.api_key"
    assert "environment variable" in str(error)
    assert "sk-very-secret" not in str(error)


def test_a_key_pasted_into_api_key_env_is_not_echoed() -> None:
    error = rejection({"llm_config": {"api_key_env": "sk-abc-123"}})
    assert "NAME of an environment variable" in str(error)
    assert "sk-abc-123" not in str(error)


def test_every_problem_is_reported_at_once() -> None:
    error = rejection({"tool_step_budget": 0, "active_role": "x", "models": {"a": ""}})
    assert {p.path for p in error.problems} == {"tool_step_budget", "active_role", "models.a"}


def test_defaults_validate_and_fill_the_modelled_service_options() -> None:
    model = validate({})
    assert model.index_file == "INDEX.md"
    assert model.llm_config.api_url is None
    assert model.llm_config.api_key_env == "LLM_API_KEY"
    assert model.llm_config.retry_backoff_ms == [2000, 8000]
    assert model.role == "direct"
    keys = model.services.ui.keys
    assert (keys.cancel, keys.pager, keys.inspect, keys.palette, keys.quit) == (
        "ctrl+c",
        "alt+h",
        "alt+i",
        "ctrl+p",
        "ctrl+q",
    )
    assert keys.permission_mode == "f4"
    assert model.services.dispatch.max_parallel == 3
    web = model.services.tool.web_search
    assert web.api_key_env == "LINKUP_API_KEY"
    assert web.endpoint.startswith("https://")
    assert model.services.tool.bash.default_timeout_s == 120
    assert model.services.tool.bash.max_timeout_s == 600
    assert model.services.observe.retention_days == 14


def test_the_loader_defaults_are_exactly_the_seed_table() -> None:
    assert dict(DEFAULTS) == {
        "index_file": "INDEX.md",
        "llm_config": {
            "api_key_env": "LLM_API_KEY",
            "retry_max_retries": 2,
            "retry_backoff_ms": [2000, 8000],
            "stream_retry_after_output": False,
        },
        "empty_response_retry_max_retries": 2,
        "empty_response_retry_backoff_ms": [500, 1000],
        "context_management": {
            "enabled": True,
            "tool_output_keep_rounds": 7,
            "tool_output_elide_over_chars": 1024,
            "trim_threshold_pct": 90,
            "compact_threshold_pct": 85,
            "output_reserve_pct": 10,
        },
    }


def test_transport_timeouts_fall_back_to_the_client_defaults() -> None:
    assert validate({}).llm_config.transport_timeouts() == {
        "timeout": 600,
        "connect_timeout": 10,
        "send_timeout": 30,
        "recv_timeout": 120,
        "stream_stall_timeout": 120,
    }
    assert DEFAULT_TRANSPORT_TIMEOUTS["timeout"] == 600
    timeouts = validate({"llm_config": {"recv_timeout": 5}}).llm_config.transport_timeouts()
    assert timeouts["recv_timeout"] == 5
    assert timeouts["connect_timeout"] == 10


def test_active_role_wins_over_the_direct_fallback() -> None:
    assert validate({"active_role": "orchestrator"}).role == "orchestrator"


def test_server_configured_reads_api_url() -> None:
    assert not server_configured(validate({}))
    assert server_configured(validate({"llm_config": {"api_url": "http://127.0.0.1:8080/v1"}}))
    assert server_configured({"llm_config": {"api_url": "http://h/v1"}})
    assert not server_configured({})
    with pytest.raises(TypeError):
        server_configured(42)


def test_every_setting_is_documented() -> None:
    def walk(model: type) -> list[str]:
        missing = []
        for name, info in model.model_fields.items():
            if not (info.description or "").strip():
                missing.append(f"{model.__name__}.{name}")
            annotation = info.annotation
            for candidate in (annotation, *getattr(annotation, "__args__", ())):
                if isinstance(candidate, type) and hasattr(candidate, "model_fields"):
                    missing.extend(walk(candidate))
        return missing

    assert walk(SmithConfig) == []


def test_the_settings_reference_lists_documented_leaves() -> None:
    docs = {doc.path: doc for doc in settings_reference()}
    assert docs["services.ui.keys.cancel"].default == '"ctrl+c"'
    assert not docs["services.ui.keys.cancel"].overridable
    assert docs["llm_config.api_url"].default == "absent"
    assert docs["llm_config.api_url"].overridable
    assert not docs["llm_config.api_key_env"].overridable
    assert docs["models.<key>"].overridable
    assert docs["context_management.trim_threshold_pct"].default == "90"
    assert docs["context_management.compact_threshold_pct"].default == "85"
    assert docs["context_management.compact_threshold_pct"].overridable
    assert all(doc.description for doc in docs.values())
    overridable = {path for path, doc in docs.items() if doc.overridable}
    assert overridable == set(list_overridable_paths(model_keys=())) | {"models.<key>"}


def test_tool_options_are_found_by_tool_name() -> None:
    tools = validate(
        {"services": {"tool": {"web_fetch": {"max_bytes": 10}, "bash": {"max_timeout_s": 900}}}}
    ).services.tool
    # Typed tables (the dict-returning options_for is gone: tools read attributes).
    assert tools.web_fetch.model_dump() == {
        "timeout": 30.0,
        "max_bytes": 10,
        "max_output_chars": 30_000,
        "allow_private": False,
    }
    note = validate({"services": {"tool": {"note": {"max_output_chars": 9}}}}).services.tool
    assert note.table("note").model_dump(exclude_none=True) == {"max_output_chars": 9}
    assert tools.bash.model_dump(exclude_none=True) == {
        "default_timeout_s": 120,
        "max_timeout_s": 900,
    }
    assert tools.web_search.max_results == 5
    assert tools.table("read").model_dump(exclude_none=True) == {}
