"""The layers as pydantic-settings sources: only they feed the config, one load at a time.

pydantic-settings on its own reads every environment variable named like a setting, a
``.env`` file and a secrets folder; the config must see none of them, only its five layers.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from smith_tui.config import LoadOptions, SmithConfig, default_config_path, load_effective_config


def test_the_model_is_built_by_pydantic_settings_from_the_layers() -> None:
    loaded = load_effective_config(LoadOptions(ephemeral={"default_model": "flag-model"}))
    assert isinstance(loaded.model, SmithConfig)
    assert isinstance(loaded.model, BaseSettings)
    assert loaded.model.default_model == "flag-model"


def test_variables_named_like_settings_and_a_dotenv_file_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What pydantic-settings' own sources would pick up (names are case-insensitive there).
    monkeypatch.setenv("DEFAULT_MODEL", "from-env")
    monkeypatch.setenv("default_model", "from-env")
    monkeypatch.setenv("INDEX_FILE", "ENV.md")
    monkeypatch.setenv("LLM_CONFIG", json.dumps({"api_url": "http://env-table/v1"}))
    (tmp_path / ".env").write_text("DEFAULT_MODEL=from-dotenv\nTOOL_STEP_BUDGET=3\n")
    monkeypatch.chdir(tmp_path)
    loaded = load_effective_config()
    assert loaded.model.default_model is None
    assert loaded.model.index_file == "INDEX.md"
    assert loaded.model.tool_step_budget is None
    assert loaded.model.llm_config.api_url is None
    assert loaded.source_of("index_file") == "defaults"

    # Control: the same variables through pydantic-settings' default sources are read.
    class Naive(BaseSettings):
        default_model: str | None = None
        tool_step_budget: int | None = None

    assert Naive().default_model == "from-env"
    assert Naive(_env_file=".env").tool_step_budget == 3


def test_loads_in_parallel_threads_each_see_their_own_layers() -> None:
    path = default_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"llm_config": {"api_url": "http://user/v1"}}))
    start = threading.Barrier(8)
    results: dict[int, tuple[str | None, str]] = {}

    def load(index: int) -> None:
        start.wait()
        for _ in range(20):
            loaded = load_effective_config(LoadOptions(ephemeral={"default_model": f"m{index}"}))
            results[index] = (loaded.model.default_model, loaded.source_of("default_model"))

    threads = [threading.Thread(target=load, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == {i: (f"m{i}", "ephemeral") for i in range(8)}


def test_a_patch_merges_key_by_key_and_is_left_as_it_was() -> None:
    persisted = {"services": {"ui": {"keys": {"cancel": "ctrl+g"}}}}
    loaded = load_effective_config(LoadOptions(persisted=persisted))
    assert loaded.model.services.ui.keys.cancel == "ctrl+g"
    assert persisted == {"services": {"ui": {"keys": {"cancel": "ctrl+g"}}}}
    assert loaded.source_of("services.ui.keys.cancel") == "persisted"
    assert loaded.source_of("services.ui.keys") == "persisted"
