"""The base class of every schema table."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A config table: strict types, unknown keys rejected, no infinities or NaN.

    Strict means JSON types are taken at face value: ``"5"`` is not a number and
    ``1`` is not ``true``.
    """

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
    )
