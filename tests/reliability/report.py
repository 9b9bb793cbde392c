"""Render the reliability suite's results file as docs/RELIABILITY.md.

Usage (the document is only ever made this way, never edited by hand)::

    SMITH_RELIABILITY_FULL=1 SMITH_RELIABILITY_REPORT=/tmp/reliability.json \\
        .venv/bin/pytest -p no:randomly tests/reliability
    SMITH_RELIABILITY_REPORT=/tmp/reliability-ci.json .venv/bin/pytest -p no:randomly tests/reliability
    .venv/bin/python -m tests.reliability.report /tmp/reliability.json \\
        --ci /tmp/reliability-ci.json > docs/RELIABILITY.md

``--ci`` adds the duration of the quick run (what the test suite runs) to the summary.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REGENERATE = (
    "SMITH_RELIABILITY_FULL=1 SMITH_RELIABILITY_REPORT=/tmp/reliability.json "
    ".venv/bin/pytest -p no:randomly tests/reliability\n"
    "SMITH_RELIABILITY_REPORT=/tmp/reliability-ci.json "
    ".venv/bin/pytest -p no:randomly tests/reliability\n"
    ".venv/bin/python -m tests.reliability.report /tmp/reliability.json "
    "--ci /tmp/reliability-ci.json > docs/RELIABILITY.md"
)


_TMP = re.compile(r"/tmp/pytest-of-[^/\s]+/pytest-\d+/[^/\s]+")


def cell(value: Any) -> str:
    """One table cell: a single line, pipes escaped, pytest's temporary folders as ``<tmp>``."""
    text = "" if value is None else str(value)
    return _TMP.sub("<tmp>", " ".join(text.split())).replace("|", "\\|")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out


def verdict(row: Mapping[str, Any]) -> str:
    """pass / FAIL / pending (known, worked on) / skipped."""
    if row.get("passed") is None:
        return "skipped"
    if row.get("passed"):
        return "pass"
    return f"pending: {row['pending']}" if row.get("pending") else "FAIL"


def _faults(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    failed = [r for r in rows if not r.get("passed")]
    out = [
        "## Fault matrix",
        "",
        f"{len({r['fault'] for r in rows})} faults, {len(rows)} runs "
        f"({', '.join(f'{n} {via}' for via, n in Counter(r['via'] for r in rows).items())}), "
        f"{len(rows) - len(failed)} as expected. Retries use the default counts "
        "(2 transport retries, 2 empty-response retries) with the suite's short backoffs. "
        "*Requests* is what the server saw (connection attempts when nothing listens); "
        "*transcript* is the strict-provider check of the stored conversation followed by the "
        "next user message.",
        "",
    ]
    out += table(
        ("fault", "run", "expected", "requests", "stop", "exit", "the user sees", "transcript", ""),
        (
            (
                r["fault"],
                r["via"],
                r["expected"],
                r["requests"],
                r["stop"],
                "" if r.get("exit_code") is None else r["exit_code"],
                r["shown"],
                r["strict"],
                verdict(r),
            )
            for r in rows
        ),
    )
    return [*out, ""]


def _crash(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    out = [
        "## Crash loop",
        "",
        "The real `smith -p` runs a four-round turn (text and `bash`, a `dispatch` to a worker "
        "that runs `bash` and reports, text and `bash`, the answer), streamed in small delayed "
        "pieces, and gets the signal at a random moment (seeded; *kill point* is the last "
        "request the server had seen, *after exit* a signal that came after the turn had "
        "ended). Then `smith -p --continue` runs. Every run checks: the "
        "database opens; every round the turn had finished is stored exactly once with its "
        "result; after `--continue` no tool call is left unanswered and the request it sends "
        "passes the strict check. SIGTERM runs also check that the process exits by itself, "
        "non-zero, with the turn stored as cancelled and the text the user saw stored.",
        "",
    ]
    out += table(
        ("signal", "runs", "seed", "kill points", "exit codes", "failures"),
        (
            (
                r["signal"],
                r["runs"],
                r["seed"],
                ", ".join(f"{k}: {v}" for k, v in r["kill_points"].items()),
                ", ".join(f"{k}: {v}" for k, v in r["exit_codes"].items()),
                r["failures"],
            )
            for r in rows
        ),
    )
    for r in rows:
        for detail in r.get("failure_details") or []:
            out.append(f"- {r['signal']}: {cell(detail)}")
    return [*out, ""]


def _bad_input(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    kinds = Counter(
        r["kind"].split()[0] if r["kind"].startswith("tool") else r["kind"] for r in rows
    )
    passed = sum(1 for r in rows if r.get("passed"))
    out = [
        "## Bad input",
        "",
        f"{len(rows)} inputs ({', '.join(f'{n} {k}' for k, n in kinds.items())}); "
        f"{passed} answered as expected. Each must give a message without a traceback that "
        "names what to fix (exit code 2 for `smith`), and leave everything as it was: the "
        "database and config files byte for byte, the stored `/config` overrides, the "
        "project's files, notes and memory.",
        "",
    ]
    out += table(
        ("kind", "input", "expected", "observed", ""),
        ((r["kind"], r["input"], r["expected"], r["observed"], verdict(r)) for r in rows),
    )
    return [*out, ""]


def _crash_runs(data: Mapping[str, Any]) -> int:
    return sum(r.get("runs", 0) for r in data.get("rows") or [] if r["section"] == "crash")


def render(data: Mapping[str, Any], ci: Mapping[str, Any] | None = None) -> str:
    """The whole document (``ci``: the results of a quick run, for its duration)."""
    rows = data.get("rows") or []
    by = {
        name: [r for r in rows if r["section"] == name] for name in ("fault", "crash", "bad_input")
    }
    failed = [r for r in rows if r.get("passed") is False and not r.get("pending")]
    pending = [r for r in rows if r.get("passed") is False and r.get("pending")]
    lines = [
        "# Reliability",
        "",
        "<!-- Generated by tests/reliability/report.py from the suite's results; do not edit. -->",
        "",
        "What Smith does when the server, the process or the input goes wrong, measured by "
        "`tests/reliability/` (the scripted Chat-Completions server, the real `smith` binary "
        "and SQLite file, Textual Pilot for the app). Every figure below comes from the run "
        f"of {data.get('generated_at')} (Python {data.get('python')}, "
        f"{'full crash loop' if data.get('full') else 'quick crash loop'}, "
        f"{data.get('duration_s')} s): {len(rows)} checks, {len(failed)} failed, "
        f"{len(pending)} known issue{'s' * (len(pending) != 1)} marked *pending*.",
        "",
    ]
    if ci is not None:
        ci_failed = sum(
            1 for r in ci.get("rows") or [] if r.get("passed") is False and not r.get("pending")
        )
        lines += [
            f"The quick run that `pytest tests/reliability` makes by default (the crash loop "
            f"cut to {_crash_runs(ci)} runs) took {ci.get('duration_s')} s on "
            f"{ci.get('generated_at')}, with {ci_failed} failed.",
            "",
        ]
    lines += [
        "Regenerate:",
        "",
        "```sh",
        REGENERATE,
        "```",
        "",
    ]
    lines += _faults(by["fault"])
    lines += _crash(by["crash"])
    lines += _bad_input(by["bad_input"])
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.reliability.report RESULTS.json [-o OUT.md]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="the JSON file SMITH_RELIABILITY_REPORT wrote")
    parser.add_argument("--ci", help="results of the quick run, for its duration")
    parser.add_argument("-o", "--output", help="write here instead of stdout")
    args = parser.parse_args(argv)
    loaded = []
    for path in (args.results, args.ci):
        if path is None:
            loaded.append(None)
            continue
        try:
            loaded.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"report: cannot read {path}: {exc}\n")
            return 2
    text = render(loaded[0], loaded[1])
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
