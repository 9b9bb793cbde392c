"""Helpers of the reliability suite: running ``smith -p`` (in process or as the real binary),
reading what it left in the database, and the results file docs/RELIABILITY.md is made from.

Results: every check calls :func:`record` with what was expected and what was observed. When
``SMITH_RELIABILITY_REPORT=PATH`` is set, the rows are written to PATH as JSON at the end of
the session (``tests/reliability/report.py`` renders them as Markdown).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smith_tui import cli
from smith_tui.store import Store
from tests.support.smith_cli import run_smith

FULL = os.environ.get("SMITH_RELIABILITY_FULL", "") not in ("", "0")
"""The full crash loop (50 runs of each signal) instead of the quick CI count."""

REPORT_PATH = os.environ.get("SMITH_RELIABILITY_REPORT") or None

FAST_CONFIG: dict[str, Any] = {
    "llm_config": {
        "retry_backoff_ms": [10, 20],
        "stream_stall_timeout": 5,
        "connect_timeout": 2,
        "recv_timeout": 5,
    },
    "empty_response_retry_backoff_ms": [10, 20],
}
"""Short backoffs and timeouts so a fault costs milliseconds (retry counts stay the defaults)."""

ROWS: list[dict[str, Any]] = []
META: dict[str, Any] = {}


def record(section: str, **fields: Any) -> None:
    """Keep one result row (``fault``/``input``, ``expected``, ``observed``, ``pass``, ...)."""
    ROWS.append({"section": section, **fields})


def write_report(path: str | Path, duration_s: float) -> None:
    """Write the collected rows and run facts as JSON."""
    data = {
        "generated_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "full": FULL,
        "duration_s": round(duration_s, 1),
        "python": sys.version.split()[0],
        "meta": META,
        "rows": ROWS,
    }
    Path(path).write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")


def merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, one level of nested dicts deep."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def write_config(tmp_path: Path, extra: Mapping[str, Any] | None = None) -> Path:
    """The user config file of a run: :data:`FAST_CONFIG` plus ``extra``."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(merge(FAST_CONFIG, extra or {})), encoding="utf-8")
    return path


@dataclass
class CliRun:
    """How one ``smith`` run ended."""

    code: int
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        """The last non-empty line of stderr (where ``smith`` says why it stopped)."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def run_inprocess(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin: str = ""
) -> CliRun:
    """``smith_tui.cli.main(args)`` in this process, as the console script would run it:
    ``cwd`` and ``env`` swapped in for the call, stdout/stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_stdin = dict(os.environ), Path.cwd(), sys.stdin
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.stdin = saved_stdin
    return CliRun(code, out.getvalue(), err.getvalue())


def run_binary(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float = 60
) -> CliRun:
    """The real ``smith`` console script as a subprocess."""
    proc = run_smith(args, cwd=cwd, env=env, timeout=timeout)
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


def turn_stop_reasons(db: Path) -> list[str | None]:
    """The stop reason of every top-level turn in the database, oldest first."""
    with Store.open(db) as store:
        reasons: list[tuple[float, str | None]] = []
        for conv in store.conversations.list_all():
            if conv.parent_id:
                continue
            for turn in store.turns.list_for_conversation(conv.id):
                reasons.append((turn.started_at, turn.stop_reason))
    return [reason for _, reason in sorted(reasons, key=lambda pair: pair[0])]


def has_traceback(*texts: str) -> bool:
    """Whether any output shows a Python traceback."""
    return any("Traceback (most recent call last)" in text for text in texts)
