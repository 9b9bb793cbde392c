"""Defaults that are not a schema field's default: what an absent setting means.

Every setting's default is its schema ``Field`` default (``smith_tui.config.schema``); the
loader's defaults layer ``DEFAULTS`` is derived from those (docs/DESIGN.md §5.3). The
constants here are the values an *absent* setting stands for (docs/DESIGN.md §3.4), applied
by the consumer: the ``active_role`` fallback, the LLM transport timeouts and the step
budget of a top-level turn. There is no ``llm_config.api_url`` default on purpose: an
absent URL is how "no server configured" is detected (see ``server_configured``). Any
Chat-Completions server works; a local llama.cpp ``llama-server`` listens on
``EXAMPLE_API_URL`` by default.

This module imports nothing, so the schema can use it.
"""

from __future__ import annotations

from typing import TypedDict

EXAMPLE_API_URL = "http://127.0.0.1:8080/v1"
"""The llama.cpp server's default address: a typical value for ``llm_config.api_url``."""

DEFAULT_API_KEY_ENV = "LLM_API_KEY"
"""Environment variable read for the API key unless ``llm_config.api_key_env`` says otherwise."""

DEFAULT_ACTIVE_ROLE = "direct"
"""The role used when ``active_role`` is absent (applied when the execution context is built)."""


class TransportTimeouts(TypedDict):
    """Transport timeouts in seconds, by the keyword names the LLM client's config takes."""

    timeout: float
    connect_timeout: float
    send_timeout: float
    recv_timeout: float
    stream_stall_timeout: float


DEFAULT_TRANSPORT_TIMEOUTS: dict[str, float] = {
    "timeout": 600.0,
    "connect_timeout": 10.0,
    "send_timeout": 30.0,
    "recv_timeout": 120.0,
    "stream_stall_timeout": 120.0,
}
"""Seconds; used by the LLM client for any ``llm_config`` timeout left absent (docs/DESIGN.md §3.4)."""

DEFAULT_ROUTING_AUTO = False
"""``routing.auto``: a complex request to Smith gets a hint to use the orchestrator; it is
never handed over by itself unless the user turns this on."""

DEFAULT_AUTO_RESUME = True
"""``auto_resume``: plain ``smith`` reopens the project's last conversation, and says so."""

DEFAULT_TOOL_STEP_BUDGET = 200
"""Tool calls a top-level turn may make when ``tool_step_budget`` is absent: generous, but an
endless tool loop still ends."""
