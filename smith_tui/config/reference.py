"""A flat reference of every documented setting, generated from the schema models.

Used by ``/config`` screens and help, and to write the configuration reference.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from smith_tui.config.overrides import MODEL_KEY_PATTERN, MODELS_PREFIX, is_overridable_path
from smith_tui.config.schema import SmithConfig
from smith_tui.config.validation import show_value


@dataclass(frozen=True)
class SettingDoc:
    """One setting: dotted path, schema default (JSON text), description, overridable."""

    path: str
    default: str
    description: str
    overridable: bool


def settings_reference(model: type[BaseModel] = SmithConfig, prefix: str = "") -> list[SettingDoc]:
    """Every leaf setting of ``model`` in declaration order (tables are expanded)."""
    docs: list[SettingDoc] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        nested = _nested_model(info.annotation)
        if nested is not None:
            docs.extend(settings_reference(nested, f"{path}."))
            continue
        default: Any = info.get_default(call_default_factory=True)
        shown = "absent" if default is None or default is PydanticUndefined else show_value(default)
        if path == MODELS_PREFIX:
            path = MODEL_KEY_PATTERN
        overridable = is_overridable_path(path.replace("<key>", "key"))
        docs.append(SettingDoc(path, shown, info.description or "", overridable))
    return docs


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if typing.get_origin(annotation) is dict:
        return None  # a table of tables under keys the user picks (mcp_servers) is one setting
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None
