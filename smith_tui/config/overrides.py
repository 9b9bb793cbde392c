"""Runtime overrides (``/config set|unset|get``): allowlist, coercion and validation.

The persisted patch is a plain partial-config table (layer ``persisted``). These
functions never change the patch they are given: they return a new one, and a refused
change raises ``OverrideError`` so nothing gets written. API keys and the name of the
key variable are never overridable, so a secret cannot end up in the database.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from smith_tui.config.errors import ConfigError, OverrideError
from smith_tui.config.notifications import NotificationsConfig
from smith_tui.config.permission_settings import PermissionsConfig
from smith_tui.config.schema import (
    DEFAULTS,
    BudgetConfig,
    ContextManagement,
    LLMSection,
    RoutingConfig,
    SandboxConfig,
    SmithConfig,
)
from smith_tui.config.tree import (
    contains,
    deep_merge,
    leaf_paths,
    lookup,
    split_path,
    with_leaf,
    without_leaf,
)
from smith_tui.config.validation import check_config

MODELS_PREFIX = "models"
MODEL_KEY_PATTERN = "models.<key>"
"""How the open-ended ``models.<key>`` family appears in listings and hints."""
SUGGESTED_MODEL_KEYS = ("default", "direct", "orchestrator", "worker", "explorer")
"""``models`` keys offered by completion: ``default`` and the role names."""

_TOP_LEVEL = (
    "default_model",
    "index_file",
    "active_role",
    "tool_step_budget",
    "auto_resume",
    *(name for name in SmithConfig.model_fields if name.startswith("empty_response_retry_")),
)
OVERRIDABLE_PATHS: frozenset[str] = frozenset(
    (
        *_TOP_LEVEL,
        *(f"llm_config.{name}" for name in LLMSection.model_fields if "key" not in name),
        *(f"context_management.{name}" for name in ContextManagement.model_fields),
        *(f"budget.{name}" for name in BudgetConfig.model_fields),
        *(f"sandbox.{name}" for name in SandboxConfig.model_fields),
        *(f"permissions.{name}" for name in PermissionsConfig.model_fields),
        *(f"routing.{name}" for name in RoutingConfig.model_fields),
        *(f"notifications.{name}" for name in NotificationsConfig.model_fields),
        "services.ui.vim",  # the prompt asks it at every key: a change holds at once
    )
)
"""The exact overridable paths; ``models.<key>`` paths are allowed in addition."""


def is_overridable_path(path: str) -> bool:
    """Whether ``/config set`` may change ``path`` (an exact allowlisted leaf or ``models.<key>``)."""
    parts = split_path(path)
    if len(parts) == 2 and parts[0] == MODELS_PREFIX:
        return bool(parts[1].strip())
    return ".".join(parts) in OVERRIDABLE_PATHS


def list_overridable_paths(model_keys: Iterable[str] = SUGGESTED_MODEL_KEYS) -> list[str]:
    """Sorted overridable paths for completion, with ``models.<k>`` for each of ``model_keys``."""
    models = {f"{MODELS_PREFIX}.{key}" for key in model_keys if key.strip() and "." not in key}
    return sorted(OVERRIDABLE_PATHS | models)


def coerce_value(raw: Any) -> Any:
    """Decode a typed-in value: JSON first (``80``, ``false``, ``[2000,8000]``), else the string.

    Non-string values are returned unchanged.
    """
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return raw


def set_override(patch: Mapping[str, Any], path: str, raw_value: Any) -> dict[str, Any]:
    """Return a copy of ``patch`` with ``path`` set to the coerced ``raw_value``.

    The value is validated as a single leaf on top of the defaults; when the JSON
    reading is invalid but the plain string is valid (``default_model 123``), the string
    is kept. Raises ``OverrideError`` for a path off the allowlist or an invalid value.
    """
    parts = _allowed_parts(path)
    value = _validated(parts, raw_value)
    return with_leaf(patch, parts, value)


def unset_override(patch: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Return a copy of ``patch`` without ``path``, pruning tables left empty.

    Unsetting an allowlisted path that is not set is a no-op. Any path present in the
    patch can be removed, even one no longer allowlisted (an old database).
    """
    parts = split_path(path)
    if contains(patch, parts):
        return without_leaf(patch, parts)
    _allowed_parts(path)
    return without_leaf(patch, parts)


def get_value(effective: Any, path: str) -> Any:
    """The value at dotted ``path``; ``None`` for a known setting that is absent.

    ``effective`` is a mapping or a loaded ``EffectiveConfig`` (whose schema defaults,
    e.g. ``services.ui.keys.cancel``, are then visible too). Raises ``OverrideError``
    with a hint for a path that names no setting.
    """
    parts = split_path(path)
    tree = getattr(effective, "effective", effective)
    if contains(tree, parts):
        return lookup(tree, parts)
    model = getattr(effective, "model", None)
    if isinstance(model, SmithConfig):
        dumped = model.model_dump()
        if contains(dumped, parts):
            return lookup(dumped, parts)
    if is_overridable_path(path) or contains(_schema_tree(), parts):
        return None
    known = set(leaf_paths(tree)) | set(leaf_paths(_schema_tree())) | OVERRIDABLE_PATHS
    raise OverrideError(f"Unknown setting '{path}'{_hint(path, known)}")


def _allowed_parts(path: str) -> list[str]:
    parts = split_path(path)
    cleaned = ".".join(parts)
    if is_overridable_path(cleaned):
        return parts
    if "api_key" in cleaned.lower() or (parts[0] == "llm_config" and "key" in parts[-1].lower()):
        raise OverrideError(
            f"'{cleaned}' cannot be set at runtime: secrets are never stored. Export the key "
            "in the environment variable named by llm_config.api_key_env (LLM_API_KEY by "
            "default); change that name in the config file."
        )
    if parts[0] == MODELS_PREFIX:
        raise OverrideError(
            f"'{cleaned}' is not a settable path: use {MODEL_KEY_PATTERN} with one non-empty "
            "key, e.g. models.worker"
        )
    known = OVERRIDABLE_PATHS | {MODEL_KEY_PATTERN}
    raise OverrideError(
        f"'{cleaned}' cannot be set at runtime{_hint(cleaned, known)} "
        "(other settings belong in the config file)"
    )


def _validated(parts: list[str], raw_value: Any) -> Any:
    coerced = coerce_value(raw_value)
    candidates = [coerced]
    if isinstance(raw_value, str) and not isinstance(coerced, str):
        candidates.append(raw_value)
    first_error: ConfigError | None = None
    for candidate in candidates:
        try:
            _check_leaf(parts, candidate)
        except ConfigError as exc:
            first_error = first_error or exc
            continue
        return candidate
    assert first_error is not None
    dotted_path = ".".join(parts)
    reason = first_error.message
    if first_error.problems:
        problem = first_error.problems[0]
        reason = problem.rule if problem.path == dotted_path else str(problem)
    raise OverrideError(f"Cannot set {dotted_path}: {reason}", first_error.problems)


def _check_leaf(parts: list[str], value: Any) -> None:
    check_config(deep_merge(DEFAULTS, with_leaf({}, parts, value)))


@functools.cache
def _schema_tree() -> dict[str, Any]:
    return SmithConfig().model_dump()


def _hint(path: str, known: Iterable[str]) -> str:
    matches = difflib.get_close_matches(path, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean '{matches[0]}'?" if matches else ""


def _not_json(name: str) -> Any:
    raise ValueError(name)
