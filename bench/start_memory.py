"""The memory of the real ``smith`` waiting for its first prompt (tmux), where it goes.

Run ``.venv/bin/python bench/start_memory.py [--runs N] [--settle S] [--against DIR]``
(about 10 s a run). Each run starts the installed ``smith`` in its own tmux session, its
own config and empty database (bench/tui.py's driver, as bench/reopen.py's empty open), and
reads ``/proc/<pid>/status`` and ``smaps_rollup``:

* at *ready*: the moment the status line, the panes and the footer are on screen and the
  prompt takes keys (bench/reopen.py's "RSS before the first prompt");
* ``--settle`` seconds later (default 3): what start-up does after the first frame is done
  by then (the model catalog's request, the setup files), and a user typing the first
  prompt waits here.

RSS is split into anonymous memory (the heap: Python's objects) and file-backed pages (the
parts of libpython, OpenSSL, SQLite, pydantic-core… that were touched); the last run of each
tree lists its largest mappings. ``BENCH_SOURCE=dir`` runs another checkout's ``smith_tui``
(see bench/tui.py); ``--against DIR`` alternates with that checkout run by run, so both see
the same load. Medians and min-max, with the 1-minute load before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from tui import AppSession, _cpu_seconds, smith_command  # noqa: E402

READY = ("no tool calls yet", "Quit")  # as bench/reopen.py's empty open
MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def _kb(text: str, key: str) -> float:
    """MB of ``key:`` in a /proc status or smaps_rollup text."""
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reading(pid: int) -> dict[str, float]:
    """RSS, its anonymous and file-backed parts (MB) and CPU seconds of ``pid`` now."""
    status = Path(f"/proc/{pid}/status").read_text()
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    rss = _kb(status, "VmRSS")
    anon = _kb(rollup, "Anonymous")
    return {"rss": rss, "anon": anon, "file": _kb(rollup, "Rss") - anon, "cpu": _cpu_seconds(pid)}


def mappings(pid: int, top: int = 12) -> list[tuple[float, str]]:
    """The ``top`` largest mappings of ``pid`` by RSS (MB, name; ``[anon]`` unnamed)."""
    sizes: dict[str, float] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if MAPPING.match(line):
            parts = line.split(None, 5)
            name = parts[5] if len(parts) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            sizes[name] = sizes.get(name, 0.0) + int(line.split()[1]) / 1024
    return sorted(((mb, n) for n, mb in sizes.items()), reverse=True)[:top]


def one_start(workdir: Path, run: str, settle_s: float) -> tuple[dict[str, float], ...]:
    """Start smith on an empty database: readings at ready and ``settle_s`` later, and
    the mappings then."""
    dummy = "http://127.0.0.1:9/v1"  # nothing answers: the catalog's request fails fast
    argv = smith_command(workdir, dummy, "--db", str(workdir / f"empty-{run}.db"))
    app = AppSession.start(argv, workdir, f"mem{run}")
    try:
        seen = app.wait_for(*READY, timeout_s=60.0, every_s=0.005)
        ready = {**reading(app.pid), "wall": seen - app.started}
        time.sleep(settle_s)
        settled = reading(app.pid)
        return ready, settled, {n: mb for mb, n in mappings(app.pid)}
    finally:
        app.stop()


def _spread(values: list[float], unit: str = "MB") -> str:
    fmt = "{:.2f}" if unit == "s" else "{:.1f}"
    med, lo, hi = statistics.median(values), min(values), max(values)
    return f"{fmt.format(med)} {unit} ({fmt.format(lo)}–{fmt.format(hi)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after ready")
    parser.add_argument("--against", metavar="DIR", help="another checkout, alternated")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("BENCH_SOURCE", "")}
    if args.against:
        trees["against"] = args.against
    results: dict[str, list[tuple[dict[str, float], ...]]] = {name: [] for name in trees}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="smith-memory-") as tmp:
        workdir = Path(tmp)
        for name, source in trees.items():  # warm the file cache and each tree's bytecode
            os.environ["BENCH_SOURCE"] = source
            one_start(workdir, f"warm{len(results[name])}{name[0]}", 0.5)
        for run in range(args.runs):
            for name, source in trees.items():
                os.environ["BENCH_SOURCE"] = source
                results[name].append(one_start(workdir, f"{run}{name[0]}", args.settle))
    load_after = os.getloadavg()[0]
    print(f"start memory, {args.runs} runs, 1-minute load {load_before:.1f} → {load_after:.1f}")
    for name, runs in results.items():
        source = trees[name] or "installed smith_tui"
        print(f"{name} ({source}):")
        for label, index in (("ready", 0), (f"ready + {args.settle:g} s", 1)):
            cells = [
                f"{key} {_spread([r[index][key] for r in runs])}" for key in ("rss", "anon", "file")
            ]
            print(f"  {label}: " + ", ".join(cells))
        print(f"  ready after {_spread([r[0]['wall'] for r in runs], 's')}, CPU by then "
              f"{_spread([r[0]['cpu'] for r in runs], 's')}")  # fmt: skip
        print("  largest mappings (last run, settled): " + ", ".join(
            f"{Path(n).name} {mb:.1f}" for n, mb in runs[-1][2].items()
        ))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
