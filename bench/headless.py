"""Whole-process cost of one headless turn: ``smith -p hi`` beside a bare httpx one-shot.

Run with ``.venv/bin/python bench/headless.py [--runs N]``. The scripted Chat-Completions
server (tests/support/llm_server.py) answers on loopback. Each run starts a fresh process
and measures its wall time (start to exit) and CPU time (user + system of the process and
the children it waited for). The two programs alternate, so load on the machine hits both
alike; medians of N are printed.

* ``smith -p hi --api-url URL`` with a model given by ``SMITH_MODEL``, in a fresh folder
  (not a git repository) with its own config and database folders; the database is created
  by a warm-up run, as it is for anyone who has used smith before.
* the baseline: a Python script that imports httpx, streams the same chat completion from
  the same server, joins the text deltas and prints them (what any one-shot client does).

Both run with Python's bytecode cache (kept in a temporary ``PYTHONPYCACHEPREFIX``), as an
installed program does. ``--no-bytecode-cache`` measures them as this sandbox starts them
(``PYTHONDONTWRITEBYTECODE=1`` with an editable install: every module of ours is compiled
from source on every start, about 0.1 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from figures import Figure, emit, load_average  # noqa: E402

from tests.support.llm_server import ScriptedLLMServer, text_reply  # noqa: E402

BARE_CLIENT = """
import json
import sys

import httpx

url = sys.argv[1]
body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
parts = []
with httpx.Client(timeout=30) as client:
    with client.stream("POST", url + "/chat/completions", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices") or []:
                    parts.append((choice.get("delta") or {}).get("content") or "")
print("".join(parts))
"""

WALL_TARGET_S = 0.5
RATIO_TARGET = 1.5


def run_once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Run ``argv`` to completion; returns (wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "hello" not in done.stdout:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _describe(source: str) -> str:
    """``source`` as its commit when it is a git checkout (for the figure's label)."""
    done = subprocess.run(
        ["git", "-C", source, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"commit {done.stdout.strip()}" if done.returncode == 0 else source


def figures(
    runs: int = 15, *, bytecode_cache: bool = True, source: str | None = None
) -> list[Figure]:
    """Measure both programs ``runs`` times each, alternating; returns the figures.

    ``source``: a checkout whose ``smith_tui`` smith runs instead of the installed one
    (put first on ``PYTHONPATH``), e.g. a ``git worktree`` of an older commit.
    """
    python = sys.executable
    smith = str(Path(python).with_name("smith"))
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedLLMServer(default_reply=text_reply("hello")) as server,
    ):
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_CLIENT)
        work = Path(tmp) / "work"
        work.mkdir()
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": f"{tmp}/cfg",
            "XDG_DATA_HOME": f"{tmp}/data",
            "SMITH_MODEL": "m",
        }
        env.pop("SMITH_API_URL", None)
        if bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = f"{tmp}/pycache"
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        if source:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
        ours_argv = [smith, "-p", "hi", "--api-url", server.base_url]
        bare_argv = [python, str(bare), server.base_url]
        run_once(ours_argv, env, str(work))  # creates the database; warms the file cache
        run_once(bare_argv, env, str(work))
        ours: list[tuple[float, float]] = []
        base: list[tuple[float, float]] = []
        for _ in range(runs):
            ours.append(run_once(ours_argv, env, str(work)))
            base.append(run_once(bare_argv, env, str(work)))
    o_wall = statistics.median(w for w, _ in ours)
    o_cpu = statistics.median(c for _, c in ours)
    b_wall = statistics.median(w for w, _ in base)
    b_cpu = statistics.median(c for _, c in base)
    name = "bare httpx one-shot"
    how = ("" if bytecode_cache else " (no bytecode cache)") + (
        f" [{_describe(source)}]" if source else ""
    )
    return [
        Figure(
            f"`smith -p hi`, whole process: wall{how}",
            o_wall,
            "s",
            f"≤ {WALL_TARGET_S} s, ≤ {RATIO_TARGET}x",
            b_wall,
            name,
            met=o_wall <= WALL_TARGET_S and o_wall / b_wall <= RATIO_TARGET,
        ),
        Figure(
            f"`smith -p hi`, whole process: CPU{how}",
            o_cpu,
            "s",
            f"≤ {RATIO_TARGET}x",
            b_cpu,
            name,
            met=o_cpu / b_cpu <= RATIO_TARGET,
        ),
    ]


def main() -> None:
    """Measure, print a report and the figures line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="also measure without .pyc files"
    )
    parser.add_argument(
        "--source",
        default=os.environ.get("BENCH_SOURCE") or None,
        help="run smith_tui from this checkout (PYTHONPATH; default $BENCH_SOURCE)",
    )
    args = parser.parse_args()
    load_before = load_average()
    found = figures(args.runs, source=args.source)
    if args.no_bytecode_cache:
        found += figures(args.runs, bytecode_cache=False, source=args.source)
    print(f"headless turn, median of {args.runs} (load {load_before} -> {load_average()})")
    for f in found:
        print(
            f"  {f.figure:60} {f.value:6.3f} {f.unit}   {f.baseline_name} {f.baseline:6.3f} "
            f"{f.unit}   ratio {f.ratio:.2f}x   target {f.target}"
        )
    emit("headless", found, runs=args.runs)


if __name__ == "__main__":
    main()
