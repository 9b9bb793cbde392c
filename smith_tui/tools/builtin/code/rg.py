"""Locating ripgrep and listing files with it.

The ``ripgrep`` wheel pinned in ``pyproject.toml`` puts an ``rg`` binary next
to the interpreter; that copy wins over one found on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from smith_tui.cancel import CancelToken
from smith_tui.config.secrets import scrubbed_environ
from smith_tui.tools.process import run_capture
from smith_tui.tools.spec import ToolError

# Flags every rg call shares: ignore the user's rg config file, honour
# .gitignore even outside a git checkout, never look inside .git.
COMMON_FLAGS: tuple[str, ...] = ("--no-config", "--no-require-git", "--glob=!.git")


def find_rg() -> str:
    """Return the path of the ``rg`` executable or raise a :class:`ToolError`."""
    beside_python = Path(sys.executable).parent / "rg"
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError(
        "ripgrep (rg) is not installed: install the 'ripgrep' package into this "
        "environment (pip install ripgrep) or put rg on PATH",
        code="rg_missing",
    )


def rg_env() -> dict[str, str]:
    """The environment for rg: ours minus the API keys and a config file that could change flags."""
    env = scrubbed_environ()
    env.pop("RIPGREP_CONFIG_PATH", None)
    return env


async def list_files(
    root: Path, rel: str, cancel: CancelToken, *, globs: tuple[str, ...] = ()
) -> list[str]:
    """List files under ``root / rel`` that rg would search, relative to ``root``.

    Hidden files and ignored paths are left out, as rg does by default.
    """
    argv = [find_rg(), *COMMON_FLAGS, "--files", *(f"--glob={g}" for g in globs), "--", rel]
    result = await run_capture(argv, cwd=root, cancel=cancel, env=rg_env())
    if result.returncode not in (0, 1) and not result.stdout:
        message = result.stderr.decode("utf-8", "replace").strip() or "rg failed"
        raise ToolError(f"listing files failed: {message}", code="rg_failed")
    text = result.stdout.decode("utf-8", "surrogateescape")
    return [strip_dot(line) for line in text.splitlines() if line]


def strip_dot(path: str) -> str:
    """Drop the ``./`` rg puts in front of paths found under ``.``."""
    return path[2:] if path.startswith("./") else path
