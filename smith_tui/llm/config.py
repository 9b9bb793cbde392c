"""Client configuration: where the API lives, the key and the transport timeouts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from smith_tui.llm.errors import LLMError, schema_error
from smith_tui.llm.secret import Secret

_TIMEOUT_FIELDS = (
    "timeout",
    "connect_timeout",
    "send_timeout",
    "recv_timeout",
    "stream_stall_timeout",
)


@dataclass
class LLMConfig:
    """Settings for :class:`~smith_tui.llm.client.LLMClient`.

    All timeouts are seconds: ``timeout`` bounds a whole non-streaming request,
    ``connect_timeout`` the TCP/TLS connect, ``send_timeout`` writing the
    request, ``recv_timeout`` the gap between received bytes and
    ``stream_stall_timeout`` the gap between SSE lines of any kind (heartbeat
    comments count as activity). ``api_key`` is held in a :class:`Secret` and
    never printed.
    """

    api_url: str
    api_key: Secret | str | None = field(default=None, repr=False)
    timeout: float = 600.0
    connect_timeout: float = 10.0
    send_timeout: float = 30.0
    recv_timeout: float = 120.0
    stream_stall_timeout: float = 120.0
    extra_headers: dict[str, str] = field(default_factory=dict)
    catalog_ttl: float = 300.0

    def __post_init__(self) -> None:
        if not isinstance(self.api_url, str) or not self.api_url.strip():
            raise _config_error(
                "api_url must be a non-empty string such as http://127.0.0.1:8080/v1"
            )
        if isinstance(self.api_key, str):
            self.api_key = Secret(self.api_key) if self.api_key else None
        elif self.api_key is not None and not isinstance(self.api_key, Secret):
            raise _config_error("api_key must be a string (or omitted)")
        for name in (*_TIMEOUT_FIELDS, "catalog_ttl"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise _config_error(f"{name} must be a positive number of seconds, got {value!r}")
            setattr(self, name, float(value))
        if self.extra_headers is None:
            self.extra_headers = {}
        if not isinstance(self.extra_headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.extra_headers.items()
        ):
            raise _config_error("extra_headers must map header names to string values")
        self.extra_headers = dict(self.extra_headers)


def _config_error(message: str) -> LLMError:
    return schema_error(message, code="config_invalid")


_KNOWN_KEYS = frozenset(f.name for f in fields(LLMConfig))


def coerce_config(cfg: LLMConfig | Mapping[str, Any]) -> LLMConfig:
    """Accept an :class:`LLMConfig` or a plain mapping with the same keys.

    Keys the client does not use (``api_key_env``, retry settings, ...) are
    ignored, so the whole ``llm_config`` section of the app config can be
    passed as is. ``None`` values mean "use the default".
    """
    if isinstance(cfg, LLMConfig):
        return cfg
    if not isinstance(cfg, Mapping):
        raise _config_error(
            f"LLM config must be an LLMConfig or a mapping, got {type(cfg).__name__}"
        )
    kwargs = {k: v for k, v in cfg.items() if k in _KNOWN_KEYS and v is not None}
    if "api_url" not in kwargs:
        raise _config_error("LLM config is missing api_url")
    return LLMConfig(**kwargs)
