"""What skills and sub-agents from files cost: 50 skills and 20 agent files.

Run with ``.venv/bin/python bench/skills_agents.py [--runs N] [--skills N] [--agents N]``.
Two project folders are made (bench/setup_files.py's layout), one empty and one with
``N`` skills (``.claude/skills/<name>/SKILL.md`` with a file beside it, the Agent Skills
layout) and ``M`` agent files (``.claude/agents/*.md``, Claude Code's tool names).
Measured, alternating the two folders run by run:

* first paint of ``smith`` in tmux (bench/first_paint.py's probe): the files must add at
  most 20 ms (discovery runs after the panes mount, never before the first frame);
* ``smith -p hi`` against a local server, whole process: a turn that uses none of them
  pays for a discovery from the front-matter cache (no yaml: the warm-up run filled it)
  and the longer system prompt;
* in a fresh process: the discovery without the cache (yaml imported, every block
  parsed: the first session after the files changed) and with it (a new session of
  unchanged files), and the refresh a turn makes when nothing changed.

``--commands 200`` puts 200 command files and 3 AGENTS.md in the same project too: the
combined run of issue 23's figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from figures import Figure, emit
from setup_files import make_project, ms, paint_and_turn, print_paint_and_turn

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
import smith_tui.engine.runtime  # loaded before discovery runs: not counted
import inspect
from smith_tui.engine.user_setup import SetupCatalog
base, mode = Path(sys.argv[1]), sys.argv[4]
if "cache" not in inspect.signature(SetupCatalog).parameters:
    # a tree from before the cache (the old code, with PYTHONPATH); importing its
    # front_matter here would import yaml before the clock starts
    catalog, mode = SetupCatalog(lambda: base / "cfg" / "smith"), "cold"
else:
    from smith_tui.config.front_matter import CACHE_FILE_NAME, MetaCache
    cache_file = base / "bench-data" / CACHE_FILE_NAME
    if mode == "cold":
        cache_file.unlink(missing_ok=True)
    catalog = SetupCatalog(lambda: base / "cfg" / "smith", lambda: base, MetaCache(cache_file))
started = time.perf_counter()
problems = catalog.refresh(base / "project")
first_s = time.perf_counter() - started
yaml_loaded = "yaml" in sys.modules
started = time.perf_counter()
for _ in range(20):
    catalog.refresh(base / "project")
again_s = (time.perf_counter() - started) / 20
assert len(catalog.skills) == int(sys.argv[2]), len(catalog.skills)
assert len(catalog.agents) == int(sys.argv[3]) and not problems, problems
assert yaml_loaded == (mode == "cold"), (mode, yaml_loaded)
print(first_s, again_s)
"""


def in_process(full: Path, skills: int, agents: int, mode: str) -> list[float]:
    """One fresh process's discovery: ``[first refresh, a refresh with nothing changed]``;
    ``mode`` ``cold``: no front-matter cache (yaml imported and every block parsed),
    ``warm``: the cache the cold run left (a new session of unchanged files)."""
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(full), str(skills), str(agents), mode],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [float(x) for x in out]


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument(
        "--commands",
        type=int,
        default=0,
        help="also N command files and 3 AGENTS.md in the same project (the combined run)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty, full = Path(tmp) / "empty", Path(tmp) / "full"
        make_project(empty, 0)
        make_project(full, args.commands)
        add_setup(full, args.skills, args.agents)
        paint, turn = paint_and_turn(tmp, empty, full, args.runs)
        cold, warm = [], []
        for _ in range(args.runs):
            cold.append(in_process(full, args.skills, args.agents, "cold"))
            warm.append(in_process(full, args.skills, args.agents, "warm"))

    what = f"{args.skills} skills + {args.agents} agent files"
    if args.commands:
        what += f" + {args.commands} command files + 3 AGENTS.md"
    print(f"{what}, {args.runs} runs, load {os.getloadavg()}")
    paint_delta, turn_delta = print_paint_and_turn(paint, turn)
    print(f"  fresh process, no cache    : {ms([r[0] for r in cold])}  (yaml import too)")
    print(f"  fresh process, cache warm  : {ms([r[0] for r in warm])}  (no yaml)")
    print(f"  refresh, nothing changed   : {ms([r[1] for r in warm])}")
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
                "≈ +0",
                statistics.median(turn["empty"]) * 1000,
                "the same, empty project",
            ),
            Figure(
                f"a fresh session's discovery of {what}, front-matter cache warm",
                statistics.median([r[0] for r in warm]) * 1000,
                "ms",
                "—",
                statistics.median([r[0] for r in cold]) * 1000,
                "no cache (yaml imported, every block parsed)",
            ),
            Figure(
                f"a turn's refresh of {what}, nothing changed",
                statistics.median([r[1] for r in warm]) * 1000,
                "ms",
            ),
        ],
        paint_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in paint.items()},
        turn_ms={k: [round(v * 1000, 1) for v in vals] for k, vals in turn.items()},
        turn_delta_ms=round(turn_delta, 1),
    )


if __name__ == "__main__":
    main()
