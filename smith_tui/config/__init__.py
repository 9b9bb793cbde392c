"""Configuration: built-in defaults, the schema, the layered loader and runtime overrides.

This package imports nothing else of smith. Typical use::

    loaded = load_effective_config(LoadOptions(config_path=args.config,
                                               persisted=store_patch,
                                               ephemeral=flag_overrides))
    loaded.model.llm_config.transport_timeouts()   # typed view
    loaded.effective                                # deep-frozen snapshot for a turn
    loaded.source_of("llm_config.api_url")          # "defaults" | "user" | "env" | ...
"""

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
from smith_tui.config.loader import (
    LAYER_NAMES,
    EffectiveConfig,
    LoadOptions,
    load_effective_config,
)
from smith_tui.config.locations import config_dir, data_dir, default_config_path, default_db_path
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
