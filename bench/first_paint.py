"""Time to first paint of `smith` in a real terminal (tmux), beside a bare Textual app.

Run with ``.venv/bin/python bench/first_paint.py [--runs N]``. Each run starts the program
in a fresh tmux session and polls ``tmux capture-pane`` every 10 ms until the ready prompt
(the footer with "Quit" and the status line) is on screen. The bare baseline is a Textual
app with a status line, a TextArea and a footer, measured the same way in the same run
(the two alternate). ``BENCH_SOURCE=dir`` runs the ``smith_tui`` of another checkout
(see ``headless.py``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import Figure, emit

BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Static, TextArea


class Bare(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Static("idle")
        yield TextArea()
        yield Footer()


Bare().run()
"""

RATIO_TARGET = 1.0
"""Issue 26: smith's first paint is no slower than the bare Textual app's (ratio of medians)."""


def time_to_screen(command: str, ready: tuple[str, ...], timeout_s: float = 15.0) -> float:
    """Seconds from starting ``command`` in tmux until every word of ``ready`` is visible."""
    session = f"fp{os.getpid()}"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    started = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", command], check=True
    )
    try:
        while time.perf_counter() - started < timeout_s:
            screen = subprocess.run(
                ["tmux", "capture-pane", "-t", session, "-p"], capture_output=True, text=True
            ).stdout
            if all(word in screen for word in ready):
                return time.perf_counter() - started
            time.sleep(0.01)
        raise TimeoutError(f"{command!r} did not show {ready} within {timeout_s} s")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> None:
    """Measure both programs and print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed: apt-get install tmux")
    python = sys.executable
    smith = str(Path(python).with_name("smith"))
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        # Both with Python's bytecode cache, as installed programs run (this sandbox sets
        # PYTHONDONTWRITEBYTECODE, which would compile every module of ours on each start).
        cache = f"env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX={tmp}/pycache"
        env = f"{cache} XDG_CONFIG_HOME={tmp}/cfg XDG_DATA_HOME={tmp}/data"
        source = os.environ.get("BENCH_SOURCE")  # another checkout's smith_tui (headless.py)
        if source:
            env += f" PYTHONPATH={shlex.quote(source)}"
        # An unreachable server: first paint must not depend on the network.
        ours_cmd = f"cd {tmp} && {env} {smith} --api-url http://127.0.0.1:9/v1"
        bare_cmd = f"{cache} {python} {bare}"
        time_to_screen(bare_cmd, ("Quit",))  # warm the file cache for both
        time_to_screen(ours_cmd, ("Quit", "Smith"))
        ours: list[float] = []
        base: list[float] = []
        for _ in range(args.runs):  # alternating, so the machine's load hits both alike
            ours.append(time_to_screen(ours_cmd, ("Quit", "Smith")))
            base.append(time_to_screen(bare_cmd, ("Quit",)))
    o, b = statistics.median(ours), statistics.median(base)
    print(f"first paint, median of {args.runs} (tmux 160x45)")
    spread = lambda xs: f"{min(xs) * 1000:.0f}–{max(xs) * 1000:.0f}"  # noqa: E731
    print(f"  bare Textual app : {b * 1000:7.0f} ms ({spread(base)})")
    print(
        f"  smith            : {o * 1000:7.0f} ms ({spread(ours)})   ratio {o / b:.2f}x   "
        "(target < 700 ms)"
    )
    emit(
        "first_paint",
        [
            Figure(
                f"first paint of `smith` (tmux 160x45), median of {args.runs}",
                o * 1000,
                "ms",
                f"≤ {RATIO_TARGET}x",
                b * 1000,
                "bare Textual app",
                met=o / b <= RATIO_TARGET,
            )
        ],
    )


if __name__ == "__main__":
    main()
