"""Each default lives once, in the schema: the defaults layer and the reference follow it."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from smith_tui.config import (
    BUILT_IN_PATHS,
    DEFAULTS,
    LoadOptions,
    SmithConfig,
    built_in_defaults,
    load_effective_config,
    settings_reference,
)
from smith_tui.config.tree import leaf_paths, lookup, split_path
from smith_tui.config.validation import show_value

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "DESIGN.md"


def test_the_defaults_layer_follows_a_changed_schema_default() -> None:
    class Changed(SmithConfig):
        index_file: str = Field("NOTES.md")

    layer = built_in_defaults(Changed)

    assert layer["index_file"] == "NOTES.md"
    assert DEFAULTS["index_file"] == "INDEX.md"
    assert {k: v for k, v in layer.items() if k != "index_file"} == {
        k: v for k, v in DEFAULTS.items() if k != "index_file"
    }


def test_every_built_in_default_is_the_schema_default_the_reference_shows() -> None:
    schema = SmithConfig().model_dump(mode="json")
    reference = {doc.path: doc.default for doc in settings_reference()}
    paths = leaf_paths(DEFAULTS)

    for path in paths:
        value = lookup(DEFAULTS, split_path(path))
        assert value == lookup(schema, split_path(path)), path
        assert reference[path] == show_value(value), path
    for path in BUILT_IN_PATHS:
        assert any(leaf == path or leaf.startswith(f"{path}.") for leaf in paths), path


def test_a_fresh_load_reports_the_built_in_values_as_from_the_defaults_layer() -> None:
    loaded = load_effective_config(LoadOptions())
    for path in leaf_paths(DEFAULTS):
        assert loaded.source_of(path) == "defaults", path


def test_the_design_table_states_the_schema_defaults() -> None:
    text = " ".join(DESIGN.read_text(encoding="utf-8").split())
    table = text[text.index("Built-in defaults:") : text.index("### 5.4")]
    cm = DEFAULTS["context_management"]
    llm = DEFAULTS["llm_config"]

    assert f"`index_file` `{DEFAULTS['index_file']}`" in table
    assert ("no retry after output" in table) is not llm["stream_retry_after_output"]
    assert f"`llm_config.api_key_env` `{llm['api_key_env']}`" in table
    words = {1: "one", 2: "two", 3: "three"}
    assert f"{words[llm['retry_max_retries']]} transport retries" in table
    assert f"{words[DEFAULTS['empty_response_retry_max_retries']]} empty-answer retries" in table
    backoff = " and ".join(f"{ms / 1000:g} s" for ms in llm["retry_backoff_ms"])
    assert f"backoffs of {backoff}" in table
    empty = " and ".join(f"{ms / 1000:g} s" for ms in DEFAULTS["empty_response_retry_backoff_ms"])
    assert f"after {empty}" in table
    assert f"last {cm['tool_output_keep_rounds']} rounds" in table
    assert f"over {cm['tool_output_elide_over_chars']:,} characters" in table
    assert f"above {cm['compact_threshold_pct']:g}%" in table
    assert f"above {cm['trim_threshold_pct']:g}%" in table
    assert f"{cm['output_reserve_pct']:g}% of the window" in table
