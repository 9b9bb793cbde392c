"""Type-check smith_tui with mypy, widgets/ included as smith_tui.widgets.

``widgets/`` is installed as ``smith_tui.widgets`` (a package-dir mapping in
pyproject.toml), which mypy cannot see: given the folder it would name the modules
``widgets.*`` and the app's ``import smith_tui.widgets...`` would not resolve. So this
names every source file by the dotted name it is installed under and hands the list to
mypy; the settings come from ``[tool.mypy]`` in pyproject.toml. Extra arguments are mypy
flags, e.g. ``--no-incremental``. Exit status as mypy's: 0 clean, 1 errors, 2 blocked.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mypy import util
from mypy.fscache import FileSystemCache
from mypy.main import process_options, run_build
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"smith_tui": ROOT / "smith_tui", "smith_tui.widgets": ROOT / "widgets"}


def sources() -> list[BuildSource]:
    """Every module of ours, by the dotted name it is installed under."""
    found: list[BuildSource] = []
    for prefix, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join([prefix, *parts])
            found.append(BuildSource(str(path.relative_to(ROOT)), module, None, str(ROOT)))
    return found


def main() -> int:
    """Run mypy over :func:`sources` and print its messages and summary."""
    started = time.time()
    os.chdir(ROOT)
    fscache = FileSystemCache()
    # process_options wants a target; "-c pass" stands in, the real list replaces it.
    _, options = process_options([*sys.argv[1:], "-c", "pass"], fscache=fscache)
    found = sources()
    _, messages, blockers = run_build(found, options, fscache, started, sys.stdout, sys.stderr)
    errors, _, files = util.count_stats(messages)
    if errors:
        print(f"Found {errors} errors in {files} files (checked {len(found)} source files)")
        return 2 if blockers else 1
    print(f"Success: no issues found in {len(found)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
