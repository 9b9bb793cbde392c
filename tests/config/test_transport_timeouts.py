"""The transport timeouts the config hands the LLM client: one set of names on both sides."""

from __future__ import annotations

from smith_tui.config import DEFAULT_TRANSPORT_TIMEOUTS, DEFAULTS, check_config, deep_merge
from smith_tui.config.defaults import TransportTimeouts
from smith_tui.llm import LLMConfig


def test_the_typed_timeouts_name_exactly_the_defaults() -> None:
    # transport_timeouts() casts the defaults' names to this TypedDict: they must agree.
    assert set(TransportTimeouts.__annotations__) == set(DEFAULT_TRANSPORT_TIMEOUTS)


def test_the_client_config_takes_every_timeout_as_a_keyword() -> None:
    patch = {"llm_config": {"recv_timeout": 7, "connect_timeout": 3}}
    timeouts = check_config(deep_merge(DEFAULTS, patch)).llm_config.transport_timeouts()
    client = LLMConfig(api_url="http://127.0.0.1:8080/v1", **timeouts)
    assert {name: getattr(client, name) for name in DEFAULT_TRANSPORT_TIMEOUTS} == timeouts
    assert client.recv_timeout == 7 and client.connect_timeout == 3
