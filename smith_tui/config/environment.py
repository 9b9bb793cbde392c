"""Settings read from environment variables.

* ``SMITH_API_URL`` → ``llm_config.api_url``, as the ``env`` layer: above the user JSON
  file, below persisted overrides (``/config set``) and ephemeral overrides (flags).
* ``SMITH_MODEL`` is exposed as is; model selection consults it after ``default_model``.
* The API key is read from the variable named by ``llm_config.api_key_env`` and is only
  ever held as a ``SecretStr``: it never enters a config layer.

They are read with ``os.environ`` (names case-sensitive, blank counts as unset), and the
``env`` layer they make is one of the loader's pydantic-settings sources
(``settings.LayerSource``). pydantic-settings' own environment source is not used: it
matches names case-insensitively and by field name, while ``SMITH_API_URL`` stands for the
nested ``llm_config.api_url``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

API_URL_VARIABLE = "SMITH_API_URL"
MODEL_VARIABLE = "SMITH_MODEL"


def _value(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class SmithEnvironment:
    """The environment variables smith reads directly; blank values count as unset."""

    api_url: str | None = None
    """``SMITH_API_URL``: Chat-Completions base URL; overrides llm_config.api_url from the user file."""
    model: str | None = None
    """``SMITH_MODEL``: model id used when no configured setting names one (selection step 6)."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> SmithEnvironment:
        """Read both variables from ``environ``."""
        return cls(_value(environ, API_URL_VARIABLE), _value(environ, MODEL_VARIABLE))

    def as_layer(self) -> dict[str, Any]:
        """The config layer these variables contribute (empty when none is set)."""
        return {"llm_config": {"api_url": self.api_url}} if self.api_url else {}


def read_environment() -> SmithEnvironment:
    """Read ``SMITH_API_URL`` and ``SMITH_MODEL`` from the process environment now."""
    return SmithEnvironment.from_environ(os.environ)


def read_secret(variable: str | None) -> SecretStr | None:
    """The value of environment variable ``variable`` as a secret; ``None`` when unset or blank."""
    if not variable:
        return None
    value = os.environ.get(variable, "").strip()
    return SecretStr(value) if value else None
