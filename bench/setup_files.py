"""What the user's setup files cost: 200 command files and the AGENTS.md layers.

Run with ``.venv/bin/python bench/setup_files.py [--runs N] [--commands N]``. Two project
folders are made, one empty and one with ``N`` command files (``.claude/commands``, in ten
namespaces, each with front matter), an ``AGENTS.md`` at the root, one in a subfolder the
program starts in and one in the user's config folder. Measured, alternating the two
folders run by run:

* first paint of ``smith`` in tmux (bench/first_paint.py's probe): the files must add at
  most 20 ms (discovery runs in a thread after the runtime opens, never before the frame);
* ``smith -p hi`` against a local scripted server, whole process: a turn that uses no
  command file must not pay for them (command files are read only for a ``/`` line);
* in process: one cold discovery of the command files (what the app does in the
  background, yaml import included), a warm one (nothing changed: a walk and stats), and
  reading the instruction files for a turn's system prompt.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from figures import Figure, emit
from first_paint import time_to_screen

COMMAND = """---
description: Command number {n} of the {ns} namespace
argument-hint: [target] [mode]
allowed-tools: Read, Grep, Bash(git diff:*)
---
Look at $1 in $2 mode and report what you find. Arguments: $ARGUMENTS
"""


def make_project(base: Path, commands: int) -> Path:
    """A git project (with its working folder ``pkg``) holding ``commands`` command files
    and instruction files; ``commands == 0``: an empty project."""
    project = base / "project"
    (project / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    if commands:
        for n in range(commands):
            ns = f"ns{n % 10}"
            folder = project / ".claude" / "commands" / ns
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"cmd{n}.md").write_text(COMMAND.format(n=n, ns=ns), encoding="utf-8")
        rules = "".join(f"- rule {i}: keep the code tidy and tested\n" for i in range(60))
        (project / "AGENTS.md").write_text("# Project rules\n" + rules, encoding="utf-8")
        (project / "pkg" / "AGENTS.md").write_text("# pkg rules\n" + rules, encoding="utf-8")
        user = base / "cfg" / "smith"
        user.mkdir(parents=True)
        (user / "AGENTS.md").write_text("# My rules\n" + rules, encoding="utf-8")
    return project


class _Chat(http.server.BaseHTTPRequestHandler):
    """A minimal Chat-Completions server: one streamed "hello" per request."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        chunk = {"choices": [{"index": 0, "delta": {"content": "hello"}, "finish_reason": None}]}
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def headless_turn(smith: str, url: str, base: Path, env: dict[str, str]) -> float:
    """Seconds of one ``smith -p hi`` process in ``base``'s project."""
    started = time.perf_counter()
    done = subprocess.run(
        [smith, "-p", "hi", "--api-url", url, "--model", "m"],
        cwd=base / "project" / "pkg",
        env={**env, "XDG_CONFIG_HOME": str(base / "cfg"), "XDG_DATA_HOME": str(base / "data")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 or done.stdout.strip() != "hello":
        raise RuntimeError(f"smith -p failed: {done.stderr[-500:]}")
    return time.perf_counter() - started


IN_PROCESS = """
import sys, time
from pathlib import Path
import smith_tui.engine.runtime  # loaded before discovery runs in the app: not counted
started = time.perf_counter()
from smith_tui.engine.command_files import CommandFiles
base = Path(sys.argv[1])
try:
    from smith_tui.engine.command_files import default_folders  # a tree from before origins()
except ImportError:
    from smith_tui.engine.setup_files import origins
    files = CommandFiles(lambda: origins("commands", base / "project", base / "cfg" / "smith", base))
else:
    files = CommandFiles(lambda: default_folders(base / "project", base / "cfg" / "smith", base))
cold = files.discover()
cold_s = time.perf_counter() - started
started = time.perf_counter()
warm = files.discover()
warm_s = time.perf_counter() - started
from smith_tui.engine.scope import compute_scope
started = time.perf_counter()
for _ in range(20):
    scope = compute_scope(base / "project" / "pkg", "INDEX.md", user_dir=base / "cfg" / "smith")
scope_s = (time.perf_counter() - started) / 20
started = time.perf_counter()
for _ in range(20):
    compute_scope(base / "project" / "pkg", "INDEX.md", instructions=False)
bare_s = (time.perf_counter() - started) / 20
assert len(cold.commands) == int(sys.argv[2]) and not cold.problems, cold.problems
assert len(scope.instructions) == 3
print(cold_s, warm_s, scope_s, bare_s)
"""


def paint_and_turn(
    tmp: str, empty: Path, full: Path, runs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """First paint and ``smith -p hi`` (seconds) of the ``empty`` and ``full`` projects,
    alternating run by run after one warm-up each (what both setup benches measure)."""
    python = sys.executable
    smith = str(Path(python).with_name("smith"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = f"{tmp}/pycache"
    env["HOME"] = tmp  # no setup of the machine's user (~/.claude)

    def paint_cmd(base: Path) -> str:
        cache = f"env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX={tmp}/pycache HOME={tmp}"
        xdg = f"XDG_CONFIG_HOME={base}/cfg XDG_DATA_HOME={base}/data"
        return f"cd {base}/project/pkg && {cache} {xdg} {smith} --api-url http://127.0.0.1:9/v1"

    time_to_screen(paint_cmd(empty), ("Quit", "Smith"))  # warm caches
    time_to_screen(paint_cmd(full), ("Quit", "Smith"))
    paint: dict[str, list[float]] = {"empty": [], "full": []}
    for _ in range(runs):
        for name, base in (("empty", empty), ("full", full)):
            paint[name].append(time_to_screen(paint_cmd(base), ("Quit", "Smith")))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    turn: dict[str, list[float]] = {"empty": [], "full": [], "empty cpu": [], "full cpu": []}
    try:
        headless_turn(smith, url, empty, env)
        headless_turn(smith, url, full, env)
        for _ in range(runs):
            for name, base in (("empty", empty), ("full", full)):
                before = _children_cpu()
                turn[name].append(headless_turn(smith, url, base, env))
                turn[f"{name} cpu"].append(_children_cpu() - before)
    finally:
        server.shutdown()
    return paint, turn


def _children_cpu() -> float:
    """CPU seconds (user + system) of the waited-for child processes so far: a figure the
    other processes of a loaded machine disturb much less than the wall clock."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ms(values: list[float]) -> str:
    """``median … ms (min …, max …)`` of ``values`` in seconds."""
    return (
        f"median {statistics.median(values) * 1000:6.1f} ms "
        f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"
    )


def print_paint_and_turn(
    paint: dict[str, list[float]], turn: dict[str, list[float]]
) -> tuple[float, float]:
    """Print the four lines of :func:`paint_and_turn`; the two deltas in ms."""
    paint_delta = (statistics.median(paint["full"]) - statistics.median(paint["empty"])) * 1000
    turn_delta = (statistics.median(turn["full"]) - statistics.median(turn["empty"])) * 1000
    print(f"  first paint, empty project : {ms(paint['empty'])}")
    print(f"  first paint, with the files: {ms(paint['full'])}   delta {paint_delta:+.1f} ms")
    print(f"  smith -p hi, empty project : {ms(turn['empty'])}")
    print(f"  smith -p hi, with the files: {ms(turn['full'])}   delta {turn_delta:+.1f} ms")
    cpu_delta = (statistics.median(turn["full cpu"]) - statistics.median(turn["empty cpu"])) * 1000
    print(f"    its CPU time, empty      : {ms(turn['empty cpu'])}")
    print(f"    its CPU time, with files : {ms(turn['full cpu'])}   delta {cpu_delta:+.1f} ms")
    return paint_delta, turn_delta


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", type=int, default=200)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        empty, full = Path(tmp) / "empty", Path(tmp) / "full"
        make_project(empty, 0)
        make_project(full, args.commands)
        paint, turn = paint_and_turn(tmp, empty, full, args.runs)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
        inner = []
        for _ in range(args.runs):
            out = subprocess.run(
                [python, "-c", IN_PROCESS, str(full), str(args.commands)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout.split()
            inner.append([float(x) for x in out])

    cold = [row[0] for row in inner]
    warm = [row[1] for row in inner]
    scope = [row[2] for row in inner]
    bare = [row[3] for row in inner]
    print(f"{args.commands} command files + 3 AGENTS.md, {args.runs} runs, load {os.getloadavg()}")
    paint_delta, _ = print_paint_and_turn(paint, turn)
    print(f"  discovery, cold (yaml too) : {ms(cold)}")
    print(f"  discovery, warm            : {ms(warm)}")
    print(f"  a turn's scope, AGENTS.md  : {ms(scope)}  (without instructions {ms(bare)})")
    emit(
        "setup_files",
        [
            Figure(
                f"first paint with {args.commands} command files and 3 AGENTS.md, "
                f"median of {args.runs}",
                statistics.median(paint["full"]) * 1000,
                "ms",
                "≤ +20 ms",
                statistics.median(paint["empty"]) * 1000,
                "the same, empty project",
                met=paint_delta <= 20,
            ),
            Figure(
                f"smith -p hi with {args.commands} command files, whole process, "
                f"median of {args.runs}",
                statistics.median(turn["full"]) * 1000,
                "ms",
                "≈ +0 (reads only AGENTS.md)",
                statistics.median(turn["empty"]) * 1000,
                "the same, empty project",
            ),
            Figure(
                f"discovery of {args.commands} command files, cold (background thread)",
                statistics.median(cold) * 1000,
                "ms",
            ),
            Figure(
                f"discovery of {args.commands} command files, nothing changed",
                statistics.median(warm) * 1000,
                "ms",
            ),
            Figure(
                "a turn's scope with 3 AGENTS.md",
                statistics.median(scope) * 1000,
                "ms",
                "—",
                statistics.median(bare) * 1000,
                "without instruction files",
            ),
        ],
        paint_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in paint.items()},
        turn_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in turn.items()},
    )


if __name__ == "__main__":
    main()
