"""A turn's settings are the validated config's, and their defaults are the schema's alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pydantic import BaseModel, ValidationError

from smith_tui.config import DEFAULT_TOOL_STEP_BUDGET, SmithConfig, built_in_defaults, check_config
from smith_tui.config.schema import ContextManagement, LLMSection
from smith_tui.config.service_options import DispatchOptions
from smith_tui.engine.retry import RetryPolicy
from smith_tui.engine.turn import CHILD_REPEAT_LIMIT, TOP_REPEAT_LIMIT, TurnSettings
from smith_tui.engine.window import WindowSettings

ChangeDefault = Callable[[type[BaseModel], str, object], None]


@pytest.fixture
def change_default() -> Iterator[ChangeDefault]:
    """Change schema ``Field`` defaults for one test: ``change_default(model, field, value)``."""
    changed: list[tuple[type[BaseModel], str, object]] = []

    def change(model: type[BaseModel], name: str, value: object) -> None:
        info = model.model_fields[name]
        changed.append((model, name, info.default))
        info.default = value
        model.model_rebuild(force=True)

    yield change
    for model, name, old in reversed(changed):
        model.model_fields[name].default = old
        model.model_rebuild(force=True)


def test_a_changed_schema_default_reaches_the_turn_and_the_defaults_layer(
    change_default: ChangeDefault,
) -> None:
    change = change_default
    change(ContextManagement, "tool_output_keep_rounds", 2)
    change(LLMSection, "retry_max_retries", 5)
    change(DispatchOptions, "max_parallel", 9)
    change(DispatchOptions, "child_step_budget", 11)

    config = check_config({})
    top = TurnSettings.from_config(config)
    child = TurnSettings.from_config(config, child=True)

    assert top.window.tool_output_keep_rounds == 2
    assert top.retry.transport_max == 5
    assert top.max_parallel == child.max_parallel == 9
    assert child.step_budget == 11
    layer = built_in_defaults()
    assert layer["context_management"]["tool_output_keep_rounds"] == 2
    assert layer["llm_config"]["retry_max_retries"] == 5


def test_the_defaults_of_a_turn_are_the_schemas() -> None:
    schema = SmithConfig()
    top = TurnSettings.from_config(check_config({}))
    child = TurnSettings.from_config(check_config({}), child=True)

    assert top.window.model_dump() == schema.context_management.model_dump()
    assert WindowSettings().model_dump() == schema.context_management.model_dump()
    assert top.retry == RetryPolicy() == RetryPolicy.from_config(schema)
    assert RetryPolicy().transport_backoff_ms == tuple(schema.llm_config.retry_backoff_ms)
    assert RetryPolicy().empty_backoff_ms == tuple(schema.empty_response_retry_backoff_ms)
    assert top.max_parallel == TurnSettings().max_parallel == schema.services.dispatch.max_parallel
    assert (top.step_budget, top.repeat_limit) == (DEFAULT_TOOL_STEP_BUDGET, TOP_REPEAT_LIMIT)
    assert child.step_budget == schema.services.dispatch.child_step_budget
    assert child.repeat_limit == CHILD_REPEAT_LIMIT


def test_every_setting_a_turn_reads_comes_from_the_config() -> None:
    config = check_config(
        {
            "tool_step_budget": 17,
            "empty_response_retry_max_retries": 0,
            "empty_response_retry_backoff_ms": [5],
            "llm_config": {
                "retry_max_retries": 4,
                "retry_backoff_ms": [1, 2, 3],
                "stream_retry_after_output": True,
            },
            "context_management": {
                "enabled": False,
                "tool_output_keep_rounds": 1,
                "tool_output_elide_over_chars": 10,
                "trim_threshold_pct": 50,
                "compact_threshold_pct": 40,
                "output_reserve_pct": 5,
            },
            "services": {"dispatch": {"max_parallel": 1, "child_step_budget": 2}},
        }
    )
    top = TurnSettings.from_config(config)

    assert top.window == WindowSettings(
        enabled=False,
        tool_output_keep_rounds=1,
        tool_output_elide_over_chars=10,
        trim_threshold_pct=50,
        compact_threshold_pct=40,
        output_reserve_pct=5,
    )
    assert top.retry == RetryPolicy(
        transport_max=4,
        transport_backoff_ms=(1, 2, 3),
        empty_max=0,
        empty_backoff_ms=(5,),
        retry_after_output=True,
    )
    assert (top.step_budget, top.max_parallel) == (17, 1)
    assert TurnSettings.from_config(config, child=True).step_budget == 2


def test_turn_settings_are_frozen() -> None:
    settings = TurnSettings.from_config(check_config({}))
    with pytest.raises(ValidationError, match="frozen"):
        settings.max_parallel = 8  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        settings.window.tool_output_keep_rounds = 0  # type: ignore[misc]
