"""A long day in one real ``smith``: N scripted turns in tmux, then ``--continue``.

Run with ``.venv/bin/python bench/soak.py [--turns N] [--idle-seconds S]`` (default 1,000
turns: hours; ``--turns 100`` takes a few minutes). One ``smith`` (the installed program,
``permissions.mode = yolo``, its own config and database) runs in tmux (bench/tui.py's
driver) against the scripted Chat-Completions server (tests/support/llm_server.py). Every
turn the model calls ``bash`` (``echo``, sandboxed) and then answers with a few KB of
Markdown holding a heading, a list, a table and a fenced Python block; every 10th turn it
dispatches a worker child that reports back first; half-way the user runs ``/compact``.
Between turns PageUp and PageDown are pressed. Compaction requests (``/compact`` and the
automatic ones when the context window fills: requests without tools) are answered with a
summary outside the script (bench/peers.py's routed server), so they never take a turn's
scripted reply; how many there were is printed.

At turns 10, 100, 500 and 1,000 (those within N, and N itself) it measures, with the
program idle: RSS (``/proc``), CPU over ``--idle-seconds`` of idle (whole process), the
p95 of how long a typed key takes to show in the prompt (20 presses), PageUp's time to
change the screen, and the wall and CPU time per turn over the turns since the previous
checkpoint. Then smith quits and ``smith --continue`` reopens the conversation: the time
from launch until the last answer's marker is on screen. ``BENCH_WORKDIR=dir`` keeps the
program's folder (config, database) there, to reopen or profile it afterwards.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from figures import Figure, emit, load_average  # noqa: E402
from peers import RoutedServer  # noqa: E402
from tui import AppSession, _cpu_seconds, _p95, _rss_mb, _workdir, smith_command  # noqa: E402

from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call  # noqa: E402

CHECKPOINTS = (10, 100, 500, 1000)
DISPATCH_EVERY = 10
PROBE = "¤"
PROBES = 20
CONFIG = '{"permissions": {"mode": "yolo"}}'
DISPATCH = {
    "target_role": "worker",
    "task": "Check the loader and report",
    "context": {"user_request_summary": "The user wants the loader checked.", "role_instructions": "Read only."},
}  # fmt: skip


def marker(turn: int) -> str:
    """The text that ends turn ``turn``'s answer (seen on screen: the turn is shown)."""
    return f"END-{turn:05d}-OF-TURN"


def answer(turn: int) -> str:
    """A realistic answer of a few KB: heading, prose, list, table, code block."""
    rows = "\n".join(f"| `step_{turn}_{i}` | {i * 7} ms | ok |" for i in range(8))
    code = "\n".join(
        f"def load_{turn}_{i}(path: str) -> dict[str, object]:\n"
        f"    with open(path, encoding='utf-8') as handle:\n"
        f"        return validate(parse(handle.read()), step={i})\n"
        for i in range(6)
    )
    return (
        f"## Turn {turn}: what the loader does\n\n"
        f"The loader of turn {turn} reads `config_{turn}.toml`, checks the **schema** and "
        "returns a frozen mapping, so callers never see a half-built value. This paragraph "
        "is long enough to wrap on a wide terminal, as real answers do.\n\n"
        "- read the file once\n- validate every key\n- report the first error with its line\n\n"
        f"| step | time | state |\n|---|---|---|\n{rows}\n\n"
        f"```python\n{code}```\n\n"
        f"That is all for now. {marker(turn)}\n"
    )


def enqueue_turn(server: ScriptedLLMServer, turn: int) -> None:
    """The replies of one turn: a bash call (a dispatch every 10th turn), then the answer."""
    command = {"command": f"echo turn {turn}"}
    if turn % DISPATCH_EVERY == 0:
        report = {"status": "ok", "summary": f"the loader of turn {turn} is fine"}
        server.enqueue(
            text_reply(tool_calls=[tool_call("dispatch", DISPATCH)]),
            text_reply(tool_calls=[tool_call("bash", command)]),  # the child's own call
            text_reply(tool_calls=[tool_call("report", report)]),
            text_reply(answer(turn), chunk_chars=200),
        )
    else:
        server.enqueue(
            text_reply(tool_calls=[tool_call("bash", command)]),
            text_reply(answer(turn), chunk_chars=200),
        )


@dataclass
class Checkpoint:
    """What was measured at one checkpoint."""

    turn: int
    rss_mb: float
    idle_cpu: float
    key_p95_ms: float
    key_unanswered: int
    page_up_ms: float | None
    turn_wall_s: float
    turn_cpu_s: float

    def line(self) -> str:
        page = f"{self.page_up_ms:.0f} ms" if self.page_up_ms is not None else "no change"
        lost = f" ({self.key_unanswered} unanswered)" if self.key_unanswered else ""
        return (
            f"turn {self.turn:5d}: RSS {self.rss_mb:6.1f} MB | idle CPU {self.idle_cpu:.3f} "
            f"of a core | key p95 {self.key_p95_ms:4.0f} ms{lost} | PageUp {page} | per turn "
            f"{self.turn_wall_s:.2f} s wall, {self.turn_cpu_s:.2f} s CPU"
        )


def key_latencies(app: AppSession, presses: int) -> list[float | None]:
    """Type ``PROBE`` ``presses`` times (waiting for each on screen), then erase them."""
    out: list[float | None] = []
    for _ in range(presses):
        before = app.screen().count(PROBE)
        sent = app.keys("-l", PROBE)
        seen = None
        while time.time() < sent + 3.0:
            if app.screen().count(PROBE) > before:
                seen = time.time() - sent
                break
            time.sleep(0.005)
        out.append(seen)
        time.sleep(0.1)
    for _ in range(presses):
        app.keys("BSpace")
    deadline = time.time() + 10
    while PROBE in app.screen() and time.time() < deadline:
        time.sleep(0.05)
    return out


def process_tree(pid: int) -> list[str]:
    """``pid`` and its descendants: pid, parent, state, kernel wait channel, command line."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    lines: list[str] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        base = Path(f"/proc/{current}")
        try:
            fields = (base / "stat").read_text().rsplit(")", 1)[1].split()
            wchan = (base / "wchan").read_text().strip() or "-"
            argv = (base / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        lines.append(f"{current} ppid={fields[1]} state={fields[0]} wchan={wchan} {argv[:200]}")
        todo.extend(children.get(current, []))
    return lines


def record_stuck(app: AppSession, server: ScriptedLLMServer, turn: int, waited: str) -> None:
    """Write what the app looks like while a turn is stuck (screen, process tree, server)."""
    report = [
        f"turn {turn}: {waited}; server pending={server.pending} at {time.strftime('%H:%M:%S')}",
        f"load {load_average()}",
        "-- process tree --",
        *process_tree(app.pid),
        "-- screen --",
        app.screen(),
    ]
    Path(f"soak-stuck-{turn}.txt").write_text("\n".join(report), encoding="utf-8")
    print(f"turn {turn}: {waited} (details in soak-stuck-{turn}.txt)", flush=True)


STUCK_AFTER_S = 10.0
"""A wait longer than this is recorded (screen, process tree) once, and timed to its end."""


def wait_turn(app: AppSession, server: ScriptedLLMServer, turn: int, timeout_s: float) -> str:
    """Until the server has sent turn ``turn``'s replies and its marker is on screen, then
    until the status line says idle. Returns "" or what went wrong (the run goes on).
    A wait past ``STUCK_AFTER_S`` is recorded with the process tree and timed to its end.
    (PageDown until the marker shows: the transcript stays where the user scrolled it while
    an answer arrives below.)"""
    start = time.time()
    deadline = start + timeout_s
    recorded = False
    while server.pending and time.time() < deadline:
        if not recorded and time.time() - start > STUCK_AFTER_S:
            record_stuck(app, server, turn, f"{server.pending} replies not yet asked for")
            recorded = True
        time.sleep(0.02)
    if server.pending:
        return f"turn {turn}: {server.pending} replies not asked for within {timeout_s:.0f} s"
    while True:
        try:
            app.wait_for(marker(turn), timeout_s=2.0, every_s=0.05)
            break
        except TimeoutError:
            if time.time() > deadline:
                return f"turn {turn}: its answer not on screen within {timeout_s:.0f} s"
            app.keys("PageDown")
    shown = time.time()
    try:
        app.wait_for("● idle", timeout_s=STUCK_AFTER_S, every_s=0.05)
    except TimeoutError:
        record_stuck(
            app, server, turn, f"answer on screen, status not idle {STUCK_AFTER_S:.0f} s on"
        )
        try:
            idle_at = app.wait_for(
                "● idle", timeout_s=max(1.0, deadline - time.time()), every_s=0.1
            )
        except TimeoutError:
            return f"turn {turn}: answer on screen, status line not idle within {timeout_s:.0f} s"
        return f"turn {turn}: status line idle only {idle_at - shown:.1f} s after the answer showed"
    if recorded:
        return f"turn {turn}: replies asked for only after more than {STUCK_AFTER_S:.0f} s"
    return ""


def wait_compacted(app: AppSession, timeout_s: float) -> None:
    """Until ``/compact``'s notice is on screen (End when it is not: the view may be a row
    short of the bottom after PageUp/PageDown, and then does not follow new lines)."""
    deadline = time.time() + timeout_s
    while True:
        try:
            app.wait_for("compacted", timeout_s=5.0, every_s=0.05)
            return
        except TimeoutError:
            if time.time() > deadline:
                raise
            app.keys("End")


def run(turns: int, idle_s: float, timeout_s: float) -> tuple[list[Checkpoint], float | None]:
    """Run the soak; returns the checkpoints and the ``--continue`` time (None: not seen).
    Each turn's wall, CPU and RSS go to ``soak-turns.tsv`` in the current folder."""
    turn_log = Path("soak-turns.tsv")
    turn_log.write_text("turn\twall_s\tcpu_s\trss_mb\tload1\n", encoding="utf-8")
    wanted = sorted({c for c in CHECKPOINTS if c <= turns} | {turns})
    compact_at = max(2, turns // 2)
    done: list[Checkpoint] = []
    problems: list[str] = []
    with (
        _workdir() as tmp,
        RoutedServer(
            lambda body: not body.get("tools"),
            side_reply="Summary: the user checks loaders.",
            default_reply="unexpected request",
        ) as server,
    ):
        work = Path(tmp)
        (work / "project").mkdir()
        config = work / "soak.json"
        config.write_text(CONFIG, encoding="utf-8")
        db = work / "soak.db"
        argv = smith_command(work, server.base_url, "--db", str(db), "--config", str(config))
        app = AppSession.start(argv, work / "project", "soak")
        try:
            app.wait_for("no tool calls yet", "Quit", timeout_s=timeout_s)
            since_wall, since_cpu, since_turn = time.time(), _cpu_seconds(app.pid), 0
            for turn in range(1, turns + 1):
                if turn == compact_at:
                    app.keys("-l", "/compact")
                    app.keys("Enter")
                    wait_compacted(app, timeout_s)
                turn_from, turn_cpu_from = time.time(), _cpu_seconds(app.pid)
                enqueue_turn(server, turn)
                app.keys("-l", f"question {turn}: check the loader")
                app.keys("Enter")
                problem = wait_turn(app, server, turn, timeout_s)
                if problem:
                    problems.append(problem)
                    Path(f"soak-screen-{turn}.txt").write_text(app.screen(), encoding="utf-8")
                    print(f"{problem} (screen in soak-screen-{turn}.txt)", flush=True)
                app.keys("PageUp")
                app.keys("PageDown")
                now, cpu_now = time.time(), _cpu_seconds(app.pid)
                with turn_log.open("a", encoding="utf-8") as log:
                    log.write(
                        f"{turn}\t{now - turn_from:.2f}\t{cpu_now - turn_cpu_from:.2f}"
                        f"\t{_rss_mb(app.pid):.1f}\t{load_average()[:1]}\n"
                    )
                if turn not in wanted:
                    continue
                wall = (time.time() - since_wall) / (turn - since_turn)
                cpu = (_cpu_seconds(app.pid) - since_cpu) / (turn - since_turn)
                time.sleep(2.0)  # the last paint and the panes settle
                idle_from, idle_cpu_from = time.time(), _cpu_seconds(app.pid)
                time.sleep(idle_s)
                idle = (_cpu_seconds(app.pid) - idle_cpu_from) / (time.time() - idle_from)
                keys = key_latencies(app, PROBES)
                answered = [x * 1000 for x in keys if x is not None]
                page_up = app.change_after("PageUp")
                app.keys("End")
                point = Checkpoint(
                    turn=turn,
                    rss_mb=_rss_mb(app.pid),
                    idle_cpu=idle,
                    key_p95_ms=_p95(answered) if answered else float("nan"),
                    key_unanswered=len(keys) - len(answered),
                    page_up_ms=None if page_up is None else page_up * 1000,
                    turn_wall_s=wall,
                    turn_cpu_s=cpu,
                )
                print(
                    point.line(),
                    f"(load {load_average()}; {server.side_requests} compactions so far)",
                    flush=True,
                )
                done.append(point)
                since_wall, since_cpu, since_turn = time.time(), _cpu_seconds(app.pid), turn
            app.keys("C-q")
            deadline = time.time() + 20
            while os.path.exists(f"/proc/{app.pid}") and time.time() < deadline:
                time.sleep(0.05)
        finally:
            app.stop()
        again = AppSession.start([*argv, "--continue"], work / "project", "soakcont")
        try:
            seen = again.wait_for(marker(turns), timeout_s=timeout_s, every_s=0.01)
            reopened: float | None = seen - again.started
        except TimeoutError:
            reopened = None
        finally:
            again.stop()
        size = db.stat().st_size / 2**20
        print(f"--continue: last answer on screen after {reopened} s; database {size:.1f} MB")
        print(f"{len(problems)} turns with a problem: {problems[:5]}")
    return done, reopened


def figures(
    turns: int, done: list[Checkpoint], reopened: float | None, idle_s: float
) -> list[Figure]:
    """The table rows: growth and flatness from turn 100 (the first checkpoint when the run
    is shorter) to the last checkpoint; idle CPU at the worst one."""
    first = next((c for c in done if c.turn == 100 and c is not done[-1]), done[0])
    last = done[-1]
    span = f"turn {first.turn} → {last.turn} of {turns}"
    idle = max(c.idle_cpu for c in done)
    rows = [
        Figure(
            f"soak, RSS growth ({span})",
            last.rss_mb - first.rss_mb,
            "MB",
            "≤ 20 MB (turn 100 → 1,000)",
            first.rss_mb,
            f"RSS at turn {first.turn}",
            ratio=last.rss_mb / first.rss_mb,
            met=last.rss_mb - first.rss_mb <= 20,
        ),
        Figure(
            f"soak, idle CPU over {idle_s:.0f} s after a turn, worst of turns "
            + ", ".join(str(c.turn) for c in done),
            idle,
            "cores",
            "≤ 0.01",
            met=idle <= 0.01,
        ),
        Figure(
            f"soak, typed key p95 ({span})",
            last.key_p95_ms,
            "ms",
            "flat (within 20 %)",
            first.key_p95_ms,
            f"turn {first.turn}",
            met=last.key_p95_ms <= 1.2 * first.key_p95_ms and not last.key_unanswered,
        ),
        Figure(
            f"soak, CPU per turn ({span})",
            last.turn_cpu_s,
            "s",
            "flat (within 20 %)",
            first.turn_cpu_s,
            f"turn {first.turn}",
            met=last.turn_cpu_s <= 1.2 * first.turn_cpu_s,
        ),
    ]
    if reopened is not None:
        rows.append(
            Figure(
                f"soak, `--continue` after {turns} turns: launch → last answer on screen",
                reopened,
                "s",
                "≤ 1.0 s",
                met=reopened <= 1.0,
            )
        )
    return rows


def main() -> None:
    """Run the soak, print the checkpoints and the figures line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="per wait (seconds)")
    args = parser.parse_args()
    load_before = load_average()
    print(
        f"soak: {args.turns} turns, idle {args.idle_seconds:.0f} s per checkpoint, load {load_before}"
    )
    done, reopened = run(args.turns, args.idle_seconds, args.timeout)
    per = [c.turn_wall_s for c in done]
    print(f"wall per turn median {statistics.median(per):.2f} s; load at the end {load_average()}")
    emit("soak", figures(args.turns, done, reopened, args.idle_seconds), turns=args.turns)


if __name__ == "__main__":
    main()
