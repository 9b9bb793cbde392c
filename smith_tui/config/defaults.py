"""Built-in defaults: the lowest configuration layer, plus defaults applied by consumers.

``DEFAULTS`` is exactly the built-in default table of docs/DESIGN.md §5.3. It has no
``llm_config.api_url`` on purpose: an absent URL is how "no server configured" is
detected (see ``server_configured``). Any Chat-Completions server works; a local
llama.cpp ``llama-server`` listens on ``EXAMPLE_API_URL`` by default.

Values that are *not* loader defaults (docs/DESIGN.md §3.4, §5.3) live here as constants: the
``active_role`` fallback and the LLM transport timeouts, which the LLM client applies.
"""

from __future__ import annotations

from smith_tui.config.frozen import FrozenDict, freeze

EXAMPLE_API_URL = "http://127.0.0.1:8080/v1"
"""The llama.cpp server's default address: a typical value for ``llm_config.api_url``."""

DEFAULT_API_KEY_ENV = "LLM_API_KEY"
"""Environment variable read for the API key unless ``llm_config.api_key_env`` says otherwise."""

DEFAULT_ACTIVE_ROLE = "direct"
"""The role used when ``active_role`` is absent (applied when the execution context is built)."""

DEFAULT_TRANSPORT_TIMEOUTS: dict[str, float] = {
    "timeout": 600.0,
    "connect_timeout": 10.0,
    "send_timeout": 30.0,
    "recv_timeout": 120.0,
    "stream_stall_timeout": 120.0,
}
"""Seconds; used by the LLM client for any ``llm_config`` timeout left absent (docs/DESIGN.md §3.4)."""

DEFAULTS: FrozenDict = freeze(
    {
        "index_file": "INDEX.md",
        "llm_config": {
            "api_key_env": DEFAULT_API_KEY_ENV,
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
)
"""The defaults layer (deep-frozen). ``thaw(DEFAULTS)`` gives an editable copy."""
