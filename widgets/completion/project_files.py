"""The project's files for ``@path`` completion, honouring ``.gitignore``.

``rg --files`` (the ripgrep binary installed next to the Python interpreter, else the one on
``PATH``) lists them fast and applies every ignore file; without ripgrep a directory walk
applies the root ``.gitignore`` patterns and skips hidden folders.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import shutil
import sys
import time
from pathlib import Path

#: Most files listed (huge trees stay responsive).
MAX_FILES = 20_000
#: Seconds a listing is reused before it is taken again.
REFRESH_S = 30.0
#: Seconds ``rg --files`` may take.
LIST_TIMEOUT_S = 5.0


def ripgrep_binary() -> str | None:
    """Path of the ``rg`` binary next to the interpreter, else on ``PATH``, else ``None``."""
    local = Path(sys.executable).parent / "rg"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("rg")


async def list_with_ripgrep(root: Path, rg: str, limit: int = MAX_FILES) -> list[str]:
    """Files under ``root`` as ``rg --files`` sees them (relative, sorted)."""
    # Imported here: smith_tui.config loads the pydantic schema, which the app otherwise
    # loads after its first frame (a module-level import cost first paint about 40 ms).
    from smith_tui.config.secrets import scrubbed_environ

    process = await asyncio.create_subprocess_exec(
        rg,
        "--files",
        "--no-require-git",
        "--color",
        "never",
        cwd=root,
        env=scrubbed_environ(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), LIST_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        return []
    names = out.decode("utf-8", "replace").splitlines()
    return sorted(names)[:limit]


def _ignore_patterns(root: Path) -> list[str]:
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            patterns.append(line.rstrip("/").lstrip("/"))
    return patterns


def _ignored(relative: str, name: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) for pattern in patterns
    )


def list_with_walk(root: Path, limit: int = MAX_FILES) -> list[str]:
    """Files under ``root`` by a directory walk (hidden folders and root .gitignore skipped)."""
    patterns = _ignore_patterns(root)
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder).relative_to(root)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not _ignored(str(base / d), d, patterns)
        )
        for name in sorted(files):
            relative = str(base / name) if str(base) != "." else name
            if not _ignored(relative, name, patterns):
                found.append(relative)
                if len(found) >= limit:
                    return sorted(found)
    return sorted(found)


class ProjectFiles:
    """A cached listing of one project's files."""

    def __init__(
        self, root: Path | str, *, rg: str | None = None, use_ripgrep: bool = True
    ) -> None:
        self.root = Path(root)
        self._rg = (rg or ripgrep_binary()) if use_ripgrep else None
        self._files: list[str] | None = None
        self._taken_at = 0.0
        self._lock = asyncio.Lock()

    async def files(self) -> list[str]:
        """The listing, taken on first use and again after :data:`REFRESH_S` seconds."""
        async with self._lock:
            fresh = time.monotonic() - self._taken_at < REFRESH_S
            if self._files is None or not fresh:
                self._files = await self._take()
                self._taken_at = time.monotonic()
            return self._files

    async def _take(self) -> list[str]:
        if not self.root.is_dir():
            return []
        if self._rg is not None:
            try:
                return await list_with_ripgrep(self.root, self._rg)
            except OSError:
                pass
        return await asyncio.to_thread(list_with_walk, self.root)
