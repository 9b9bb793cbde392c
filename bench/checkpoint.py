"""Benchmark: recording a checkpoint of a 10,000-file repository.

Usage: ``.venv/bin/python bench/checkpoint.py [--files N] [--runs N]``

Builds a git repository of N small files (default 10,000, in 100 folders, committed, plus
a .gitignore'd build folder) in a temporary folder, records a first checkpoint (the full
copy, timed once), then times ``Checkpoints.record_turn``:

* when nothing changed since the previous checkpoint (target < 200 ms);
* when 10 files changed since the previous checkpoint (target < 300 ms).

The median of the runs is printed with the targets, together with a bare
``git status --porcelain`` of the same tree as a baseline for the cost of one walk.
Not a timed test: it prints figures only.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from figures import Figure, emit

from smith_tui.tools.checkpoints.shadow_repo import Checkpoints


def build_repository(root: Path, files: int) -> None:
    """A committed repository of ``files`` small text files and an ignored build folder."""
    for number in range(files):
        folder = root / f"pkg{number % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"module_{number}.py").write_text(
            f"# file {number}\n" + "def f():\n    return 1\n" * 20, encoding="utf-8"
        )
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    (root / "build").mkdir()
    for number in range(200):
        (root / "build" / f"out{number}.o").write_bytes(b"\0" * 4096)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "HOME": str(root)}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b", "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True)


def _time(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    """Build the repository, run the timings and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=11)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="smith-bench-checkpoint-") as temp:
        root = Path(temp) / "repo"
        root.mkdir()
        build_repository(root, options.files)
        checkpoints = Checkpoints.for_project(Path(temp) / "data", root)
        first = _time(checkpoints.record_turn)
        unchanged = [_time(checkpoints.record_turn) for _ in range(options.runs)]
        changed = []
        for run in range(options.runs):
            for number in range(10):
                path = root / f"pkg{number:02d}" / f"module_{number}.py"
                path.write_text(f"# run {run} changed {number}\n", encoding="utf-8")
            changed.append(_time(checkpoints.record_turn))
        status = [
            _time(
                lambda: subprocess.run(
                    ["git", "status", "--porcelain"], cwd=root, capture_output=True, check=True
                )
            )
            for _ in range(options.runs)
        ]
    print(f"repository: {options.files} files; median of {options.runs} runs")
    print(f"  first checkpoint (full copy)         {first:8.1f} ms")
    print(
        f"  checkpoint, nothing changed          {statistics.median(unchanged):8.1f} ms"
        "   (target < 200 ms)"
    )
    print(
        f"  checkpoint, 10 files changed         {statistics.median(changed):8.1f} ms"
        "   (target < 300 ms)"
    )
    print(f"  baseline: git status --porcelain     {statistics.median(status):8.1f} ms")
    base = statistics.median(status)
    walk = "`git status --porcelain`"
    rows = [
        (f"checkpoint of {options.files:,} files, first (full copy)", first, "—", None),
        ("checkpoint, nothing changed", statistics.median(unchanged), "< 200 ms", 200),
        ("checkpoint, 10 files changed", statistics.median(changed), "< 300 ms", 300),
    ]
    emit(
        "checkpoint",
        [
            Figure(name, value, "ms", target, base, walk, met=None if cap is None else value < cap)
            for name, value, target, cap in rows
        ],
    )


if __name__ == "__main__":
    main()
