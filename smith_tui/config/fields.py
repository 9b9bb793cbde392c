"""Constrained value types shared by the schema models, each with a user-facing rule."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DRIVE_PREFIX = re.compile(r"^[A-Za-z]:")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _safe_relative_path(value: str) -> str:
    if value.startswith(("/", "\\")):
        raise ValueError("must be a relative path inside the repository (no leading '/')")
    if _DRIVE_PREFIX.match(value):
        raise ValueError(
            "must be a relative path inside the repository (no drive prefix like 'C:')"
        )
    if ".." in re.split(r"[/\\]", value):
        raise ValueError("must stay inside the repository (no '..' segment)")
    return value


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL, e.g. http://127.0.0.1:8080/v1")
    return value


def _env_var_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise ValueError(
            "must be the NAME of an environment variable (letters, digits and '_'), "
            "not the secret itself"
        )
    return value


NonEmptyStr = Annotated[str, Field(min_length=1), AfterValidator(_not_blank)]
"""A string with at least one non-space character."""

SafeRelativePath = Annotated[NonEmptyStr, AfterValidator(_safe_relative_path)]
"""A path relative to the repository root that cannot escape it."""

HttpUrl = Annotated[NonEmptyStr, AfterValidator(_http_url)]
"""An ``http``/``https`` URL kept exactly as written (no normalisation)."""

EnvVarName = Annotated[str, Field(min_length=1), AfterValidator(_env_var_name)]
"""The name of an environment variable."""

NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeNumber = Annotated[float, Field(ge=0)]
PositiveNumber = Annotated[float, Field(gt=0)]
BackoffList = Annotated[list[NonNegativeNumber], Field(min_length=1)]
"""Milliseconds to wait before each successive retry (a non-empty list)."""
