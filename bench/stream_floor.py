"""What a streamed answer costs below the transcript: the floor under the stream's CPU.

Run ``.venv/bin/python bench/stream_floor.py [--runs 3] [--chars 80000]`` (a few minutes).
The paced stream of ``bench/tui.py stream`` (the 80 KB answer at 800 chunks of 4 characters
a second, tmux 160x50), three ways, alternating, ``--runs`` of each (with ``--tables``,
``bench/reopen.py``'s answer instead: every section a table and three code blocks; with
``--every-block``, the tests' ``sample_markdown(every_block=True)``: every section a table,
a block quote, a rule and a nested list beside its headings, lists and code):

* ``smith``: the real ``smith`` as shipped (what ``bench/tui.py stream`` measures);
* ``lines``: the same ``smith`` with ``bench/stream_floor/sitecustomize.py`` on its
  ``PYTHONPATH``, which shows the streamed answer as plain wrapped lines in one Line-API
  widget (no Markdown block widgets): the cost of everything but the answer's Markdown,
  the best a transcript drawn as lines could do;
* ``before`` (with ``--before DIR``): the ``smith_tui`` of another checkout, run the same
  way (its ``PYTHONPATH`` first): a change measured against what it changed, alternating;
* ``headless``: ``smith -p go`` on the same stream, no screen at all: the engine, the LLM
  client and the text printed (the cost under any front end).

Each prints CPU seconds per second of stream (from the first chunk sent to the last),
RSS after it, and for the two in tmux the latency of a key typed every half second.
``BENCH_SOURCE`` as in ``bench/tui.py``. A diagnostic: its figures are not in the table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import reopen  # noqa: E402
import tui  # noqa: E402

PATCHES = {"lines": ROOT / "stream_floor"}


def run_tmux(
    kind: str, answer: str, workdir: Path, before: Path | None = None
) -> tui.StreamFigures:
    """``smith``, ``lines`` or ``before`` in tmux (``bench/tui.py``'s driver)."""
    extra = {"PYTHONPATH": str(PATCHES[kind])} if kind in PATCHES else {}
    if kind == "before" and before is not None:
        extra = {"PYTHONPATH": str(before)}
    return tui.bench_stream("smith", answer, 200.0, workdir, extra_env=extra, label=kind)


def run_headless(answer: str, workdir: Path) -> tui.StreamFigures:
    """``smith -p go`` on the paced stream; CPU over the stream only (not its start)."""
    server = tui.PacedServer(answer).start()
    db = workdir / f"headless-{time.monotonic_ns()}.db"
    argv = tui.smith_command(workdir, server.url, "--db", str(db), "-p", "go")
    process = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL)
    try:
        while not server.started_at and process.poll() is None:
            time.sleep(0.005)
        before = tui._cpu_seconds(process.pid)
        while not server.finished_at and process.poll() is None:
            time.sleep(0.005)
        cpu = tui._cpu_seconds(process.pid) - before
        rss = tui._rss_mb(process.pid)
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
        server.stop()
    return tui.StreamFigures("headless", server.send_time, None, cpu, rss, [], 0.0)


def every_block_answer(target_chars: int) -> str:
    """The tests' every-block sample (``tests/support/transcript_app.py``), sections added
    until it is about ``target_chars`` long."""
    sys.path.insert(0, str(ROOT.parent))
    from tests.support.transcript_app import sample_markdown

    per_section = len(sample_markdown(10, every_block=True)) / 10
    return sample_markdown(max(1, round(target_chars / per_section)), tui.MARKER, every_block=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chars", type=int, default=80_000)
    parser.add_argument("--before", type=Path, help="a checkout to measure beside this one")
    parser.add_argument(
        "--tables",
        action="store_true",
        help="stream bench/reopen.py's answer (a table and three code blocks per section)",
    )
    parser.add_argument(
        "--every-block",
        action="store_true",
        help="stream an answer with a table, a quote, a rule and a nested list per section",
    )
    args = parser.parse_args(argv)
    if args.every_block:
        answer = every_block_answer(args.chars)
    elif args.tables:
        answer = reopen.realistic_answer(args.chars, tui.MARKER)
    else:
        answer = tui.long_answer(args.chars)
    print(f"answer: {len(answer):,} chars, {tui.RATE:.0f} chunks/s; load {tui._load()}")
    results: dict[str, list[tui.StreamFigures]] = {
        kind: [] for kind in ("smith", "lines", "headless")
    }
    if args.before is not None:
        results = {"before": [], **results}
    with tui._workdir() as tmp:
        for _ in range(args.runs):
            for kind in results:
                if kind == "headless":
                    figures = run_headless(answer, Path(tmp))
                else:
                    figures = run_tmux(kind, answer, Path(tmp), args.before)
                if kind == "headless":
                    line = (
                        f"headless send {figures.send_s:5.1f} s | CPU {figures.cpu_s:5.1f} s "
                        f"({figures.cpu_s / figures.send_s:.2f} of a core) | "
                        f"RSS {figures.rss_mb:.0f} MB"
                    )
                else:
                    line = figures.line()
                print(f"{line}  (load {tui._load()})", flush=True)
                results[kind].append(figures)
    for kind, runs in results.items():
        cpus = sorted(f.cpu_s / f.send_s for f in runs)
        rss = sorted(f.rss_mb for f in runs)
        text = f"{kind:<8} CPU per second of stream {statistics.median(cpus):.2f} "
        text += f"({cpus[0]:.2f}–{cpus[-1]:.2f}), RSS after {statistics.median(rss):.0f} MB"
        p95s = sorted(
            tui._p95([x * 1000 for x in f.latencies if x is not None])
            for f in runs
            if any(x is not None for x in f.latencies)
        )
        if p95s:
            text += f", key p95 {statistics.median(p95s):.0f} ms ({p95s[0]:.0f}–{p95s[-1]:.0f})"
        print(text)
    print(f"load at the end {tui._load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
