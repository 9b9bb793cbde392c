"""Benchmark: what the bash sandbox adds to a command, against the same tool unsandboxed.

Usage: ``.venv/bin/python bench/sandbox.py [--runs R] [--commands N] [--files F]``

A project of F files (default 20,000, in nested folders, with a few nested ``.git``
folders) is made in a temp folder. Each run calls the real ``bash`` tool N times with
``true``, sandboxed (bubblewrap, the default settings) and with ``sandbox.mode off``, the
two alternating command by command so both see the same load. The figure is the median
per-command time of each run (median and min–max over the R runs) and their difference.
The walk that finds the project's ``.git`` folders is timed on its own as well. Not a
timed test: it prints figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import Figure, emit, load_average

from smith_tui.cancel import CancelToken
from smith_tui.tools.bash import TOOL
from smith_tui.tools.sandbox import git_paths, probe_bwrap
from smith_tui.tools.spec import ToolContext

TARGET_MS = 30.0


def make_project(root: Path, files: int) -> None:
    """``files`` small files, 50 to a folder, 10 folders to a parent; 5 nested repos."""
    (root / ".git").mkdir(parents=True)
    for n in range(files):
        folder = root / f"d{n // 500}" / f"e{(n // 50) % 10}"
        if n % 50 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_text("x\n")
    for n in range(5):
        (root / f"d{n}" / "vendored" / ".git").mkdir(parents=True)


def context(root: Path, sandbox: dict[str, Any]) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="bench",
        cwd=root,
        cancel=CancelToken.new_root(),
        config={"sandbox": sandbox},
        project_root=root,
    )


async def one(root: Path, sandbox: dict[str, Any]) -> float:
    start = time.perf_counter()
    result = await TOOL.run({"command": "true"}, context(root, sandbox))
    elapsed = time.perf_counter() - start
    assert result.metadata["exit_code"] == 0, result.content
    assert result.metadata["sandboxed"] is (sandbox.get("mode") != "off")
    return elapsed


async def measure(root: Path, runs: int, commands: int) -> tuple[list[float], list[float]]:
    """Per run, the median seconds per command: sandboxed, unsandboxed."""
    await one(root, {})  # warm-up: the probe, the page cache
    await one(root, {"mode": "off"})
    boxed, plain = [], []
    for _ in range(runs):
        a, b = [], []
        for _ in range(commands):
            a.append(await one(root, {}))
            b.append(await one(root, {"mode": "off"}))
        boxed.append(statistics.median(a))
        plain.append(statistics.median(b))
    return boxed, plain


def time_walk(root: Path, repeats: int = 9) -> tuple[float, int]:
    times = []
    found = 0
    for _ in range(repeats):
        start = time.perf_counter()
        found = len(git_paths(root))
        times.append(time.perf_counter() - start)
    return statistics.median(times), found


def spread(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--files", type=int, default=20_000)
    options = parser.parse_args()
    probe = probe_bwrap()
    if not probe.ok:
        print(f"sandbox bench skipped: {probe.reason}")
        emit("sandbox", [], skipped=probe.reason)
        return
    base = Path(tempfile.mkdtemp(prefix="smith-bench-sandbox-"))
    try:
        root = base / "project"
        make_project(root, options.files)
        walk_s, gits = time_walk(root)
        load_before = load_average()
        boxed, plain = asyncio.run(measure(root, options.runs, options.commands))
        added = [b - p for b, p in zip(boxed, plain, strict=True)]
        print(f"project: {options.files:,} files, {gits} .git folders; walk {walk_s * 1000:.1f} ms")
        print(f"{options.runs} runs x {options.commands} commands (`true`), load {load_before}")
        print(f"  sandboxed:   {spread(boxed)}")
        print(f"  unsandboxed: {spread(plain)}")
        print(f"  added:       {spread(added)}")
        median_added = statistics.median(added) * 1000
        figures = [
            Figure(
                f"bash `true` sandboxed, {options.files:,}-file project: added per command "
                f"(median of {options.runs} runs x {options.commands}; min–max "
                f"{min(added) * 1000:.1f}–{max(added) * 1000:.1f} ms)",
                round(median_added, 1),
                "ms",
                f"≤ {TARGET_MS:g} ms",
                round(statistics.median(plain) * 1000, 1),
                "the same tool unsandboxed (per command)",
                ratio=statistics.median(boxed) / statistics.median(plain),
                met=median_added <= TARGET_MS,
            ),
            Figure(
                f"finding the .git folders of a {options.files:,}-file project (one walk)",
                round(walk_s * 1000, 1),
                "ms",
            ),
        ]
        emit("sandbox", figures, load_before=load_before)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
