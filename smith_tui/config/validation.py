"""Validate a merged config and turn pydantic errors into plain-language problems."""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from smith_tui.config.errors import ConfigError, ConfigProblem
from smith_tui.config.schema import SmithConfig

_MAX_SHOWN_VALUE = 60

_TYPE_RULES = {
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be a table (JSON object)",
    "model_type": "must be a table (JSON object)",
    "model_attributes_type": "must be a table (JSON object)",
    "finite_number": "must be a finite number",
    "string_too_short": "must be a non-empty string",
    "too_short": "must be a non-empty list",
}

_BOUND_RULES = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be {ge} or more",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be {le} or less",
}


def check_config(data: Mapping[str, Any]) -> SmithConfig:
    """Validate a merged config table; raise ``ConfigError`` listing every broken rule."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            "the configuration must be a table (JSON object)",
            (ConfigProblem("", "must be a table (JSON object)"),),
        )
    try:
        return SmithConfig.model_validate(dict(data))
    except ValidationError as exc:
        problems = problems_of(exc)
        raise ConfigError("\n".join(str(p) for p in problems), problems) from None


def problems_of(exc: ValidationError) -> tuple[ConfigProblem, ...]:
    """Every error of a failed ``SmithConfig`` validation as a ``ConfigProblem``."""
    return tuple(problem_from_error(error) for error in exc.errors(include_url=False))


def dotted(loc: Sequence[int | str]) -> str:
    """Render a pydantic location as ``a.b[2]``; dict-key markers are dropped."""
    text = ""
    for part in loc:
        if part == "[key]":
            continue
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def problem_from_error(error: ErrorDetails) -> ConfigProblem:
    """One pydantic error as a ``ConfigProblem`` with a path and a readable rule."""
    loc = tuple(error["loc"])
    path = dotted(loc)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return ConfigProblem(path, _unknown_key_rule(loc))
    if loc and loc[-1] == "[key]":
        if kind == "value_error":  # a key with its own rule (an MCP server name)
            return ConfigProblem(dotted(loc[:-2]), str(ctx.get("error", error["msg"])))
        return ConfigProblem(
            dotted(loc[:-2]), f"keys must be non-empty strings (got {show_value(loc[-2])})"
        )
    if kind in _TYPE_RULES:
        rule = _TYPE_RULES[kind]
    elif kind in _BOUND_RULES:
        rule = _BOUND_RULES[kind].format(**{k: _number(v) for k, v in ctx.items()})
    elif kind == "literal_error":
        rule = f"must be one of {ctx.get('expected', '')}"
    elif kind in ("value_error", "assertion_error"):
        rule = str(ctx.get("error", error["msg"]))
    else:
        rule = error["msg"]
    shown = error.get("input")
    if "input" in error and not isinstance(shown, Mapping) and not _is_secretish(loc):
        rule += f" (got {show_value(error['input'])})"
    return ConfigProblem(path, rule)


def _unknown_key_rule(loc: tuple[int | str, ...]) -> str:
    key = str(loc[-1])
    if "key" in key.lower() and "env" not in key.lower():
        return (
            "unknown setting; secrets never go in the config: put the key in the "
            "environment variable named by llm_config.api_key_env (LLM_API_KEY by default)"
        )
    known = _known_keys(loc[:-1])
    matches = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean '{matches[0]}'?" if matches else ""
    if not matches and known:
        hint = f"; known settings here: {', '.join(sorted(known))}"
    return f"unknown setting '{key}'{hint}"


def _known_keys(parent_loc: tuple[int | str, ...]) -> list[str]:
    model: type[BaseModel] | None = SmithConfig
    for part in parent_loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return []
        model = _model_in(model.model_fields[part].annotation)
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _is_secretish(loc: tuple[int | str, ...]) -> bool:
    return any(isinstance(part, str) and "key" in part.lower() for part in loc)


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def show_value(value: Any) -> str:
    """``value`` as short JSON text for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _MAX_SHOWN_VALUE:
        text = text[: _MAX_SHOWN_VALUE - 1] + "…"
    return text
