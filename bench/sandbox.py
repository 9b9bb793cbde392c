"""Benchmark: what the bash sandbox adds to a command, against the same tool unsandboxed.

Usage: ``.venv/bin/python bench/sandbox.py [--runs R] [--commands N] [--files F] [--small S]``

Two projects are made in a temp folder: one of F files (default 20,000, in nested folders,
with a few nested ``.git`` folders) and a small one of S files (default 20). The bench then
waits until their folders are old enough for the ``.git`` walk's cache (as a project is
when a session starts; a folder changed in the last few seconds is listed afresh).

For each project, each run calls the real ``bash`` tool N times with ``true``, sandboxed
(bubblewrap, the default settings) and with ``sandbox.mode off``, the two alternating
command by command so both see the same load. The figure is the median per-command time
of each run (median and min–max over the R runs) and their difference. What bounds it is
measured the same way: bwrap itself (the tool's own bwrap command line running ``true``
against a plain ``true``, both started with ``subprocess.run``), and the walk that finds
the project's ``.git`` folders, uncached and cached. The load average is printed before
and after each part. Not a timed test: it prints figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from figures import Figure, emit, load_average

from smith_tui.cancel import CancelToken
from smith_tui.config.schema import SandboxConfig, SmithConfig
from smith_tui.tools import sandbox as sandbox_module
from smith_tui.tools.builtin.bash import TOOL
from smith_tui.tools.sandbox import (
    bwrap_argv,
    git_paths,
    probe_bwrap,
    scratch_folder,
)
from smith_tui.tools.spec import ToolContext

TARGET_MS = 30.0


def make_project(root: Path, files: int) -> None:
    """``files`` small files, 50 to a folder, 10 folders to a parent; up to 5 nested repos."""
    (root / ".git").mkdir(parents=True)
    for n in range(files):
        folder = root / f"d{n // 500}" / f"e{(n // 50) % 10}"
        if n % 50 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_text("x\n")
    for n in range(min(5, files // 500)):
        (root / f"d{n}" / "vendored" / ".git").mkdir(parents=True)


def context(root: Path, sandbox: dict[str, Any]) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="bench",
        cwd=root,
        cancel=CancelToken.new_root(),
        config=SmithConfig.model_validate({"sandbox": sandbox}),
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
    await one(root, {})  # warm-up: the probe, the page cache, the walk's cache
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


def measure_raw(root: Path, bwrap: str, runs: int, commands: int) -> list[float]:
    """Per run, the median of (the tool's bwrap line running ``true``) − (plain ``true``)."""
    true = shutil.which("true") or "/bin/true"
    argv = bwrap_argv(bwrap, [true], cwd=root, project=root, settings=SandboxConfig(), info_fd=None)

    def timed(line: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(line, stdin=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start

    added = []
    for _ in range(runs):
        a, b = [], []
        for _ in range(commands):
            a.append(timed(argv))
            b.append(timed([true]))
        added.append(statistics.median(a) - statistics.median(b))
    return added


def time_walk(root: Path, before: Callable[[], None], repeats: int = 9) -> tuple[float, int]:
    times = []
    found = 0
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        found = len(git_paths(root))
        times.append(time.perf_counter() - start)
    return statistics.median(times), found


def spread(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f})"


def bench_project(
    root: Path, files: int, bwrap: str, runs: int, commands: int
) -> tuple[list[Figure], dict[str, Any]]:
    """Measure one project; print its report; return its figures and loads."""
    cold_s, gits = time_walk(root, lambda: sandbox_module._LISTINGS.clear())
    warm_s, _ = time_walk(root, lambda: None)
    load_before = load_average()
    boxed, plain = asyncio.run(measure(root, runs, commands))
    load_tool = load_average()
    raw = measure_raw(root, bwrap, runs, commands)
    load_after = load_average()
    added = [b - p for b, p in zip(boxed, plain, strict=True)]
    print(
        f"project: {files:,} files, {gits} .git folders; .git walk uncached "
        f"{cold_s * 1000:.1f} ms, cached {warm_s * 1000:.1f} ms"
    )
    print(f"{runs} runs x {commands} commands (`true`), load {load_before} -> {load_tool}")
    print(f"  sandboxed:   {spread(boxed)}")
    print(f"  unsandboxed: {spread(plain)}")
    print(f"  added:       {spread(added)}")
    print(f"  bwrap alone (its line with `true` − `true`), load -> {load_after}: {spread(raw)}")
    median_added = statistics.median(added) * 1000
    figures = [
        Figure(
            f"bash `true` sandboxed, {files:,}-file project: added per command "
            f"(median of {runs} runs x {commands}; min–max "
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
            f"bwrap alone, {files:,}-file project: its command line running `true`, added "
            f"to a plain `true` (median of {runs} runs; min–max "
            f"{min(raw) * 1000:.1f}–{max(raw) * 1000:.1f} ms)",
            round(statistics.median(raw) * 1000, 1),
            "ms",
        ),
        Figure(
            f"finding the .git folders of a {files:,}-file project (one walk, uncached / "
            f"cached {warm_s * 1000:.1f} ms)",
            round(cold_s * 1000, 1),
            "ms",
        ),
    ]
    return figures, {"load_before": load_before, "load_after": load_after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--small", type=int, default=20, help="files of the small project")
    options = parser.parse_args()
    probe = probe_bwrap()
    if not probe.ok or probe.path is None:
        print(f"sandbox bench skipped: {probe.reason}")
        emit("sandbox", [], skipped=probe.reason)
        return
    base = Path(tempfile.mkdtemp(prefix="smith-bench-sandbox-"))
    try:
        projects = []
        for files in (options.files, options.small):
            root = base / f"project-{files}"
            make_project(root, files)
            projects.append((root, files))
        # As a project is when a session starts: its folders old enough to be cached.
        time.sleep(sandbox_module.SETTLED_NS / 1e9 + 0.2)
        figures: list[Figure] = []
        loads: dict[str, Any] = {}
        for root, files in projects:
            found, load = bench_project(root, files, probe.path, options.runs, options.commands)
            figures += found
            loads[f"{files}_files"] = load
        emit("sandbox", figures, loads=loads)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        for files in (options.files, options.small):  # the projects' private /tmp folders
            if scratch := scratch_folder(base / f"project-{files}"):
                shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
