"""Benchmark: the ``code_grep`` tool against raw ``rg`` on the Python standard library.

Usage: ``.venv/bin/python bench/code_grep.py [--runs N] [--root DIR] [PATTERN ...]``

For each pattern both are run N times in alternation (after one warm-up run
each, so the page cache is hot for both) and the medians are printed with
their ratio. Raw rg is ``rg --line-number --no-heading`` with its output read
in full by the caller; ``code_grep`` is the tool handler end to end (rg
``--json``, ranking, rendering, budgeting). The time of bare ``rg --json``
is shown as well, to separate rg's own JSON cost from the tool's. A pattern
whose count the tool left partial (its match cap or per-file cap) is marked
with the count it reached. Not a timed test: it prints figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sysconfig
import time
from pathlib import Path

from figures import Figure, emit

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.code.grep import Args, handler
from smith_tui.tools.builtin.code.rg import COMMON_FLAGS, find_rg
from smith_tui.tools.spec import ToolContext

DEFAULT_PATTERNS = [
    "def main",
    "import asyncio",
    "TODO",
    r"class \w+Error",
    "raise ValueError",
    r"self\.assertEqual\(",
    "lru_cache",
    "def ",
]


def time_raw(rg: str, root: Path, pattern: str, *, json: bool = False) -> tuple[float, int]:
    """Seconds for one raw rg run and the number of lines it printed."""
    mode = ["--json"] if json else ["--line-number", "--no-heading"]
    start = time.perf_counter()
    done = subprocess.run(
        [rg, *COMMON_FLAGS, *mode, "--regexp", pattern, "--", "."],
        cwd=root,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    return elapsed, done.stdout.count(b"\n")


def time_tool(root: Path, pattern: str) -> tuple[float, int, bool]:
    """Seconds for one ``code_grep`` call (fresh event loop), its matches, whether complete."""
    ctx = ToolContext(role="explorer", turn_id="bench", cwd=root, cancel=CancelToken.new_root())
    start = time.perf_counter()
    output = asyncio.run(handler(Args(pattern=pattern), ctx))
    elapsed = time.perf_counter() - start
    return elapsed, int(output.metadata.get("matches", 0)), bool(output.metadata["complete"])


def main() -> None:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per pattern (default 7)")
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("patterns", nargs="*", default=DEFAULT_PATTERNS)
    options = parser.parse_args()
    rg = find_rg()
    root = options.root.resolve()
    files = subprocess.run(
        [rg, *COMMON_FLAGS, "--files", "."], cwd=root, capture_output=True, check=False
    ).stdout.count(b"\n")
    print(f"tree: {root} ({files} files searched by rg), runs per pattern: {options.runs}")
    print(
        f"{'pattern':<26} {'lines':>8} {'raw rg s':>9} {'rg --json s':>12} "
        f"{'code_grep s':>12} {'ratio':>6}"
    )
    ratios = []
    rows = []
    for pattern in options.patterns:
        time_raw(rg, root, pattern)
        time_tool(root, pattern)
        raw_times, json_times, tool_times = [], [], []
        lines = matches = 0
        complete = True
        for _ in range(options.runs):
            elapsed, lines = time_raw(rg, root, pattern)
            raw_times.append(elapsed)
            json_times.append(time_raw(rg, root, pattern, json=True)[0])
            elapsed, matches, complete = time_tool(root, pattern)
            tool_times.append(elapsed)
        raw, tool = statistics.median(raw_times), statistics.median(tool_times)
        bare_json = statistics.median(json_times)
        ratios.append(tool / raw)
        rows.append(
            Figure(
                f"`code_grep` {pattern!r}, {lines:,} lines, median of {options.runs}",
                tool,
                "s",
                "≤ 1.5x",
                raw,
                "raw rg",
                met=tool / raw <= 1.5,
            )
        )
        note = "" if lines == matches else f"  (tool counted {matches})"
        if not complete:
            note = f"  (tool counted {matches}, partial)"
        print(
            f"{pattern!r:<26} {lines:>8} {raw:>9.3f} {bare_json:>12.3f} {tool:>12.3f} "
            f"{tool / raw:>6.2f}{note}"
        )
    print(f"median ratio {statistics.median(ratios):.2f}, worst {max(ratios):.2f} (target ≤ 1.5)")
    emit("code_grep", rows)


if __name__ == "__main__":
    main()
