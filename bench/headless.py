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

``--tool-rounds N`` adds the tool loop of ``bench/tool_loop.py`` to every run: the model
calls ``bash`` N times (``echo round N``; in this folder smith runs them in its sandbox,
its default) before it answers. Against it runs that module's bare agent loop: the same
httpx client, which runs each command with ``subprocess`` under the command line smith's
sandbox builds for this folder (the same ``bwrap`` flags and mounts) and sends the output
back. Per round, for each: (its loop − its own one-shot's median) / N, in wall and CPU
(the CPU of the process and of the children it waited for: bwrap's sandbox init, which
bwrap does not wait for, is not counted, alike for both).

Both run with Python's bytecode cache (kept in a temporary ``PYTHONPYCACHEPREFIX``), as an
installed program does. ``--no-bytecode-cache`` measures them as this sandbox starts them
(``PYTHONDONTWRITEBYTECODE=1`` with an editable install: every module of ours is compiled
from source on every start, about 0.1 s).
"""

from __future__ import annotations

import argparse
import json
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
from tool_loop import BARE_LOOP, LOOP_DONE, check_loop, sandbox_prefix, script_loop  # noqa: E402

from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call  # noqa: E402

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
ROUND_CPU_TARGET_S = 0.08


def run_once(
    argv: list[str], env: dict[str, str], cwd: str, expect: str = "hello"
) -> tuple[float, float]:
    """Run ``argv`` to completion; returns (wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or expect not in done.stdout:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _describe(source: str) -> str:
    """``source`` as its commit when it is a git checkout (for the figure's label)."""
    done = subprocess.run(
        ["git", "-C", source, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"commit {done.stdout.strip()}" if done.returncode == 0 else source


def run_loop(
    server: ScriptedLLMServer,
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    rounds: int,
    *,
    name: str,
) -> tuple[float, float]:
    """One run of the tool loop of ``rounds`` rounds by ``argv``; (wall, CPU) seconds."""
    script_loop(server, lambda command: tool_call("bash", {"command": command}), rounds)
    first = len(server.chat_requests())
    measured = run_once(argv, env, cwd, expect=LOOP_DONE)
    if problem := check_loop(server, server.chat_requests()[first:], rounds):
        raise SystemExit(f"{name}: {problem}")
    return measured


def check_sandboxed(server: ScriptedLLMServer, argv: list[str], env: dict[str, str], cwd: str) -> None:  # fmt: skip
    """Make sure ``argv`` runs ``bash`` in a PID namespace of its own (bwrap's ``--unshare-pid``:
    the shell's pid there is 2), so the loop measures sandboxed commands."""
    server.enqueue(text_reply(tool_calls=[tool_call("bash", {"command": "echo pid=$$"})]))
    server.enqueue(text_reply(f"checked {LOOP_DONE}"))
    run_once(argv, env, cwd, expect=LOOP_DONE)
    results = [m for m in server.chat_requests()[-1]["messages"] if m.get("role") == "tool"]
    if not results or "pid=2\n" not in str(results[-1].get("content")):
        raise SystemExit(f"{Path(argv[0]).name} did not run bash sandboxed: {results[-1:]}")


def figures(
    runs: int = 15,
    *,
    bytecode_cache: bool = True,
    source: str | None = None,
    tool_rounds: int = 0,
) -> list[Figure]:
    """Measure both programs ``runs`` times each, alternating; returns the figures.

    ``source``: a checkout whose ``smith_tui`` smith runs instead of the installed one
    (put first on ``PYTHONPATH``), e.g. a ``git worktree`` of an older commit.
    ``tool_rounds``: also run the tool loop of that many rounds (see the module's text).
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
        loop_argv: list[str] = []
        if tool_rounds:
            prefix, sandbox_env = sandbox_prefix(work)
            loop = Path(tmp) / "bare_loop.py"
            loop.write_text(BARE_LOOP)
            loop_argv = [python, str(loop), server.base_url, json.dumps(prefix)]
            loop_argv.append(json.dumps(sandbox_env))
            check_sandboxed(server, ours_argv, env, str(work))
            check_sandboxed(server, loop_argv, env, str(work))
        ours: list[tuple[float, float]] = []
        base: list[tuple[float, float]] = []
        ours_loop: list[tuple[float, float]] = []
        base_loop: list[tuple[float, float]] = []
        for _ in range(runs):
            ours.append(run_once(ours_argv, env, str(work)))
            base.append(run_once(bare_argv, env, str(work)))
            if tool_rounds:
                ours_loop.append(
                    run_loop(server, ours_argv, env, str(work), tool_rounds, name="smith")
                )
                base_loop.append(
                    run_loop(server, loop_argv, env, str(work), tool_rounds, name="the bare loop")
                )
    o_wall = statistics.median(w for w, _ in ours)
    o_cpu = statistics.median(c for _, c in ours)
    b_wall = statistics.median(w for w, _ in base)
    b_cpu = statistics.median(c for _, c in base)
    name = "bare httpx one-shot"
    how = ("" if bytecode_cache else " (no bytecode cache)") + (
        f" [{_describe(source)}]" if source else ""
    )
    found = [
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
    if tool_rounds:
        found += loop_figures(tool_rounds, ours, base, ours_loop, base_loop, how)
    return found


def per_round(loops: list[tuple[float, float]], one_shots: list[tuple[float, float]], rounds: int, which: int) -> list[float]:  # fmt: skip
    """Each loop's cost per round: (the loop − the one-shots' median) / ``rounds``;
    ``which`` 0 is wall time, 1 CPU."""
    base = statistics.median(run[which] for run in one_shots)
    return [(run[which] - base) / rounds for run in loops]


def loop_figures(
    rounds: int,
    ours: list[tuple[float, float]],
    base: list[tuple[float, float]],
    ours_loop: list[tuple[float, float]],
    base_loop: list[tuple[float, float]],
    how: str,
) -> list[Figure]:
    """The tool loop's rows: smith's wall and CPU per round beside the bare loop's."""
    found = []
    for which, kind, target in ((1, "CPU", ROUND_CPU_TARGET_S), (0, "wall", None)):
        mine = per_round(ours_loop, ours, rounds, which)
        bare = per_round(base_loop, base, rounds, which)
        value = statistics.median(mine)
        spread = f"median of {len(mine)}, min–max {min(mine):.3f}–{max(mine):.3f} s"
        found.append(
            Figure(
                f"{rounds}-round tool loop of `smith -p` (sandboxed `bash` `echo`): {kind} per "
                f"round ({spread}){how}",
                value,
                "s",
                f"≤ {target} s" if target else "—",
                statistics.median(bare),
                "bare agent loop: httpx + the same bwrap line",
                met=value <= target if target else None,
            )
        )
    return found


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
    parser.add_argument(
        "--tool-rounds",
        type=int,
        default=0,
        metavar="N",
        help="also run the tool loop of N bash calls, and the bare loop beside it",
    )
    args = parser.parse_args()
    load_before = load_average()
    found = figures(args.runs, source=args.source, tool_rounds=args.tool_rounds)
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
