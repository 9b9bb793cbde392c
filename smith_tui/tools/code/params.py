"""Argument checks shared by the code tools, each failing with a message that says what to fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from smith_tui.tools.spec import ToolContext, ToolError

DEFAULT_MAX_CHARS = 12_000
"""Character budget of one code tool result unless the config says otherwise."""


def _bad(tool: str, message: str) -> ToolError:
    return ToolError(f"{tool}: {message}", code="invalid_arguments")


def check_keys(tool: str, args: Any, allowed: Iterable[str]) -> Mapping[str, Any]:
    """Require ``args`` to be an object whose keys are all in ``allowed``."""
    allowed = tuple(allowed)
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise _bad(tool, f"arguments must be a JSON object, got {type(args).__name__}")
    unknown = sorted(str(k) for k in args if k not in allowed)
    if unknown:
        raise _bad(
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
            raise _bad(tool, f"'{key}' is required (a non-empty string)")
        return None
    if not isinstance(value, str):
        raise _bad(tool, f"'{key}' must be a string, got {type(value).__name__}")
    if not value.strip():
        raise _bad(tool, f"'{key}' must not be empty")
    if "\x00" in value:
        raise _bad(tool, f"'{key}' must not contain a NUL character")
    if len(value) > max_len:
        raise _bad(tool, f"'{key}' is {len(value)} characters long; the limit is {max_len}")
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
        raise _bad(tool, f"'{key}' must be an integer, got {value!r}")
    if not low <= value <= high:
        raise _bad(tool, f"'{key}' must be between {low} and {high}, got {value}")
    return value


def get_bool(tool: str, args: Mapping[str, Any], key: str, *, default: bool = False) -> bool:
    """Return a boolean argument (JSON ``true``/``false``)."""
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _bad(tool, f"'{key}' must be true or false, got {value!r}")
    return value


def project_root(ctx: ToolContext) -> Path:
    """The folder every code tool works in: the project root, else the working directory."""
    root = (ctx.project_root or ctx.cwd).resolve()
    if not root.is_dir():
        raise ToolError(f"project root {root} is not a directory", code="no_project_root")
    return root


def resolve_path(
    tool: str, root: Path, raw: str | None, *, key: str = "path", want: str = "any"
) -> tuple[Path, str]:
    """Resolve ``raw`` against ``root``; return the absolute path and its root-relative form.

    ``want`` is ``"file"``, ``"dir"`` or ``"any"``. Paths that leave the root
    (``..``, absolute paths elsewhere, symlinks pointing out) and paths inside
    ``.git`` are refused.
    """
    if raw is None:
        return root, "."
    candidate = Path(raw)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if full != root and root not in full.parents:
        raise _bad(tool, f"'{key}' {raw!r} is outside the project root {root}")
    rel = full.relative_to(root).as_posix() if full != root else "."
    if ".git" in Path(rel).parts:
        raise _bad(tool, f"'{key}' {raw!r} is inside .git, which the code tools never read")
    if not full.exists():
        raise _bad(tool, f"'{key}' {raw!r} does not exist under the project root {root}")
    if want == "file" and not full.is_file():
        raise _bad(tool, f"'{key}' {raw!r} is not a regular file")
    if want == "dir" and not full.is_dir():
        raise _bad(tool, f"'{key}' {raw!r} is not a directory")
    return full, rel


def max_chars(ctx: ToolContext, default: int = DEFAULT_MAX_CHARS) -> int:
    """The result budget: ``config['tool_output_max_chars']`` when set, else ``default``."""
    value = ctx.config.get("tool_output_max_chars") if ctx.config else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default
