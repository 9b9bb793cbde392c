"""Reopening stored conversations of realistic content in the real ``smith`` (tmux).

Run ``.venv/bin/python bench/reopen.py [--runs N] [--messages N] [--only continue|resume]``
(a few minutes). Every stored answer holds what real answers hold: a heading, prose, a
list, a table and fenced code blocks (Python, shell, TOML), and every round a tool call
with its result. Each open is the installed ``smith`` in its own tmux session (160x50),
its own config and database, watched with ``capture-pane`` (bench/tui.py's driver);
opens alternate with the same program opening an empty database, so both see the load:

* ``continue``: a conversation of 12 rounds whose last answer is 30 KB, opened with
  ``smith --continue``: launch until the answer's last line is on screen; RSS then.
* ``resume``: 20,000 messages (5,000 rounds), opened with ``smith --resume ID``: launch
  until the last answer's last line is on screen; then ``Home`` (the top of the loaded
  page) and ``End`` (timed until the last line is back), and F4 (timed until the status
  line shows the next permission mode); then ``Home`` timed until the conversation's first
  question is on screen (given up after 10 s: a Home that mounts every page above takes
  minutes), each followed by ``End``.
* the empty open: launch until the status line and panes are in and the prompt takes
  keys; RSS then is the RSS before the first prompt.

Medians and min-max of ``--runs`` (default 3). ``BENCH_SOURCE`` as in bench/tui.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))
if os.environ.get("BENCH_SOURCE"):  # its store writes the databases (its schema version)
    sys.path.insert(0, os.environ["BENCH_SOURCE"])

from figures import Figure, emit  # noqa: E402
from tui import AppSession, _cpu_seconds, _load, _rss_mb, smith_command  # noqa: E402

LAST = "END-OF-LAST-ANSWER-51C2"
FIRST = "Question 0:"  # the conversation's first message
HOME_GIVE_UP_S = 10.0
READY = ("no tool calls yet", "Quit")  # the runtime is open and the panes are in


def _section(n: int) -> str:
    """One section of an answer: heading, prose, list, table, three code blocks."""
    return (
        f"## {n}. Reading the settings, step {n}\n\n"
        f"Step {n} changes `settings_{n}.py`: the loader reads the file once, checks each "
        "key against the **schema** and returns a frozen mapping, so no caller sees a "
        "half-built value. This paragraph is long enough to wrap on a wide terminal.\n\n"
        f"- read `config_{n}.toml` once\n- validate every key\n- report the first error\n\n"
        "| key | type | default |\n|---|---|---|\n"
        f"| `timeout_{n}` | float | `{n}.5` |\n| `retries` | int | `3` |\n"
        '| `mode` | str | `"auto"` |\n\n'
        "```python\n"
        f"def load_{n}(path: str) -> Mapping[str, object]:\n"
        "    with open(path, encoding='utf-8') as handle:\n"
        "        data = tomllib.loads(handle.read())\n"
        f"    return freeze(validate(data, step={n}))\n"
        "```\n\n"
        f"```bash\npytest -q tests/test_settings_{n}.py && git commit -am 'step {n}'\n```\n\n"
        f'```toml\n[settings]\ntimeout_{n} = {n}.5\nmode = "auto"\n```\n\n'
    )


def realistic_answer(target_chars: int, marker: str = "") -> str:
    """A Markdown answer of about ``target_chars`` made of :func:`_section` s."""
    parts: list[str] = []
    size = n = 0
    while size < target_chars:
        n += 1
        parts.append(_section(n))
        size += len(parts[-1])
    parts.append(f"That is the whole change. {marker}\n")
    return "".join(parts)


def _round(turn: int, answer: str) -> list[dict[str, Any]]:
    """One stored round: the question, a tool call, its result and the answer."""
    call_id = f"call_{turn}"
    arguments = f'{{"command": "grep -rn settings_{turn} src"}}'
    return [
        {"role": "user", "content": f"Question {turn}: what does step {turn} change?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "bash", "arguments": arguments},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": call_id,
            "name": "bash",
            "content": "\n".join(f"src/settings_{turn}.py:{i}: timeout" for i in range(1, 9)),
            "metadata": {"ok": True, "duration_s": 0.12},
        },
        {"role": "assistant", "content": answer},
    ]


def conversation(rounds: int, last_chars: int, marker: str) -> list[dict[str, Any]]:
    """``rounds`` rounds of ~1.3 KB answers; the last answer about ``last_chars``."""
    out: list[dict[str, Any]] = []
    for turn in range(rounds - 1):
        out += _round(turn, realistic_answer(1000))
    out += _round(rounds - 1, realistic_answer(last_chars, marker))
    return out


def store_conversation(db: Path, workdir: Path, messages: list[dict[str, Any]]) -> str:
    """Store ``messages`` as one conversation of ``workdir``'s project; return its id."""
    from smith_tui.store import Store
    from smith_tui.store.project_identity import discover_project

    store = Store.open(db)
    try:
        project = discover_project(workdir).project_id
        conversation_id = store.conversations.create(project, "reopen bench")
        for start in range(0, len(messages), 2000):
            store.conversations.append_messages(conversation_id, messages[start : start + 2000])
        return conversation_id
    finally:
        store.close()


def _open(argv: list[str], workdir: Path, words: tuple[str, ...]) -> tuple[float, float, float]:
    """Seconds from launch until all ``words`` are on screen, the RSS (MB) and the CPU
    seconds the process used by then (less bent by the machine's load than the wall)."""
    app = AppSession.start(argv, workdir, "reopen")
    try:
        seen = app.wait_for(*words, timeout_s=60.0, every_s=0.005) - app.started
        return seen, _rss_mb(app.pid), _cpu_seconds(app.pid)
    finally:
        app.stop()


def _until(app: AppSession, keys: tuple[str, ...], check: Any, timeout_s: float = 5.0) -> float:
    """Send ``keys``; seconds until ``check(screen)`` holds (``nan`` when it does not)."""
    sent = app.keys(*keys)
    deadline = sent + timeout_s
    while time.time() < deadline:
        if check(app.screen()):
            return time.time() - sent
        time.sleep(0.003)
    return float("nan")


def _spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    lo, hi = min(values) * scale, max(values) * scale
    fmt = "{:.0f}" if unit == "ms" else "{:.2f}"
    return f"median {fmt.format(statistics.median(values) * scale)} {unit}, " + (
        f"{fmt.format(lo)}–{fmt.format(hi)} {unit}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--only", choices=("continue", "resume"))
    args = parser.parse_args(argv)
    rows: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="smith-reopen-") as tmp:
        workdir = Path(tmp)
        dummy = "http://127.0.0.1:9/v1"  # nothing is asked of the model
        cont_db, resume_db = workdir / "continue.db", workdir / "resume.db"
        store_conversation(cont_db, workdir, conversation(12, 30_000, LAST))
        resume_id = store_conversation(
            resume_db, workdir, conversation(max(1, args.messages // 4), 1300, LAST)
        )

        def empty(run: int) -> list[str]:
            return smith_command(workdir, dummy, "--db", str(workdir / f"empty{run}.db"))

        cont = smith_command(workdir, dummy, "--db", str(cont_db), "--continue")
        resume = smith_command(workdir, dummy, "--db", str(resume_db), "--resume", resume_id)
        _open(empty(-1), workdir, READY)  # warm the file cache and the bytecode
        empties: list[float] = []
        empty_rss: list[float] = []
        empty_cpu: list[float] = []
        opens: dict[str, list[tuple[float, float, float]]] = {"continue": [], "resume": []}
        kinds = [args.only] if args.only else ["continue", "resume"]
        for kind in kinds:
            _open(cont if kind == "continue" else resume, workdir, (LAST,))  # warm
        for run in range(args.runs):  # alternating, so all see the same load
            seen, rss, cpu = _open(empty(run), workdir, READY)
            empties.append(seen)
            empty_rss.append(rss)
            empty_cpu.append(cpu)
            for kind in kinds:
                opens[kind].append(_open(cont if kind == "continue" else resume, workdir, (LAST,)))
        empty_s = statistics.median(empties)
        load = _load()
        print(f"reopen, {args.runs} runs each, load {load}")
        print(
            f"  empty database: ready after {_spread(empties)}; RSS {_spread(empty_rss, 1, 'MB')}"
            f"; CPU by then {_spread(empty_cpu)}"
        )
        rows.append(
            Figure(
                f"RSS before the first prompt (empty database, median of {args.runs})",
                statistics.median(empty_rss),
                "MB",
                "≤ 60 MB",
                met=statistics.median(empty_rss) <= 60,
            )
        )
        for kind in kinds:
            times = [t for t, _, _ in opens[kind]]
            median = statistics.median(times)
            label = (
                "`smith --continue` of 12 rounds ending in a 30 KB answer"
                if kind == "continue"
                else f"`smith --resume` of {args.messages:,} realistic messages"
            )
            print(
                f"  {kind}: last line on screen after {_spread(times)} "
                f"({median / empty_s:.2f}x the empty open); "
                f"RSS {_spread([r for _, r, _ in opens[kind]], 1, 'MB')}; "
                f"CPU by then {_spread([c for _, _, c in opens[kind]])}"
            )
            target = "≤ 1.0 s" if kind == "continue" else "≤ 1.3x, ≤ 1.0 s"
            met = median <= 1.0 and (kind == "continue" or median / empty_s <= 1.3)
            rows.append(
                Figure(
                    f"{label}: launch → last line on screen "
                    f"(median of {args.runs}, {min(times):.2f}–{max(times):.2f} s)",
                    median,
                    "s",
                    target,
                    empty_s,
                    "same app, empty database: ready",
                    met=met,
                )
            )
        if "resume" in kinds:
            rows += _keys(resume, workdir, args.runs)
        emit("reopen", rows)
    return 0


def _keys(resume: list[str], workdir: Path, runs: int) -> list[Figure]:
    """Home → End and F4 → status line in the reopened long conversation."""
    ends: list[float] = []
    modes: list[float] = []
    app = AppSession.start(resume, workdir, "keys")
    try:
        app.wait_for(LAST, "Quit", timeout_s=60.0)
        time.sleep(1.0)
        for _ in range(max(runs, 5)):
            _until(app, ("Home",), lambda s: LAST not in s)
            time.sleep(0.3)
            ends.append(_until(app, ("End",), lambda s: LAST in s))
            time.sleep(0.3)
            before = _status(app.screen())
            modes.append(_until(app, ("F4",), lambda s, b=before: _status(s) != b))
            time.sleep(0.3)
        homes = []
        for _ in range(max(runs, 5)):
            homes.append(_until(app, ("Home",), lambda s: FIRST in s, HOME_GIVE_UP_S))
            time.sleep(0.3)
            _until(app, ("End",), lambda s: LAST in s)
            time.sleep(0.3)
    finally:
        app.stop()
    print(f"  End after Home: last line back after {_spread(ends, 1000, 'ms')}")
    print(f"  F4: status line changed after {_spread(modes, 1000, 'ms')}")
    shown = [h for h in homes if h == h]  # (nan: not within HOME_GIVE_UP_S)
    given_up = len(homes) - len(shown)
    print(
        f"  Home: first message on screen after {_spread(shown, 1000, 'ms') if shown else '-'}"
        f"{f'; not within {HOME_GIVE_UP_S:.0f} s {given_up} of {len(homes)} times' if given_up else ''}"
    )
    end_ms, mode_ms = statistics.median(ends) * 1000, statistics.median(modes) * 1000
    return [
        Figure(
            f"`End` after `Home`, long reopened conversation (median of {len(ends)}, "
            f"{min(ends) * 1000:.0f}–{max(ends) * 1000:.0f} ms)",
            end_ms,
            "ms",
            "≤ 150 ms",
            met=end_ms <= 150,
        ),
        Figure(
            f"`Home` → the first message on screen, long reopened conversation (median of "
            f"{len(shown)}"
            + (f", {min(shown) * 1000:.0f}–{max(shown) * 1000:.0f} ms" if shown else "")
            + (
                f"; not within {HOME_GIVE_UP_S:.0f} s {given_up} of {len(homes)} times)"
                if given_up
                else ")"
            ),
            statistics.median(shown) * 1000 if shown else None,
            "ms",
        ),
        Figure(
            f"F4 → status line shows the next mode (median of {len(modes)}, "
            f"{min(modes) * 1000:.0f}–{max(modes) * 1000:.0f} ms)",
            mode_ms,
            "ms",
            "≤ 100 ms",
            met=mode_ms <= 100,
        ),
    ]


def _status(screen: str) -> str:
    """The status line of ``screen`` (the line naming the permission mode)."""
    lines = [line for line in screen.splitlines() if "idle" in line or "mode" in line]
    return lines[-1] if lines else ""


if __name__ == "__main__":
    raise SystemExit(main())
