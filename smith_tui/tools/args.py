"""Argument checks and tool-settings lookups shared by the built-in tools.

Every check fails with a :class:`ToolError` whose message says what to fix.
Two styles live here: ``require_str`` / ``optional_int`` /
``optional_positive_number`` report code ``bad_arguments`` with a bare message,
while ``check_keys`` / ``get_str`` / ``get_int`` / ``get_bool`` prefix the tool
name and report code ``invalid_arguments``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from smith_tui.tools.spec import ToolContext, ToolError

DEFAULT_MAX_OUTPUT_CHARS = 30_000
"""Character budget of a tool result read by :func:`max_output_chars`."""

DEFAULT_MAX_CHARS = 12_000
"""Character budget of a tool result read by :func:`max_chars`."""


# ---------------------------------------------------------------------------
# settings


def tool_settings(ctx: ToolContext, name: str) -> Mapping[str, Any]:
    """Return ``services.tool.<name>`` from the context's config (empty when absent)."""
    node: Any = ctx.config
    for key in ("services", "tool", name):
        if not isinstance(node, Mapping):
            return {}
        node = node.get(key, {})
    return node if isinstance(node, Mapping) else {}


def setting_number(settings: Mapping[str, Any], key: str, default: float, *, tool: str) -> float:
    """Read a positive number from a tool's settings, falling back to ``default``.

    A malformed value is a configuration mistake, reported as a tool error that
    names the setting so the user can fix it.
    """
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ToolError(
            f"config setting services.tool.{tool}.{key} must be a positive number, "
            f"got {value!r}; fix or unset it.",
            code="bad_config",
        )
    return float(value)


def max_output_chars(ctx: ToolContext, name: str, default: int = DEFAULT_MAX_OUTPUT_CHARS) -> int:
    """The character budget for tool ``name`` (``services.tool.<name>.max_output_chars``)."""
    settings = tool_settings(ctx, name)
    return int(setting_number(settings, "max_output_chars", default, tool=name))


def max_chars(ctx: ToolContext, default: int = DEFAULT_MAX_CHARS) -> int:
    """The result budget: ``config['tool_output_max_chars']`` when set, else ``default``."""
    value = ctx.config.get("tool_output_max_chars") if ctx.config else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


# ---------------------------------------------------------------------------
# arguments


def require_str(args: Mapping[str, Any], key: str, *, allow_empty: bool = False) -> str:
    """Return ``args[key]`` as a string or raise a :class:`ToolError` saying what is wrong."""
    if key not in args or args[key] is None:
        raise ToolError(f"missing required argument `{key}`.", code="bad_arguments")
    value = args[key]
    if not isinstance(value, str):
        raise ToolError(
            f"`{key}` must be a string, got {type(value).__name__} {value!r:.80}.",
            code="bad_arguments",
        )
    if not allow_empty and not value.strip():
        raise ToolError(f"`{key}` must not be empty.", code="bad_arguments")
    return value


def optional_int(args: Mapping[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    """Return ``args[key]`` as an int (integral numbers and digit strings accepted)."""
    value = args.get(key)
    if value is None:
        return None
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    if number is None:
        raise ToolError(f"`{key}` must be a whole number, got {value!r:.80}.", code="bad_arguments")
    if minimum is not None and number < minimum:
        raise ToolError(f"`{key}` must be at least {minimum}, got {number}.", code="bad_arguments")
    return number


def optional_positive_number(args: Mapping[str, Any], key: str) -> float | None:
    """Return ``args[key]`` as a positive finite float (numeric strings accepted)."""
    value = args.get(key)
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number <= 0:
        raise ToolError(
            f"`{key}` must be a positive number, got {value!r:.80}.", code="bad_arguments"
        )
    return number


def bad_arguments(tool: str, message: str) -> ToolError:
    """The error for a bad argument to ``tool``: ``"<tool>: <message>"``, code ``invalid_arguments``."""
    return ToolError(f"{tool}: {message}", code="invalid_arguments")


def check_keys(tool: str, args: Any, allowed: Iterable[str]) -> Mapping[str, Any]:
    """Require ``args`` to be an object whose keys are all in ``allowed``."""
    allowed = tuple(allowed)
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise bad_arguments(tool, f"arguments must be a JSON object, got {type(args).__name__}")
    unknown = sorted(str(k) for k in args if k not in allowed)
    if unknown:
        raise bad_arguments(
            tool,
            f"unknown argument(s) {', '.join(repr(k) for k in unknown)}; "
            f"accepted: {', '.join(allowed)}",
        )
    return args


def get_str(
    tool: str,
    args: Mapping[str, Any],
    key: str,
    *,
    required: bool = False,
    max_len: int = 1000,
) -> str | None:
    """Return a non-empty string argument (or ``None`` when optional and absent)."""
    value = args.get(key)
    if value is None:
        if required:
            raise bad_arguments(tool, f"'{key}' is required (a non-empty string)")
        return None
    if not isinstance(value, str):
        raise bad_arguments(tool, f"'{key}' must be a string, got {type(value).__name__}")
    if not value.strip():
        raise bad_arguments(tool, f"'{key}' must not be empty")
    if "\x00" in value:
        raise bad_arguments(tool, f"'{key}' must not contain a NUL character")
    if len(value) > max_len:
        raise bad_arguments(
            tool, f"'{key}' is {len(value)} characters long; the limit is {max_len}"
        )
    return value


def get_int(
    tool: str, args: Mapping[str, Any], key: str, *, default: int, low: int, high: int
) -> int:
    """Return an integer argument in ``[low, high]``; digit strings are accepted too."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_arguments(tool, f"'{key}' must be an integer, got {value!r}")
    if not low <= value <= high:
        raise bad_arguments(tool, f"'{key}' must be between {low} and {high}, got {value}")
    return value


def get_bool(tool: str, args: Mapping[str, Any], key: str, *, default: bool = False) -> bool:
    """Return a boolean argument (JSON ``true``/``false``)."""
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise bad_arguments(tool, f"'{key}' must be true or false, got {value!r}")
    return value
