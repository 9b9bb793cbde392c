"""Configuration: built-in defaults, the schema, the layered loader and runtime overrides.

This package imports nothing else of smith. Its names load on first use (PEP 562), so
``smith_tui.config.modes`` or ``.layers`` can be imported without the schema and pydantic
(about 0.1 s of every start). Typical use::

    loaded = load_effective_config(LoadOptions(config_path=args.config,
                                               persisted=store_patch,
                                               ephemeral=flag_overrides))
    loaded.model.llm_config.transport_timeouts()   # typed view
    loaded.effective                                # deep-frozen snapshot for a turn
    loaded.source_of("llm_config.api_url")          # "defaults" | "user" | "env" | ...
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from smith_tui.config.defaults import (
        DEFAULT_ACTIVE_ROLE,
        DEFAULT_API_KEY_ENV,
        DEFAULT_TOOL_STEP_BUDGET,
        DEFAULT_TRANSPORT_TIMEOUTS,
        EXAMPLE_API_URL,
    )
    from smith_tui.config.environment import API_URL_VARIABLE, MODEL_VARIABLE
    from smith_tui.config.errors import ConfigError, ConfigProblem, FrozenConfigError, OverrideError
    from smith_tui.config.frozen import FrozenDict, FrozenList, freeze, thaw
    from smith_tui.config.layers import LAYER_NAMES
    from smith_tui.config.loader import EffectiveConfig, LoadOptions, load_effective_config
    from smith_tui.config.locations import (
        config_dir,
        data_dir,
        default_config_path,
        default_db_path,
    )
    from smith_tui.config.overrides import (
        coerce_value,
        get_value,
        is_overridable_path,
        list_overridable_paths,
        set_override,
        unset_override,
    )
    from smith_tui.config.reference import SettingDoc, settings_reference
    from smith_tui.config.schema import (
        BUILT_IN_PATHS,
        DEFAULTS,
        SmithConfig,
        built_in_defaults,
        server_configured,
    )
    from smith_tui.config.tree import deep_merge
    from smith_tui.config.validation import check_config

_HOMES: dict[str, str] = {
    "API_URL_VARIABLE": "environment",
    "BUILT_IN_PATHS": "schema",
    "ConfigError": "errors",
    "ConfigProblem": "errors",
    "DEFAULTS": "schema",
    "DEFAULT_ACTIVE_ROLE": "defaults",
    "DEFAULT_API_KEY_ENV": "defaults",
    "DEFAULT_TOOL_STEP_BUDGET": "defaults",
    "DEFAULT_TRANSPORT_TIMEOUTS": "defaults",
    "EXAMPLE_API_URL": "defaults",
    "EffectiveConfig": "loader",
    "FrozenConfigError": "errors",
    "FrozenDict": "frozen",
    "FrozenList": "frozen",
    "LAYER_NAMES": "layers",
    "LoadOptions": "loader",
    "MODEL_VARIABLE": "environment",
    "OverrideError": "errors",
    "SettingDoc": "reference",
    "SmithConfig": "schema",
    "built_in_defaults": "schema",
    "check_config": "validation",
    "coerce_value": "overrides",
    "config_dir": "locations",
    "data_dir": "locations",
    "deep_merge": "tree",
    "default_config_path": "locations",
    "default_db_path": "locations",
    "freeze": "frozen",
    "get_value": "overrides",
    "is_overridable_path": "overrides",
    "list_overridable_paths": "overrides",
    "load_effective_config": "loader",
    "server_configured": "schema",
    "set_override": "overrides",
    "settings_reference": "reference",
    "thaw": "frozen",
    "unset_override": "overrides",
}
"""Each name of ``__all__`` and the module of this package it comes from."""


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` when it is first asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "API_URL_VARIABLE",
    "BUILT_IN_PATHS",
    "DEFAULTS",
    "DEFAULT_ACTIVE_ROLE",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_TOOL_STEP_BUDGET",
    "DEFAULT_TRANSPORT_TIMEOUTS",
    "EXAMPLE_API_URL",
    "LAYER_NAMES",
    "MODEL_VARIABLE",
    "ConfigError",
    "ConfigProblem",
    "EffectiveConfig",
    "FrozenConfigError",
    "FrozenDict",
    "FrozenList",
    "LoadOptions",
    "OverrideError",
    "SettingDoc",
    "SmithConfig",
    "built_in_defaults",
    "check_config",
    "coerce_value",
    "config_dir",
    "data_dir",
    "deep_merge",
    "default_config_path",
    "default_db_path",
    "freeze",
    "get_value",
    "is_overridable_path",
    "list_overridable_paths",
    "load_effective_config",
    "server_configured",
    "set_override",
    "settings_reference",
    "thaw",
    "unset_override",
]
