"""What skills and sub-agents from files cost: 50 skills and 20 agent files.

Run with ``.venv/bin/python bench/skills_agents.py [--runs N] [--skills N] [--agents N]``.
Two project folders are made (bench/setup_files.py's layout), one empty and one with
``N`` skills (``.claude/skills/<name>/SKILL.md`` with a file beside it, the Agent Skills
layout) and ``M`` agent files (``.claude/agents/*.md``, Claude Code's tool names).
Measured, alternating the two folders run by run:

* first paint of ``smith`` in tmux (bench/first_paint.py's probe): the files must add at
  most 20 ms (discovery runs after the panes mount, never before the first frame);
* ``smith -p hi`` against a local server, whole process: a turn that uses none of them
  pays for one cold discovery (yaml included) and the longer system prompt;
* in process: one cold discovery (what the app does in the background), and the refresh a
  turn makes when nothing changed (a listing and a stat per file).
"""

from __future__ import annotations

import argparse
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from figures import Figure, emit
from first_paint import time_to_screen
from setup_files import _Chat, headless_turn, make_project

SKILL = """---
name: skill-{n}
description: Does task number {n} of the demo set. Use when the user asks for task {n}.
license: MIT
---
# Task {n}

1. Read `notes.md` beside this file.
2. Do the task in small steps and check each one.
"""
AGENT = """---
name: agent-{n}
description: Sub-agent number {n}; use it for the demo task {n}
tools: Read, Grep, Glob{extra}
color: {color}
---
You are agent {n}. Do what you are asked and report what you found, with file and line.
"""
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")


def add_setup(base: Path, skills: int, agents: int) -> None:
    """Put ``skills`` skills and ``agents`` agent files in ``base``'s project."""
    project = base / "project"
    for n in range(skills):
        folder = project / ".claude" / "skills" / f"skill-{n}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.format(n=n), encoding="utf-8")
        (folder / "notes.md").write_text(f"Notes for task {n}.\n", encoding="utf-8")
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(agents):
        extra = ", Edit, Bash" if n % 2 else ""
        text = AGENT.format(n=n, extra=extra, color=COLOURS[n % len(COLOURS)])
        (folder / f"agent-{n}.md").write_text(text, encoding="utf-8")


IN_PROCESS = """
import sys, time
from pathlib import Path
import smith_tui.engine.runtime  # loaded before discovery runs in the app: not counted
from smith_tui.engine.user_setup import SetupCatalog
base = Path(sys.argv[1])
catalog = SetupCatalog(lambda: base / "cfg" / "smith")
started = time.perf_counter()
problems = catalog.refresh(base / "project")
cold_s = time.perf_counter() - started
started = time.perf_counter()
for _ in range(20):
    catalog.refresh(base / "project")
warm_s = (time.perf_counter() - started) / 20
assert len(catalog.skills) == int(sys.argv[2]), len(catalog.skills)
assert len(catalog.agents) == int(sys.argv[3]) and not problems, problems
print(cold_s, warm_s)
"""


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--agents", type=int, default=20)
    args = parser.parse_args()
    python = sys.executable
    smith = str(Path(python).with_name("smith"))
    with tempfile.TemporaryDirectory() as tmp:
        empty, full = Path(tmp) / "empty", Path(tmp) / "full"
        make_project(empty, 0)
        make_project(full, 0)
        add_setup(full, args.skills, args.agents)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = f"{tmp}/pycache"
        env["HOME"] = tmp  # no setup of the machine's user

        def paint_cmd(base: Path) -> str:
            cache = f"env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX={tmp}/pycache HOME={tmp}"
            xdg = f"XDG_CONFIG_HOME={base}/cfg XDG_DATA_HOME={base}/data"
            return f"cd {base}/project/pkg && {cache} {xdg} {smith} --api-url http://127.0.0.1:9/v1"

        time_to_screen(paint_cmd(empty), ("Quit", "Smith"))  # warm caches
        time_to_screen(paint_cmd(full), ("Quit", "Smith"))
        paint: dict[str, list[float]] = {"empty": [], "full": []}
        for _ in range(args.runs):
            for name, base in (("empty", empty), ("full", full)):
                paint[name].append(time_to_screen(paint_cmd(base), ("Quit", "Smith")))

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        turn: dict[str, list[float]] = {"empty": [], "full": []}
        try:
            headless_turn(smith, url, empty, env)
            headless_turn(smith, url, full, env)
            for _ in range(args.runs):
                for name, base in (("empty", empty), ("full", full)):
                    turn[name].append(headless_turn(smith, url, base, env))
        finally:
            server.shutdown()

        inner = []
        for _ in range(args.runs):
            out = subprocess.run(
                [python, "-c", IN_PROCESS, str(full), str(args.skills), str(args.agents)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout.split()
            inner.append([float(x) for x in out])

    def ms(values: list[float]) -> str:
        return (
            f"median {statistics.median(values) * 1000:6.1f} ms "
            f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"
        )

    paint_delta = (statistics.median(paint["full"]) - statistics.median(paint["empty"])) * 1000
    turn_delta = (statistics.median(turn["full"]) - statistics.median(turn["empty"])) * 1000
    cold = [row[0] for row in inner]
    warm = [row[1] for row in inner]
    what = f"{args.skills} skills + {args.agents} agent files"
    print(f"{what}, {args.runs} runs, load {os.getloadavg()}")
    print(f"  first paint, empty project : {ms(paint['empty'])}")
    print(f"  first paint, with the files: {ms(paint['full'])}   delta {paint_delta:+.1f} ms")
    print(f"  smith -p hi, empty project : {ms(turn['empty'])}")
    print(f"  smith -p hi, with the files: {ms(turn['full'])}   delta {turn_delta:+.1f} ms")
    print(f"  discovery, cold (yaml too) : {ms(cold)}")
    print(f"  refresh, nothing changed   : {ms(warm)}")
    emit(
        "skills_agents",
        [
            Figure(
                f"first paint with {what}, median of {args.runs}",
                statistics.median(paint["full"]) * 1000,
                "ms",
                "≤ +20 ms",
                statistics.median(paint["empty"]) * 1000,
                "the same, empty project",
                met=paint_delta <= 20,
            ),
            Figure(
                f"smith -p hi with {what} (uses none), whole process, median of {args.runs}",
                statistics.median(turn["full"]) * 1000,
                "ms",
                "—",
                statistics.median(turn["empty"]) * 1000,
                "the same, empty project",
            ),
            Figure(f"discovery of {what}, cold (background)", statistics.median(cold) * 1000, "ms"),
            Figure(
                f"a turn's refresh of {what}, nothing changed",
                statistics.median(warm) * 1000,
                "ms",
            ),
        ],
        paint_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in paint.items()},
        turn_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in turn.items()},
    )


if __name__ == "__main__":
    main()
