"""Settings read from environment variables (pydantic-settings).

* ``SMITH_API_URL`` → ``llm_config.api_url``, as the ``env`` layer: above the user JSON
  file, below persisted overrides (``/config set``) and ephemeral overrides (flags).
* ``SMITH_MODEL`` is exposed as is; model selection consults it after ``default_model``.
* The API key is read from the variable named by ``llm_config.api_key_env`` and is only
  ever held as a ``SecretStr``: it never enters a config layer.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

API_URL_VARIABLE = "SMITH_API_URL"
MODEL_VARIABLE = "SMITH_MODEL"


class SmithEnvironment(BaseSettings):
    """The environment variables smith reads directly; blank values count as unset."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", env_prefix="")

    api_url: str | None = Field(
        None,
        validation_alias=API_URL_VARIABLE,
        description="Chat-Completions base URL; overrides llm_config.api_url from the user file.",
    )
    model: str | None = Field(
        None,
        validation_alias=MODEL_VARIABLE,
        description="Model id used when no configured setting names one (selection step 6).",
    )

    @field_validator("api_url", "model", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            return value or None
        return value

    def as_layer(self) -> dict[str, Any]:
        """The config layer these variables contribute (empty when none is set)."""
        return {"llm_config": {"api_url": self.api_url}} if self.api_url else {}


def read_environment() -> SmithEnvironment:
    """Read ``SMITH_API_URL`` and ``SMITH_MODEL`` from the process environment now."""
    return SmithEnvironment()


def read_secret(variable: str | None) -> SecretStr | None:
    """The value of environment variable ``variable`` as a secret; ``None`` when unset or blank."""
    if not variable:
        return None
    value = os.environ.get(variable, "").strip()
    return SecretStr(value) if value else None
