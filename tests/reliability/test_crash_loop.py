"""Crash loop: kill the real ``smith -p`` at a random moment of a multi-round turn, restart it
with ``--continue``, and check what survived.

The turn has four rounds: text + ``bash``, text + ``dispatch`` (a worker child with a ``bash``
round and its ``report``), text + ``bash``, and a final answer, all streamed in small
delayed pieces so a random moment lands in streaming, in a tool, in the child or between
rounds. After a SIGKILL: the database opens, every round the turn had finished (the server
saw the request that followed it) is stored exactly once, and the ``--continue`` run leaves
no unanswered tool call and sends a request a strict provider accepts. After a SIGTERM
(graceful): the process exits on its own, the turn is stored as cancelled, and the text the
user saw is the text stored.

Quick by default (CI); ``SMITH_RELIABILITY_FULL=1`` runs 50 of each. ``SMITH_CRASH_SEED``
replays a run; the seed is printed.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smith_tui.store import Store
from tests.reliability.support import (
    FULL,
    META,
    has_traceback,
    record,
    run_binary,
    turn_stop_reasons,
    write_config,
)
from tests.support.llm_server import Reply, ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import server_args, smith_env, start_smith
from tests.support.strict import orphan_calls, stored_wire, strict_problems

RUNS = {"SIGKILL": 50 if FULL else 6, "SIGTERM": 50 if FULL else 4}
SEED = int(os.environ.get("SMITH_CRASH_SEED") or random.SystemRandom().randrange(1 << 31))
PROMPT = "crash loop: four rounds please"
ROUND_TEXT = ("Round one starts.", "Round two dispatches.", "Round three checks.")
FINAL = "All four rounds are done."
EVENT_DELAY = 0.01


def _script() -> list[Reply]:
    """The replies of one turn, in the order the server is asked for them."""

    def reply(text: str, *calls: Any) -> Reply:
        return text_reply(text, tool_calls=list(calls), chunk_chars=4, event_delay_s=EVENT_DELAY)

    dispatch = tool_call(
        "dispatch",
        {
            "target_role": "worker",
            "task": "Write the marker file.",
            "context": {
                "user_request_summary": "The crash loop needs a child turn.",
                "role_instructions": "Keep it short.",
            },
        },
        id="call_dispatch",
    )
    return [
        reply(
            ROUND_TEXT[0], tool_call("bash", {"command": "echo r1-out; sleep 0.3"}, id="call_r1")
        ),
        reply(ROUND_TEXT[1], dispatch),
        reply(
            "Child working.", tool_call("bash", {"command": "echo c1-out; sleep 0.2"}, id="call_c1")
        ),
        reply(
            "",
            tool_call("report", {"status": "ok", "summary": "marker written"}, id="call_report"),
        ),
        reply(
            ROUND_TEXT[2], tool_call("bash", {"command": "echo r3-out; sleep 0.3"}, id="call_r3")
        ),
        reply(FINAL),
    ]


def _is_parent(body: dict[str, Any]) -> bool:
    users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
    return bool(users) and users[0] == PROMPT


@dataclass
class Outcome:
    """What one killed run left behind."""

    signal: str
    delay: float
    kill_point: str
    failures: list[str]
    exit_code: int | None = None


def _kill_point(server: ScriptedLLMServer) -> str:
    bodies = server.chat_requests()
    parents = sum(1 for b in bodies if _is_parent(b))
    children = len(bodies) - parents
    if children and parents == 2:
        return f"child request {children}"
    return f"parent request {parents}"


def _smith(args: list[str], tmp: Path, repo: Path, url: str) -> list[str]:
    config = write_config(tmp, {"llm_config": {"stream_stall_timeout": 10}})
    return [*args, *server_args(url, tmp / "smith.db", config)]


def _completed_rounds(server: ScriptedLLMServer) -> int:
    """Top-level rounds whose results were stored: a later parent request carries them."""
    return max(0, sum(1 for b in server.chat_requests() if _is_parent(b)) - 1)


def _count(wire: list[dict[str, Any]], text: str) -> int:
    return sum(1 for m in wire if m.get("role") == "assistant" and m.get("content") == text)


def _round_checks(wire: list[dict[str, Any]], done: int, failures: list[str], when: str) -> None:
    call_ids = ("call_r1", "call_dispatch", "call_r3")
    for index, text in enumerate(ROUND_TEXT):
        stored = _count(wire, text)
        results = sum(1 for m in wire if m.get("tool_call_id") == call_ids[index])
        if index < done and (stored != 1 or results != 1):
            failures.append(
                f"{when}: finished round {index + 1} stored {stored}x with {results} result(s)"
            )
        elif stored > 1 or results > 1:
            failures.append(f"{when}: round {index + 1} stored {stored}x, {results} result(s)")


def _resume_checks(
    tmp: Path, repo: Path, server: ScriptedLLMServer, done: int, failures: list[str]
) -> None:
    """Restart with ``--continue``; the request it sends and the database must be clean."""
    server.clear()
    server.enqueue(text_reply("Resumed fine."))
    run = run_binary(
        _smith(["-p", "are you there?", "--continue"], tmp, repo, server.base_url),
        cwd=repo,
        env=smith_env(tmp),
    )
    if run.code != 0 or run.stdout.strip() != "Resumed fine.":
        failures.append(f"--continue exited {run.code}: {run.stderr.strip()[-300:]}")
    if has_traceback(run.stdout, run.stderr):
        failures.append("--continue printed a traceback")
    bodies = server.chat_requests()
    if len(bodies) != 1:
        failures.append(f"--continue sent {len(bodies)} requests")
    else:
        sent = bodies[0]["messages"]
        if not any(m.get("content") == PROMPT for m in sent):
            failures.append("--continue did not continue the killed conversation")
        problems = strict_problems(sent)
        if problems:
            failures.append("next request refused by a strict provider: " + "; ".join(problems))
    wire = stored_wire(tmp / "smith.db")
    if orphan_calls(wire):
        failures.append(f"orphans after resume: {orphan_calls(wire)}")
    _round_checks(wire, done, failures, "after resume")


def _killpg(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _one_run(kind: str, rng: random.Random, tmp: Path, span: float) -> Outcome:
    repo = make_git_repo(tmp / "repo")
    failures: list[str] = []
    with ScriptedLLMServer() as server:
        server.enqueue(*_script())
        proc = start_smith(
            _smith(["-p", PROMPT], tmp, repo, server.base_url),
            cwd=repo,
            env=smith_env(tmp),
            new_session=True,
        )
        delay = rng.uniform(0, span)
        try:
            server.wait_for_chats(1, timeout=30)
            time.sleep(delay)
            point = _kill_point(server) if proc.poll() is None else "after exit"
            done = _completed_rounds(server)
            if kind == "SIGKILL":
                _killpg(proc.pid)
            else:
                proc.send_signal(signal.SIGTERM)
            try:
                stdout, stderr = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                failures.append(f"{kind}: still running 20 s after the signal")
                _killpg(proc.pid)
                stdout, stderr = proc.communicate()
        finally:
            if proc.poll() is None:
                _killpg(proc.pid)
                proc.communicate()
            _killpg(proc.pid)  # tools the kill orphaned (sleep) are in the same group
        done = max(done, _completed_rounds(server))
        db = tmp / "smith.db"
        try:
            with Store.open(db) as store:
                store.conversations.list_all()
        except Exception as exc:  # the first check: does it open at all
            failures.append(f"database does not open: {exc}")
            return Outcome(kind, delay, point, failures, proc.returncode)
        wire = stored_wire(db)
        _round_checks(wire, done, failures, "after the kill")
        if has_traceback(stdout, stderr):
            failures.append(f"{kind}: traceback printed")
        if kind == "SIGTERM":
            _sigterm_checks(proc.returncode, stdout, wire, db, failures)
        _resume_checks(tmp, repo, server, done, failures)
    return Outcome(kind, delay, point, failures, proc.returncode)


def _squash(text: str) -> str:
    return "".join(text.split())


def _sigterm_checks(
    code: int | None, stdout: str, wire: list[dict[str, Any]], db: Path, failures: list[str]
) -> None:
    stops = turn_stop_reasons(db)
    stop = stops[-1] if stops else None
    stored = "".join(m.get("content") or "" for m in wire if m.get("role") == "assistant")
    if _squash(stdout) != _squash(stored):
        failures.append(f"SIGTERM: shown {stdout.strip()[-80:]!r} but stored {stored[-80:]!r}")
    if stop == "completed":
        # The turn was over: smith exits 0, or - when the signal comes after the event loop
        # (and its handler) is gone, while the interpreter shuts down - dies of it.
        if code not in (0, -signal.SIGTERM):
            failures.append(f"SIGTERM after completion: exit {code}")
        return
    if stop != "cancelled":
        failures.append(f"SIGTERM: turn stored as {stop!r}, expected cancelled")
    if code in (0, None) or (code is not None and code < 0):
        failures.append(f"SIGTERM: exit code {code}, expected a non-zero exit of its own")


def _calibrate(tmp: Path) -> float:
    """Seconds from the first request to the end of the turn, from one uninterrupted run
    (which must pass)."""
    repo = make_git_repo(tmp / "repo")
    with ScriptedLLMServer() as server:
        server.enqueue(*_script())
        proc = start_smith(
            _smith(["-p", PROMPT], tmp, repo, server.base_url), cwd=repo, env=smith_env(tmp)
        )
        server.wait_for_chats(1, timeout=30)
        started = time.monotonic()
        server.wait_for_chats(6, timeout=60)
        # to the last request, plus the time its short answer takes to stream
        span = time.monotonic() - started + len(FINAL) / 4 * EVENT_DELAY
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        assert FINAL in stdout
        assert len(server.chat_requests()) == 6
    wire = stored_wire(tmp / "smith.db")
    assert not strict_problems(wire)
    problems: list[str] = []
    _round_checks(wire, 3, problems, "uninterrupted")
    assert not problems, problems
    return span


@pytest.mark.timeout(1800 if FULL else 120)
@pytest.mark.parametrize("kind", ["SIGKILL", "SIGTERM"])
def test_crash_loop(kind: str, tmp_path: Path) -> None:
    """Kill ``smith -p`` at random moments; every run must leave a resumable database."""
    seed = SEED + (0 if kind == "SIGKILL" else 1)
    print(f"crash loop {kind}: seed {seed} (SMITH_CRASH_SEED={SEED} replays it)")
    rng = random.Random(seed)
    span = _calibrate(tmp_path / "calibrate")
    outcomes = [_one_run(kind, rng, tmp_path / f"run{i}", span) for i in range(RUNS[kind])]
    failed = [o for o in outcomes if o.failures]
    points = Counter(o.kill_point for o in outcomes)
    META.setdefault("crash_loop", {})[kind] = {"seed": seed, "span_s": round(span, 2)}
    record(
        "crash",
        signal=kind,
        runs=len(outcomes),
        seed=seed,
        span_s=round(span, 2),
        kill_points=dict(sorted(points.items())),
        exit_codes=dict(Counter(str(o.exit_code) for o in outcomes)),
        failures=len(failed),
        failure_details=[f"{o.kill_point} after {o.delay:.2f}s: {o.failures}" for o in failed],
        passed=not failed,
    )
    assert not failed, "\n".join(
        f"run after {o.delay:.2f}s ({o.kill_point}): {'; '.join(o.failures)}" for o in failed
    )
